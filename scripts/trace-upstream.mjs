// The upstream of scripts/trace-screenshot.sh: the e2e trace fixture's two
// tools (echo, fail), served by a stdio MCP server that also reports a
// server span of each call it answers to the collector named by
// OTEL_EXPORTER_OTLP_ENDPOINT (OTLP/HTTP with JSON), as the child of the
// traceparent in the call's _meta. So the screenshot shows the whole way
// a call travels: the client, toolfold's server and client spans, and the
// upstream's own span. No dependencies: the spans are written by hand.
import { randomBytes } from "node:crypto";
import { serve } from "../e2e/testdata/servers/stdio-server.mjs";

const endpoint = (process.env.OTEL_EXPORTER_OTLP_ENDPOINT ?? "").replace(/\/$/, "");
const traceparent = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;
// nanos is the wall clock in nanoseconds, finer than Date.now()'s
// milliseconds, so that a short span keeps its place inside its parent.
const nanos = () => String(BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000)) * 1000n);

// report sends one span; a failed export is said on stderr (toolfold logs
// it) and changes no answer.
function report(meta, name, start, end, isError) {
  const m = traceparent.exec(meta.traceparent ?? "");
  if (!endpoint || !m) return;
  const span = {
    traceId: m[1],
    spanId: randomBytes(8).toString("hex"),
    parentSpanId: m[2],
    name: `tools/call ${name}`,
    kind: 2, // server
    startTimeUnixNano: start,
    endTimeUnixNano: end,
    attributes: [
      { key: "mcp.method.name", value: { stringValue: "tools/call" } },
      { key: "gen_ai.tool.name", value: { stringValue: name } },
    ],
    status: isError ? { code: 2, message: "the tool said it failed" } : { code: 1 },
  };
  const body = {
    resourceSpans: [{
      resource: { attributes: [{ key: "service.name", value: { stringValue: "trace-upstream" } }] },
      scopeSpans: [{ scope: { name: "trace-upstream" }, spans: [span] }],
    }],
  };
  fetch(`${endpoint}/v1/traces`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  }).catch((err) => process.stderr.write(`trace-upstream: exporting a span: ${err}\n`));
}

serve("trace-upstream", [
  { name: "echo", description: "Says which trace context the call brought." },
  { name: "fail", description: "Always fails: a tool error, to show one in a trace." },
].map((t) => ({ ...t, inputSchema: { type: "object", properties: {} } })), (params) => {
  const start = nanos();
  const meta = params._meta ?? {};
  const isError = params.name === "fail";
  const text = isError
    ? "fail: this tool always fails"
    : `traceparent=${meta.traceparent ?? ""} tracestate=${meta.tracestate ?? ""}`;
  // Sent once the answer is out: the first fetch loads its HTTP client,
  // which would otherwise delay the answer.
  const end = nanos();
  setImmediate(() => report(meta, params.name, start, end, isError));
  return { result: { content: [{ type: "text", text }], isError } };
});
