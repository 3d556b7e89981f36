package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/rawcall"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// Tracing: a server span per request the gateway serves, a client span per
// request it sends a source, and the trace context carried on to the
// source, following the OpenTelemetry semantic conventions for MCP
// (mcp.method.name, mcp.session.id, jsonrpc.request.id, gen_ai.tool.name,
// gen_ai.operation.name). The client's context comes from the request's
// _meta (traceparent, tracestate, baggage: the W3C keys MCP reserves
// there) or, over HTTP, from the request's headers; _meta wins.
//
// Off (Options.Tracer nil), g.tr is nil and every path skips all of it:
// tools/call only carries a client's trace context (from _meta, else the
// HTTP headers) on to the source, and only when the client sent one.
//
// No attribute holds a tool's arguments; meta-tool arguments (a
// find_tools query, enable_tools groups) only with Options.TraceArguments.

// tracer is the gateway's tracing, nil when off.
type tracer struct {
	t    trace.Tracer
	args bool // meta-tool arguments may go in attributes
}

func newTracer(o *Options) *tracer {
	if o.Tracer == nil {
		return nil
	}
	return &tracer{t: o.Tracer.Tracer("github.com/toolfold/toolfold/gateway"), args: o.TraceArguments}
}

// traceKeys are the _meta keys of a trace context (W3C Trace Context and
// Baggage), as MCP reserves them unprefixed.
const (
	keyTraceparent = "traceparent"
	keyTracestate  = "tracestate"
	keyBaggage     = "baggage"
)

// propagator reads and writes traceparent, tracestate and baggage; it
// holds no state.
var propagator propagation.TextMapPropagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// metaCarrier reads and writes the trace context in a request's _meta.
type metaCarrier mcp.Meta

func (m metaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

func (m metaCarrier) Set(key, value string) { m[key] = value }

func (m metaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// withClientContext is ctx with the client's trace context as the parent
// of what follows: the one in the request's _meta, else the one in its
// HTTP headers (h, nil on stdio), else none.
func withClientContext(ctx context.Context, m mcp.Meta, h http.Header) context.Context {
	if _, ok := m[keyTraceparent].(string); ok {
		return propagator.Extract(ctx, metaCarrier(m))
	}
	if h.Get(keyTraceparent) != "" {
		return propagator.Extract(ctx, propagation.HeaderCarrier(h))
	}
	return ctx
}

// headerOf is the HTTP headers of a typed request, nil on stdio.
func headerOf(extra *mcp.RequestExtra) http.Header {
	if extra == nil {
		return nil
	}
	return extra.Header
}

// serverSpan starts the span of a request the gateway serves.
func (tr *tracer) serverSpan(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return tr.t.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
}

// clientSpan starts the span of a tools/call the gateway sends tool's
// source.
func (tr *tracer) clientSpan(ctx context.Context, tool, source string) (context.Context, trace.Span) {
	return tr.t.Start(ctx, "tools/call "+tool, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		semconv.McpMethodNameKey.String("tools/call"),
		semconv.GenAIToolNameKey.String(tool),
		semconv.GenAIOperationNameExecuteTool,
		attribute.String("toolfold.source", source),
	))
}

// internalSpan starts a span of the gateway's own work (a wait, a
// meta-tool's decision).
func (tr *tracer) internalSpan(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return tr.t.Start(ctx, name, trace.WithAttributes(attrs...))
}

// endCall ends a call's span with how it ended: error.type and an error
// status for anything but ok.
func endCall(span trace.Span, outcome string) {
	span.SetAttributes(attribute.String("toolfold.outcome", outcome))
	if outcome != "ok" {
		span.SetAttributes(semconv.ErrorTypeKey.String(outcome))
		span.SetStatus(codes.Error, outcome)
	}
	span.End()
}

// injectMeta is a copy of m (nil: a new one) whose trace context is the
// one in ctx.
func injectMeta(ctx context.Context, m mcp.Meta) mcp.Meta {
	out := make(mcp.Meta, len(m)+2)
	for k, v := range m {
		switch k {
		case keyTraceparent, keyTracestate, keyBaggage:
		default:
			out[k] = v
		}
	}
	propagator.Inject(ctx, metaCarrier(out))
	return out
}

// transportOf is network.transport for a caller: pipe on stdio, tcp over
// HTTP.
func transportOf(ctx context.Context) attribute.KeyValue {
	if ctx.Value(stdioCaller{}) != nil {
		return semconv.NetworkTransportPipe
	}
	return semconv.NetworkTransportTCP
}

// TraceIDOf is the trace id of the span in ctx, "" when none is recorded:
// the audit line and the dashboard name it so an operator can find the
// trace of a failed call.
func TraceIDOf(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return ""
	}
	return sc.TraceID().String()
}

