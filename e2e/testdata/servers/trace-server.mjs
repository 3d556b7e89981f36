// A minimal stdio MCP server that records the trace context each call
// brought it: every tools/call answers with the traceparent and
// tracestate of its _meta, so a test can check that the caller's trace
// reached the upstream. The tool "fail" answers with a tool error.
import { serve } from "./stdio-server.mjs";

serve("trace-server", ["echo", "fail"].map((name) => ({
  name,
  description: "Says which trace context the call brought.",
  inputSchema: { type: "object", properties: {} },
})), (params) => {
  const meta = params._meta ?? {};
  return { result: {
    content: [{ type: "text", text: `traceparent=${meta.traceparent ?? ""} tracestate=${meta.tracestate ?? ""}` }],
    isError: params.name === "fail",
  } };
});
