// The skeleton of the test fixtures' minimal stdio MCP servers: newline-
// delimited JSON-RPC, initialize, tools/list, ping; each fixture names its
// tools and says how a tools/call is answered ({result} or {error}). No
// dependencies.
import { createInterface } from "node:readline";

export function serve(name, tools, call) {
  const send = (msg) => process.stdout.write(JSON.stringify(msg) + "\n");
  createInterface({ input: process.stdin }).on("line", (line) => {
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
          serverInfo: { name, version: "1.0.0" },
        } });
        break;
      case "tools/list":
        send({ jsonrpc: "2.0", id: msg.id, result: { tools } });
        break;
      case "tools/call":
        send({ jsonrpc: "2.0", id: msg.id, ...call(msg.params) });
        break;
      case "ping":
        send({ jsonrpc: "2.0", id: msg.id, result: {} });
        break;
      default:
        send({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: `no method ${msg.method}` } });
    }
  });
}
