// A minimal stdio MCP server that records the trace context each call
// brought it: every tools/call answers with the traceparent, tracestate
// and baggage of its _meta, so a test can check that the caller's trace
// reached the upstream. The tool "fail" answers with a tool error. No
// dependencies.
import { createInterface } from "node:readline";

const send = (msg) => process.stdout.write(JSON.stringify(msg) + "\n");
const rl = createInterface({ input: process.stdin });
rl.on("line", (line) => {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return;
  }
  if (msg.id === undefined || msg.method === undefined) return; // a notification or an answer
  switch (msg.method) {
    case "initialize":
      send({ jsonrpc: "2.0", id: msg.id, result: {
        protocolVersion: msg.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: "trace-server", version: "1.0.0" },
      } });
      break;
    case "tools/list":
      send({ jsonrpc: "2.0", id: msg.id, result: { tools: ["echo", "fail"].map((name) => ({
        name,
        description: "Says which trace context the call brought.",
        inputSchema: { type: "object", properties: {} },
      })) } });
      break;
    case "tools/call": {
      const meta = msg.params._meta ?? {};
      send({ jsonrpc: "2.0", id: msg.id, result: {
        content: [{ type: "text", text: `traceparent=${meta.traceparent ?? ""} tracestate=${meta.tracestate ?? ""}` }],
        isError: msg.params.name === "fail",
      } });
      break;
    }
    case "ping":
      send({ jsonrpc: "2.0", id: msg.id, result: {} });
      break;
    default:
      send({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: `no method ${msg.method}` } });
  }
});