// traceMethod serves a request on the typed path inside a server span
// (tools/call has its own, in serveCall, with the call's outcome), and
// records the disclosure decision on the requests that reveal it.
func (s *session) traceMethod(ctx context.Context, method string, req mcp.Request, serve mcp.MethodHandler) (mcp.Result, error) {
	if method == "tools/call" || strings.HasPrefix(method, "notifications/") {
		return serve(ctx, method, req)
	}
	p := paramsOf(req)
	var m mcp.Meta
	if p != nil {
		m = p.GetMeta()
	}
	attrs := []attribute.KeyValue{semconv.McpMethodNameKey.String(method), transportOf(ctx)}
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil && ss.ID() != "" {
		attrs = append(attrs, semconv.McpSessionIDKey.String(ss.ID()))
	}
	ctx, span := s.g.tr.serverSpan(withClientContext(ctx, m, headerOf(req.GetExtra())), method, attrs...)
	switch r := req.(type) {
	case *mcp.ServerRequest[*mcp.InitializeParams]:
		var c ClientInfo
		if r.Params != nil && r.Params.ClientInfo != nil {
			c = ClientInfo{Name: r.Params.ClientInfo.Name, ProtocolVersion: r.Params.ProtocolVersion}
		}
		s.g.traceDisclosure(ctx, c)
	case *mcp.ListToolsRequest:
		if s.mode == perRequestMode {
			s.g.traceDisclosure(ctx, requestClient(r))
		}
	}
	if p != nil && forwarded(method) {
		// A source answers it: its request joins the trace under this
		// span, through _meta (and a remote server's headers, from ctx).
		p.SetMeta(injectMeta(ctx, m))
	}
	res, err := serve(ctx, method, req)
	if err != nil {
		span.SetAttributes(semconv.ErrorTypeKey.String("jsonrpc_error"))
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
	return res, err
}

// forwarded reports the requests other than tools/call that a source
// answers, with the _meta they came with.
func forwarded(method string) bool {
	switch method {
	case "prompts/get", "resources/read", "completion/complete":
		return true
	}
	return false
}

// paramsOf is a request's params, nil when it has none: the SDK leaves a
// request without params holding a nil pointer, whose GetMeta would panic.
func paramsOf(req mcp.Request) mcp.Params {
	p := req.GetParams()
	if p == nil {
		return nil
	}
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil
	}
	return p
}

// traceDisclosure records, as a span of its own, what the gateway decided
// to show a client: the mode it is served and the class of client that
// decided it (in the auto mode).
func (g *Gateway) traceDisclosure(ctx context.Context, c ClientInfo) {
	p := g.present(c)
	_, span := g.tr.internalSpan(ctx, "toolfold.disclose",
		attribute.String("toolfold.mode.configured", string(g.look().mode)),
		attribute.String("toolfold.mode", p.String()),
		attribute.String("toolfold.client.class", g.clientClass(c)),
		attribute.String("toolfold.client.name", c.Name))
	span.End()
}

// clientClass names what the auto mode read in a client's name: a client
// that searches its tools itself, one that re-reads tools/list, or other.
func (g *Gateway) clientClass(c ClientInfo) string {
	lk := g.look()
	searching, refreshing := lk.searching, lk.refreshing
	if searching == nil {
		searching = DefaultSearchingClients
	}
	if refreshing == nil {
		refreshing = DefaultRefreshingClients
	}
	matches := func(pattern string) bool { return clientMatches(pattern, c.Name) }
	switch {
	case c.Extension:
		return "groups-extension"
	case slices.ContainsFunc(searching, matches):
		return "searching"
	case slices.ContainsFunc(refreshing, matches):
		return "refreshing"
	}
	return "other"
}

