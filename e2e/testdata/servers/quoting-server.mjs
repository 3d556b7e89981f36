// A minimal stdio MCP server that answers every tools/call with a
// JSON-RPC error quoting the token it was given in $TOKEN, as a careless
// server does: toolfold must mask it on every path. No dependencies.
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
        serverInfo: { name: "quoting-server", version: "1.0.0" },
      } });
      break;
    case "tools/list":
      send({ jsonrpc: "2.0", id: msg.id, result: { tools: [{
        name: "whoami",
        description: "Says which token it was given.",
        inputSchema: { type: "object", properties: {} },
      }] } });
      break;
    case "tools/call":
      send({ jsonrpc: "2.0", id: msg.id, error: {
        code: -32001,
        message: `the token ${process.env.TOKEN} may not call ${msg.params.name}`,
        data: { token: process.env.TOKEN },
      } });
      break;
    case "ping":
      send({ jsonrpc: "2.0", id: msg.id, result: {} });
      break;
    default:
      send({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: `no method ${msg.method}` } });
  }
});
