package gateway_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/logtest"
)

// panicCounter is an Observer that counts panics by path.
type panicCounter struct {
	mu     sync.Mutex
	panics map[string]int
}

func (o *panicCounter) ToolCalled(string, string, string, string, time.Duration) {}
func (o *panicCounter) SessionStarted(string)                                    {}
func (o *panicCounter) HandlerPanicked(path string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.panics == nil {
		o.panics = map[string]int{}
	}
	o.panics[path]++
}

func (o *panicCounter) count(path string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.panics[path]
}

const statelessCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"fast","_meta":{` +
	`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"h","version":"1"},` +
	`"io.modelcontextprotocol/clientCapabilities":{}}}}`

var statelessHeaders = map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "fast"}

// TestHandlerPanicsFailOneRequest: a panic while answering a request, on
// each path a request travels, fails that request alone with an internal
// error; the same client's next request and another client's are served,
// the stack is logged, and the panic is counted.
func TestHandlerPanicsFailOneRequest(t *testing.T) {
	tests := []struct {
		path, method string
		// run sends the request that panics, checks its answer, and sends
		// another on the same client and on a second one.
		run func(t *testing.T, g *gateway.Gateway)
	}{
		{"typed", "tools/list", func(t *testing.T, g *gateway.Gateway) {
			w := serveWire(t, g)
			w.initialize("2025-11-25")
			w.send(`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`)
			if got := w.recv(); !strings.Contains(got, `"id":5,"error":{"code":-32603`) || !strings.Contains(got, "internal error") {
				t.Errorf("the request that panicked: %s; want -32603", got)
			}
			w.send(`{"jsonrpc":"2.0","id":6,"method":"tools/list"}`)
			if got := w.recv(); !strings.Contains(got, `"id":6,"result"`) {
				t.Errorf("the next request: %s", got)
			}
			other := serveWire(t, g)
			other.initialize("2025-11-25")
			other.send(`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`)
			if got := other.recv(); !strings.Contains(got, `"id":5,"result"`) {
				t.Errorf("another client: %s", got)
			}
		}},
		{"stdio-bytes", "tools/call", func(t *testing.T, g *gateway.Gateway) {
			w := serveWire(t, g)
			w.initialize("2025-11-25")
			w.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"fast"}}`)
			if got := w.recv(); !strings.Contains(got, `"id":5,"error":{"code":-32603`) {
				t.Errorf("the call that panicked: %s; want -32603", got)
			}
			w.send(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"fast"}}`)
			if got := w.recv(); !strings.Contains(got, `"id":6,"result"`) || !strings.Contains(got, `"raw"`) {
				t.Errorf("the next call: %s", got)
			}
		}},
		{"http-session-bytes", "tools/call", func(t *testing.T, g *gateway.Gateway) {
			url := serveHTTP(t, g, nil)
			c := openHTTPSession(t, url, `{}`)
			c.initialized()
			call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fast"}}`
			if code, _, got, _ := c.post(call, nil); code != http.StatusInternalServerError || !strings.Contains(got, `"code":-32603`) {
				t.Errorf("the call that panicked: %d %s; want 500 and -32603", code, got)
			}
			if code, _, got, _ := c.post(call, nil); code != http.StatusOK || !strings.Contains(got, `"raw"`) {
				t.Errorf("the next call: %d %s", code, got)
			}
		}},
		{"http-request-bytes", "tools/call", func(t *testing.T, g *gateway.Gateway) {
			url := serveHTTP(t, g, nil)
			if code, _, got, _ := postMCP(t, url, statelessCall, statelessHeaders); code != http.StatusInternalServerError || !strings.Contains(got, `"code":-32603`) {
				t.Errorf("the call that panicked: %d %s; want 500 and -32603", code, got)
			}
			if code, _, got, _ := postMCP(t, url, statelessCall, statelessHeaders); code != http.StatusOK || !strings.Contains(got, `"raw"`) {
				t.Errorf("the next call: %d %s", code, got)
			}
		}},
		{"http", "tools/call", func(t *testing.T, g *gateway.Gateway) {
			url := serveHTTP(t, g, nil)
			if code, _, got, _ := postMCP(t, url, statelessCall, statelessHeaders); code != http.StatusInternalServerError || !strings.Contains(got, `"code":-32603`) {
				t.Errorf("the request that panicked: %d %s; want 500 and -32603", code, got)
			}
			if code, _, got, _ := postMCP(t, url, statelessCall, statelessHeaders); code != http.StatusOK || !strings.Contains(got, `"raw"`) {
				t.Errorf("the next request: %d %s", code, got)
			}
		}},
		{"typed", "resources/list", func(t *testing.T, g *gateway.Gateway) {
			h, err := g.HTTPHandler(nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, protocol := range []string{"2026-07-28", "2025-11-25"} {
				cs := dialHandler(t, h, protocol)
				_, err := cs.ListResources(context.Background(), nil)
				var rpcErr *jsonrpc.Error
				if protocol == "2026-07-28" && (!errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInternalError) {
					t.Errorf("%s: the request that panicked: %v; want -32603", protocol, err)
				}
				if protocol == "2025-11-25" && err != nil {
					t.Errorf("%s: another client: %v", protocol, err)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.path+"/"+tt.method, func(t *testing.T) {
			src := &fakeSource{answer: answerText("raw"), cancelled: make(chan string, 1)}
			logs := &logtest.Buffer{}
			obs := &panicCounter{}
			g := specGateway(t, catalog.Spec{Tools: rawTools(src)}, &gateway.Options{
				Mode: expose.Flat, Logger: logs.Logger(slog.LevelInfo), Observer: obs})
			gateway.PanicOnceAt(g, tt.path, tt.method)
			tt.run(t, g)
			if n := obs.count(tt.path); n != 1 {
				t.Errorf("%d panics counted on %s, want 1", n, tt.path)
			}
			if log := logs.String(); !strings.Contains(log, "panicked") || !strings.Contains(log, "goroutine") {
				t.Errorf("the panic and its stack were not logged:\n%s", log)
			}
		})
	}
}

// TestToolHandlerPanicFailsItsCallAlone: a tool's handler that panics, on
// the goroutine the gateway runs it on (the request's for a 2025-11-25
// client, one of its own for a 2026-07-28 one), fails that call alone.
func TestToolHandlerPanicFailsItsCallAlone(t *testing.T) {
	boom := catalogtest.Tool("boom")
	boom.Handler = func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		panic("the tool's handler has a bug")
	}
	obs := &panicCounter{}
	g := specGateway(t, catalog.Spec{Tools: []*catalog.Tool{boom, catalogtest.Tool("fine")}}, &gateway.Options{Mode: expose.Flat, Observer: obs})
	h, err := g.HTTPHandler(nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, protocol := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(protocol, func(t *testing.T) {
			cs := dialHandler(t, h, protocol)
			_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "boom"})
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInternalError {
				t.Fatalf("calling a tool that panics: %v; want -32603", err)
			}
			if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fine"}); err != nil {
				t.Errorf("the next call: %v", err)
			}
			if n := obs.count("typed"); n != i+1 {
				t.Errorf("%d panics counted, want %d", n, i+1)
			}
		})
	}
}
