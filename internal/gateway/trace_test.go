package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/rawcall"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

const (
	clientTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientParent = "00f067aa0ba902b7"
	traceparent  = "00-" + clientTrace + "-" + clientParent + "-01"
)

// metaSource records the _meta each call brought it, on the typed path
// (the handler's request) and the byte path (rawcall.Call.Meta).
type metaSource struct {
	mu   sync.Mutex
	seen []string // the traceparent of each call, "" for none
}

func (m *metaSource) saw(tp string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seen = append(m.seen, tp)
}

func (m *metaSource) last(t *testing.T) string {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.seen) == 0 {
		t.Fatal("the source saw no call")
	}
	return m.seen[len(m.seen)-1]
}

func (m *metaSource) tools() []*catalog.Tool {
	tl := catalogtest.Tool("echo")
	tl.Source = "src"
	tl.ChecksArguments = true
	tl.Handler = func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		tp, _ := req.Params.Meta["traceparent"].(string)
		m.saw(tp)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "typed"}}}, nil
	}
	tl.Forward = func(call *rawcall.Call) (func(), bool) {
		var meta map[string]string
		tp := ""
		if len(call.Meta) > 0 && json.Unmarshal([]byte("{"+string(call.Meta)+"}"), &meta) == nil {
			tp = meta["traceparent"]
		}
		m.saw(tp)
		go call.Finish(json.RawMessage(`{"content":[{"type":"text","text":"bytes"}]}`), nil)
		return func() {}, true
	}
	return []*catalog.Tool{tl}
}

// spanNamed finds the one ended span of that name and kind.
func spanNamed(t *testing.T, exp *tracetest.InMemoryExporter, name string, kind trace.SpanKind) tracetest.SpanStub {
	t.Helper()
	var found []tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		if s.Name == name && s.SpanKind == kind {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		var names []string
		for _, s := range exp.GetSpans() {
			names = append(names, s.Name+" ("+s.SpanKind.String()+")")
		}
		t.Fatalf("%d %s spans named %q among %v, want 1", len(found), kind, name, names)
	}
	return found[0]
}

// attr is a span's attribute as a string, "" when absent.
func attr(s tracetest.SpanStub, key string) string {
	for _, a := range s.Attributes {
		if string(a.Key) == key {
			return a.Value.Emit()
		}
	}
	return ""
}

// TestCallsJoinTheClientsTrace: a call with a traceparent in its _meta is
// served in a server span that is the child of the client's, and its
// source gets the trace context of a client span, child of the server
// span: on the typed path and on the byte path.
func TestCallsJoinTheClientsTrace(t *testing.T) {
	for _, path := range []struct{ name, extraMeta, answer string }{
		{"bytes", ``, "bytes"},
		{"typed", `,"progressToken":"p"`, "typed"},
	} {
		t.Run(path.name, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			src := &metaSource{}
			g := specGateway(t, catalog.Spec{Tools: src.tools()}, &gateway.Options{Mode: expose.Flat, Tracer: tp})
			w := serveWire(t, g)
			w.initialize("2025-11-25")
			w.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","_meta":{"traceparent":%q%s}}}`, traceparent, path.extraMeta)
			if got := w.recv(); !strings.Contains(got, path.answer) {
				t.Fatalf("answered %s, want the %s path's answer", got, path.name)
			}
			w.close()

			server := spanNamed(t, exp, "tools/call echo", trace.SpanKindServer)
			client := spanNamed(t, exp, "tools/call echo", trace.SpanKindClient)
			if got := server.Parent.SpanID().String(); server.SpanContext.TraceID().String() != clientTrace || got != clientParent {
				t.Errorf("server span in trace %s with parent %s, want the client's (%s, %s)", server.SpanContext.TraceID(), got, clientTrace, clientParent)
			}
			if client.Parent.SpanID() != server.SpanContext.SpanID() || client.SpanContext.TraceID() != server.SpanContext.TraceID() {
				t.Errorf("client span's parent %s, want the server span %s", client.Parent.SpanID(), server.SpanContext.SpanID())
			}
			want := "00-" + clientTrace + "-" + client.SpanContext.SpanID().String() + "-01"
			if got := src.last(t); got != want {
				t.Errorf("the source saw traceparent %q, want the client span's %q", got, want)
			}
			for key, want := range map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "echo", "gen_ai.operation.name": "execute_tool", "network.transport": "pipe", "toolfold.outcome": "ok", "toolfold.source": "src"} {
				if got := attr(server, key); got != want {
					t.Errorf("server span's %s = %q, want %q", key, got, want)
				}
			}
		})
	}
}

