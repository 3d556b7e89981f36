package gateway

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/rawcall"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// The gate: where a tools/call is judged, whatever path then carries it.
//
// A call travels one of four paths: the SDK's typed path (every transport,
// meta-tools, call_tool, /mcp/<group>, mounted library servers), the stdio
// byte path (raw.go), the byte path of an HTTP session (httpfast.go) and
// the byte path of a 2026-07-28 request (httpfast.go). Each makes the same
// checks in the same order:
//
//  1. Who the caller is: callerOf, from the auth.TokenInfo the HTTP side
//     put in the request's context, or the stdio connection.
//  2. Whether the session is the caller's and this endpoint's: the
//     session table (sessions.go) admits an HTTP session's requests before
//     any path sees them, so a session cannot be ridden, cancelled or
//     closed by another caller or from another endpoint.
//  3. Reach: the endpoint's own catalog (a limited view or a group
//     endpoint is a gateway over only what it reaches), and the client's
//     view in the groups mode (fastWire, or the typed path's routing).
//  4. The audit line and the metric: a callTicket, taken by admitCall
//     when the call is admitted and finished exactly once.
//
// What comes back is masked and bounded by the source that produced it
// (internal/upstream masks the config's secrets in every error it words,
// on the byte path too, and bounds a server's messages), since only the
// source knows its secrets and its framing.
//
// The byte paths cannot skip the ticket: a source's Forward is called only
// by callTicket.forward, and TestOnlyTheGateForwards fails the build's
// tests if any other file of the package calls it.

// caller is who sent a request.
type caller struct {
	// name names the caller in the audit line: an OAuth subject, a static
	// token's name in the config, "stdio" for the stdio client, or
	// "anonymous" for an HTTP client of an endpoint without auth.
	name string
	// user is the identity an HTTP session is bound to (the SDK's
	// auth.TokenInfo.UserID); empty without auth.
	user string
}

// stdioCaller marks the context of a stdio connection: its one client is
// whoever started toolfold.
type stdioCaller struct{}

func withStdioCaller(ctx context.Context) context.Context {
	return context.WithValue(ctx, stdioCaller{}, true)
}

// callerOf names the caller of a request from the auth.TokenInfo it
// carries: info if given (the SDK's typed path hands it over in the
// request), else the one in ctx (an HTTP request's, as the HTTP side put
// it there).
func callerOf(ctx context.Context, info *auth.TokenInfo) caller {
	if info == nil {
		info = auth.TokenInfoFromContext(ctx)
	}
	if info != nil {
		c := caller{name: info.UserID, user: info.UserID}
		if n, ok := info.Extra["caller"].(string); ok && n != "" {
			c.name = n
		}
		return c
	}
	if ctx.Value(stdioCaller{}) != nil {
		return caller{name: "stdio"}
	}
	return caller{name: "anonymous"}
}

// Paths a call can take, as the audit line names them.
const (
	pathTyped       = "typed"
	pathStdioBytes  = "stdio-bytes"
	pathHTTPSession = "http-session-bytes"
	pathHTTPRequest = "http-request-bytes"
)

// callTicket is one admitted tools/call: who asked, on which path, since
// when. finish writes its audit line and its metric, once, however the
// call ends (answered, refused, cancelled, the client gone).
type callTicket struct {
	g      *Gateway
	caller caller
	path   string
	start  time.Time
	done   atomic.Bool
	// spans are the call's; nil when tracing is off (a pointer, so that the
	// byte paths' ticket stays as small as it was without tracing).
	spans *callSpans
	// rec is what a typed call recorded (callrecord.go); nil on the byte
	// paths, which know their outcome without one.
	rec *callRecorder
}

// admitCall admits a tools/call on path, by the caller info names (nil:
// the one in ctx). The HTTP session's ownership has been judged already
// (sessionTable.begin), and reach is the route's business; what the
// ticket guarantees is that the call is accounted for.
func (g *Gateway) admitCall(ctx context.Context, path string, info *auth.TokenInfo) *callTicket {
	return &callTicket{g: g, caller: callerOf(ctx, info), path: path, start: time.Now()}
}

// callSpans are a traced call's server span, and on a byte path the client
// span of its request to the source (nil on the typed path, which ends its
// own in session.run).
type callSpans struct {
	server, client trace.Span
}

// traceCall starts the call's server span, the child of the trace context
// in ctx (the client's, from _meta or the HTTP headers), and returns ctx
// with it; finish ends it. Tracing off, it returns ctx as it is.
func (t *callTicket) traceCall(ctx context.Context, attrs ...attribute.KeyValue) context.Context {
	tr := t.g.tr
	if tr == nil {
		return ctx
	}
	// Named for the tool in finish, once the tool is known to exist: a
	// name a client made up must not name spans.
	t.spans = &callSpans{}
	ctx, t.spans.server = tr.serverSpan(ctx, "tools/call", append(attrs,
		semconv.McpMethodNameKey.String("tools/call"), transportOf(ctx),
		attribute.String("toolfold.path", t.path), attribute.String("toolfold.caller", t.caller.name))...)
	return ctx
}

// forward sends the call to the wire's source as bytes; it is the only
// way the package reaches a source's Forward. false means the source
// cannot take it now and the typed path must; the ticket is then unused
// and finishes nothing.
func (t *callTicket) forward(w *expose.Wire, call *rawcall.Call) (cancel func(), ok bool) {
	if t.g.look().noBytes {
		return nil, false
	}
	return w.Target.Forward(call)
}

// finish accounts for the call: tool is the tool it reached (via the
// meta-tool it went through, if any), source who served it, outcome how
// it ended. Only the first finish counts.
func (t *callTicket) finish(ctx context.Context, tool, via, source, outcome string) {
	if t.done.Swap(true) {
		return
	}
	took := time.Since(t.start)
	if obs := t.g.opts.Observer; obs != nil {
		obs.ToolCalled(tool, via, source, outcome, took)
	}
	if sp := t.spans; sp != nil {
		if sp.client != nil {
			endCall(sp.client, outcome)
		}
		sp.server.SetName("tools/call " + tool)
		sp.server.SetAttributes(semconv.GenAIToolNameKey.String(tool), semconv.GenAIOperationNameExecuteTool, attribute.String("toolfold.source", source))
		if via != "" {
			sp.server.SetAttributes(attribute.String("toolfold.via", via))
		}
		if obs, ok := t.g.opts.Observer.(TraceObserver); ok && outcome != "ok" {
			obs.CallFailed(tool, outcome, sp.server.SpanContext().TraceID().String())
		}
		endCall(sp.server, outcome)
	}
	t.audit(ctx, tool, via, source, outcome, took)
}

// TraceObserver is an Observer that also hears the trace id of each call
// that did not end ok, when tracing is on: the dashboard lists them.
type TraceObserver interface {
	CallFailed(tool, outcome, traceID string)
}
