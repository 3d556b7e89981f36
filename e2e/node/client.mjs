// Drives an MCP server with the official TypeScript SDK client, step by
// step, and prints one JSON report. The Go end-to-end tests write the plan
// and check the report, so the assertions live in one language.
//
// Usage: node client.mjs '<plan JSON>'
//   plan: {"command": "...", "args": [...]} for stdio, or {"url": "..."},
//         "clientName": "...", "steps": [{"op": "list"} |
//         {"op": "call", "name": "...", "arguments": {...}} |
//         {"op": "waitChanged", "count": N, "timeoutMs": 5000} | {"op": "quiet", "ms": 300} |
//         {"op": "request", "method": "...", "params": {...}}],
//   "extension": true to declare the grouping extension (io.modelcontextprotocol/grouping),
//   "protocol": "2026-07-28" to speak that protocol: no initialize; every request
//         carries protocolVersion, clientInfo and clientCapabilities in its _meta.
//         The SDK client does not speak it yet, so its transports carry the
//         messages and this script matches the responses.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResultSchema, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const plan = JSON.parse(process.argv[2]);
const clientInfo = { name: plan.clientName ?? "toolfold-e2e-ts", version: "1.0.0" };
const capabilities = plan.extension ? { extensions: { "io.modelcontextprotocol/grouping": {} } } : {};
const client = new Client(clientInfo, { capabilities });
const modern = plan.protocol === "2026-07-28";

let changes = 0;
let waiters = [];
client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
  changes++;
  const w = waiters;
  waiters = [];
  for (const resolve of w) resolve();
});

// On 2026-07-28 every POST names its method (and a call its tool) in
// headers, which this SDK version does not set yet.
const withMethodHeaders = (url, init) => {
  if (modern && init?.method === "POST" && typeof init.body === "string") {
    const msg = JSON.parse(init.body);
    const headers = new Headers(init.headers);
    if (msg.method) headers.set("Mcp-Method", msg.method);
    if (msg.params?.name && msg.method === "tools/call") headers.set("Mcp-Name", msg.params.name);
    init = { ...init, headers };
  }
  return fetch(url, init);
};

const transport = plan.url
  ? new StreamableHTTPClientTransport(new URL(plan.url), { fetch: withMethodHeaders })
  : new StdioClientTransport({ command: plan.command, args: plan.args ?? [], stderr: "inherit" });

const report = { serverInfo: null, capabilities: null, steps: [] };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// rpc sends one request: through the SDK client's session, or on
// 2026-07-28 as a self-contained request on the SDK's transport.
let rpc;
if (modern) {
  let nextId = 1;
  const pending = new Map();
  transport.onmessage = (msg) => {
    if (msg.id !== undefined && pending.has(msg.id)) {
      pending.get(msg.id)(msg);
      pending.delete(msg.id);
    }
  };
  rpc = async (method, params = {}) => {
    const id = nextId++;
    const answered = new Promise((resolve) => pending.set(id, resolve));
    const _meta = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientInfo": clientInfo,
      "io.modelcontextprotocol/clientCapabilities": capabilities,
    };
    await transport.send({ jsonrpc: "2.0", id, method, params: { ...params, _meta } });
    const msg = await answered;
    if (msg.error) throw Object.assign(new Error(msg.error.message), { code: msg.error.code });
    return msg.result;
  };
} else {
  rpc = (method, params = {}) => client.request({ method, params }, ResultSchema);
}

try {
  if (modern) {
    await transport.start();
    transport.setProtocolVersion?.("2026-07-28");
    const disc = await rpc("server/discover");
    report.serverInfo = disc?._meta?.["io.modelcontextprotocol/serverInfo"] ?? disc?.serverInfo ?? null;
    report.capabilities = disc?.capabilities ?? null;
  } else {
    await client.connect(transport);
    report.serverInfo = client.getServerVersion();
    report.capabilities = client.getServerCapabilities();
  }
  for (const step of plan.steps) {
    switch (step.op) {
      case "list": {
        const res = modern ? await rpc("tools/list") : await client.listTools();
        report.steps.push({ op: "list", tools: res.tools.map((t) => t.name).sort(), ttlMs: res.ttlMs, cacheScope: res.cacheScope });
        break;
      }
      case "request": {
        try {
          const result = await rpc(step.method, step.params ?? {});
          report.steps.push({ op: "request", method: step.method, result });
        } catch (err) {
          report.steps.push({ op: "request", method: step.method, error: { code: err.code, message: err.message } });
        }
        break;
      }
      case "call": {
        const params = { name: step.name, arguments: step.arguments ?? {} };
        const res = modern ? await rpc("tools/call", params) : await client.callTool(params);
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
  if (modern) await transport.close().catch(() => {});
  else await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(report) + "\n");
