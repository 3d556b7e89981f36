// Drives an MCP server with the official TypeScript SDK client, step by
// step, and prints one JSON report. The Go end-to-end tests write the plan
// and check the report, so the assertions live in one language.
//
// Usage: node client.mjs '<plan JSON>'
//   plan: {"command": "...", "args": [...]} for stdio, or {"url": "..."},
//         "clientName": "...", "steps": [{"op": "list"} |
//         {"op": "call", "name": "...", "arguments": {...}} |
//         {"op": "waitChanged", "count": N, "timeoutMs": 5000} | {"op": "quiet", "ms": 300}]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const plan = JSON.parse(process.argv[2]);
const client = new Client({ name: plan.clientName ?? "toolfold-e2e-ts", version: "1.0.0" });

let changes = 0;
let waiters = [];
client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
  changes++;
  const w = waiters;
  waiters = [];
  for (const resolve of w) resolve();
});

const transport = plan.url
  ? new StreamableHTTPClientTransport(new URL(plan.url))
  : new StdioClientTransport({ command: plan.command, args: plan.args ?? [], stderr: "inherit" });

const report = { serverInfo: null, capabilities: null, steps: [] };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

try {
  await client.connect(transport);
  report.serverInfo = client.getServerVersion();
  report.capabilities = client.getServerCapabilities();
  for (const step of plan.steps) {
    switch (step.op) {
      case "list": {
        const res = await client.listTools();
        report.steps.push({ op: "list", tools: res.tools.map((t) => t.name).sort() });
        break;
      }
      case "call": {
        const res = await client.callTool({ name: step.name, arguments: step.arguments ?? {} });
        const text = (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
        report.steps.push({ op: "call", name: step.name, isError: !!res.isError, text, structured: res.structuredContent ?? null });
        break;
      }
      case "waitChanged": {
        // Wait until the server has sent `count` list_changed notifications
        // in all, or the time is up; the report says how many arrived.
        const deadline = Date.now() + (step.timeoutMs ?? 5000);
        while (changes < step.count && Date.now() < deadline) {
          await Promise.race([new Promise((r) => waiters.push(r)), sleep(deadline - Date.now())]);
        }
        report.steps.push({ op: "waitChanged", changes });
        break;
      }
      case "quiet": {
        await sleep(step.ms ?? 300);
        report.steps.push({ op: "quiet", changes });
        break;
      }
      default:
        throw new Error(`unknown step ${step.op}`);
    }
  }
} catch (err) {
  report.error = String(err?.stack ?? err);
} finally {
  await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(report) + "\n");
