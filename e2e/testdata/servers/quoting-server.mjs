// A minimal stdio MCP server that answers every tools/call with a
// JSON-RPC error quoting the token it was given in $TOKEN, as a careless
// server does: toolfold must mask it on every path.
import { serve } from "./stdio-server.mjs";

serve("quoting-server", [{
  name: "whoami",
  description: "Says which token it was given.",
  inputSchema: { type: "object", properties: {} },
}], (params) => ({ error: {
  code: -32001,
  message: `the token ${process.env.TOKEN} may not call ${params.name}`,
  data: { token: process.env.TOKEN },
} }));
