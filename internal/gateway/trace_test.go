package gateway_test

import (
	"context"
	"encoding/json"
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