// TestTracingOffCarriesTheClientsContextOn: without a tracer nothing is
// recorded, and a source still gets the client's trace context as sent,
// on both paths.
func TestTracingOffCarriesTheClientsContextOn(t *testing.T) {
	src := &metaSource{}
	g := specGateway(t, catalog.Spec{Tools: src.tools()}, &gateway.Options{Mode: expose.Flat})
	w := serveWire(t, g)
	w.initialize("2025-11-25")
	for i, extra := range []string{``, `,"progressToken":"p"`} {
		w.send(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","_meta":{"traceparent":%q%s}}}`, 2+i, traceparent, extra)
		w.recv()
		if got := src.last(t); got != traceparent {
			t.Errorf("call %d: the source saw traceparent %q, want the client's %q", i, got, traceparent)
		}
	}
	w.send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo"}}`)
	w.recv()
	if got := src.last(t); got != "" {
		t.Errorf("a call without trace context brought the source traceparent %q", got)
	}
}

// TestMetaToolSpans: call_tool carries the client's trace to the source
// like a direct call; find_tools and the disclosure decision get spans of
// their own, which hold what a client sent only when the operator opts in.
func TestMetaToolSpans(t *testing.T) {
	for _, optIn := range []bool{false, true} {
		exp := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
		src := &metaSource{}
		g := specGateway(t, catalog.Spec{Tools: src.tools()}, &gateway.Options{Mode: expose.Search, Tracer: tp, TraceArguments: optIn})
		w := serveWire(t, g)
		w.initialize("2025-11-25")
		w.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"echo","arguments":{}},"_meta":{"traceparent":%q}}}`, traceparent)
		if got := w.recv(); !strings.Contains(got, "typed") {
			t.Fatalf("call_tool answered %s", got)
		}
		if got := src.last(t); !strings.HasPrefix(got, "00-"+clientTrace+"-") || strings.Contains(got, clientParent) {
			t.Errorf("through call_tool the source saw traceparent %q, want one of the client's trace under toolfold's span", got)
		}
		w.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"find_tools","arguments":{"query":"hunter2 echo"}}}`)
		w.recv()
		// Requests without params are traced too.
		for i, method := range []string{"tools/list", "ping", "prompts/list"} {
			w.send(`{"jsonrpc":"2.0","id":%d,"method":%q}`, 10+i, method)
			if got := w.recv(); !strings.Contains(got, fmt.Sprintf(`"id":%d,`, 10+i)) {
				t.Errorf("%s without params answered %s", method, got)
			}
		}
		w.close()
		server := spanNamed(t, exp, "tools/call echo", trace.SpanKindServer)
		if got := attr(server, "toolfold.via"); got != "call_tool" {
			t.Errorf("the call_tool call's server span has toolfold.via %q", got)
		}
		find := spanNamed(t, exp, "toolfold.find_tools", trace.SpanKindInternal)
		if attr(find, "toolfold.find.hits") == "" {
			t.Error("find_tools' span does not say how many tools it found")
		}
		if got := attr(find, "toolfold.find.query"); (got == "hunter2 echo") != optIn {
			t.Errorf("recordArguments %v: find_tools' span has the query %q", optIn, got)
		}
		disclose := spanNamed(t, exp, "toolfold.disclose", trace.SpanKindInternal)
		if attr(disclose, "toolfold.mode") != "search" || attr(disclose, "toolfold.client.class") != "other" {
			t.Errorf("the disclosure span says mode %q, class %q", attr(disclose, "toolfold.mode"), attr(disclose, "toolfold.client.class"))
		}
	}
}

// metaExtras are prompts whose source reports the traceparent it got.
type metaExtras struct{ fakeExtras }

func (x *metaExtras) GetPrompt(_ context.Context, p *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	tp, _ := p.Meta["traceparent"].(string)
	return &mcp.GetPromptResult{Description: "traceparent=" + tp}, nil
}

// TestPromptsJoinTheTrace: a prompts/get is served in a span under the
// client's, and its source gets that span's context.
func TestPromptsJoinTheTrace(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	g := specGateway(t, catalog.Spec{Tools: (&metaSource{}).tools()}, &gateway.Options{Mode: expose.Flat, Tracer: tp, Extras: &metaExtras{}})
	w := serveWire(t, g)
	w.initialize("2025-11-25")
	w.send(`{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"p","_meta":{"traceparent":%q}}}`, traceparent)
	got := w.recv()
	w.close()
	span := spanNamed(t, exp, "prompts/get", trace.SpanKindServer)
	if span.Parent.SpanID().String() != clientParent {
		t.Errorf("prompts/get's span has parent %s, want the client's %s", span.Parent.SpanID(), clientParent)
	}
	if want := "traceparent=00-" + clientTrace + "-" + span.SpanContext.SpanID().String() + "-01"; !strings.Contains(got, want) {
		t.Errorf("prompts/get answered %s; want the source to have got %s", got, want)
	}
}

// TestTracingOffCarriesHeaderContextOn: untraced, a trace context a
// 2026-07-28 client sent in its HTTP headers reaches the source in _meta,
// on the byte path and the typed path.
func TestTracingOffCarriesHeaderContextOn(t *testing.T) {
	src := &metaSource{}
	h, err := specGateway(t, catalog.Spec{Tools: src.tools()}, &gateway.Options{Mode: expose.Flat}).HTTPHandler(nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	for _, path := range []struct{ name, extraMeta, answer string }{
		{"bytes", ``, "bytes"},
		{"typed", `,"progressToken":"p"`, "typed"},
	} {
		body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{` +
			`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"h","version":"1"},` +
			`"io.modelcontextprotocol/clientCapabilities":{}` + path.extraMeta + `}}}`
		_, _, got, _ := postMCP(t, srv.URL, body, map[string]string{
			"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo", "traceparent": traceparent}, nil)
		if !strings.Contains(got, path.answer) {
			t.Fatalf("%s: answered %s", path.name, got)
		}
		if got := src.last(t); got != traceparent {
			t.Errorf("%s: the source saw traceparent %q, want the client's header %q", path.name, got, traceparent)
		}
	}
}