// hasTrace reports whether a request's _meta (as sent, nil for none)
// carries a trace context: the byte paths look no further when not.
func hasTrace(metaObj []byte) bool {
	return metaObj != nil && bytes.Contains(metaObj, []byte(`"`+keyTraceparent+`"`))
}

// traceBytes readies a byte-path call's trace. Tracing on: the call's
// server span (the child of the client's trace context, from _meta, else
// from h, the HTTP headers) and a client span for the source's request,
// whose context goes in call.Meta; finish ends both. Tracing off: the
// client's own trace members, as sent, in call.Meta, so the source still
// joins the client's trace; nothing at all when there are none.
func (t *callTicket) traceBytes(ctx context.Context, metaObj []byte, h http.Header, w *expose.Wire, id []byte, sessionID string, call *rawcall.Call) {
	tr := t.g.tr
	if tr == nil {
		if hasTrace(metaObj) {
			call.Meta = traceMembers(metaObj)
		} else if h != nil && h.Get(keyTraceparent) != "" {
			call.Meta = headerMembers(h)
		}
		return
	}
	if hasTrace(metaObj) {
		ctx = propagator.Extract(ctx, bytesCarrier(metaObj))
	} else if h.Get(keyTraceparent) != "" {
		ctx = propagator.Extract(ctx, propagation.HeaderCarrier(h))
	}
	attrs := []attribute.KeyValue{semconv.JSONRPCRequestIDKey.String(requestID(id))}
	if sessionID != "" {
		attrs = append(attrs, semconv.McpSessionIDKey.String(sessionID))
	}
	ctx = t.traceCall(ctx, attrs...)
	ctx, t.spans.client = tr.clientSpan(ctx, w.Target.Name, w.Target.Source)
	out := metaCarrier{}
	propagator.Inject(ctx, out)
	var b []byte
	for _, k := range []string{keyTraceparent, keyTracestate, keyBaggage} {
		if v, ok := out[k].(string); ok && v != "" {
			if len(b) > 0 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = append(b, k...)
			b = append(b, `":`...)
			q, _ := json.Marshal(v)
			b = append(b, q...)
		}
	}
	call.Meta = b
}

// headerMembers are the trace context of HTTP headers as _meta members,
// joined as JSON members without braces.
func headerMembers(h http.Header) []byte {
	var b []byte
	for _, k := range []string{keyTraceparent, keyTracestate, keyBaggage} {
		if v := h.Get(k); v != "" {
			if len(b) > 0 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = append(b, k...)
			b = append(b, `":`...)
			q, _ := json.Marshal(v)
			b = append(b, q...)
		}
	}
	return b
}

// headerMeta is m (copied, nil: a new one) with the trace context of HTTP
// headers when m has none and h has one; else m as it is.
func headerMeta(m mcp.Meta, h http.Header) mcp.Meta {
	if h == nil || h.Get(keyTraceparent) == "" {
		return m
	}
	if _, ok := m[keyTraceparent]; ok {
		return m
	}
	out := make(mcp.Meta, len(m)+3)
	for k, v := range m {
		out[k] = v
	}
	for _, k := range []string{keyTraceparent, keyTracestate, keyBaggage} {
		if v := h.Get(k); v != "" {
			out[k] = v
		}
	}
	return out
}

// traceMembers are the trace context members of a request's _meta, as
// sent, joined as JSON members without braces.
func traceMembers(metaObj []byte) []byte {
	var b []byte
	_ = rawcall.Members(metaObj, func(k, v []byte) bool {
		switch string(k) {
		case keyTraceparent, keyTracestate, keyBaggage:
			if len(b) > 0 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = append(b, k...)
			b = append(b, `":`...)
			b = append(b, v...)
		}
		return true
	})
	return b
}

// bytesCarrier reads the trace context of a request's _meta as sent.
type bytesCarrier []byte

func (c bytesCarrier) Get(key string) string {
	s, _ := rawcall.String(rawcall.Member(c, key))
	return s
}

func (bytesCarrier) Set(string, string) {}

func (bytesCarrier) Keys() []string { return []string{keyTraceparent, keyTracestate, keyBaggage} }

// requestID is a JSON-RPC id as jsonrpc.request.id records it: a string's
// value, a number's digits.
func requestID(raw []byte) string {
	if s, ok := rawcall.String(raw); ok {
		return s
	}
	return string(raw)
}
