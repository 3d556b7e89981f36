package sdkshim_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A notification of an extension (the grouping extension's
// notifications/groups/list_changed) has no way through the SDK on either
// side: docs/sdk-workarounds.md, item 12, and docs/sdk-custom-notifications.md.
// The gateway writes it between the SDK's events (groupstream.go); the
// upstream client reads it off the transport (upstream progressObserver,
// headerTransport). These pins say when either could go.

// recordingWriter records each Write of a response and whether the SDK
// flushed through FlushError.
type recordingWriter struct {
	http.ResponseWriter
	mu      sync.Mutex
	writes  []string
	flushes int
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.writes = append(w.writes, string(p))
	w.mu.Unlock()
	return w.ResponseWriter.Write(p)
}

func (w *recordingWriter) FlushError() error {
	w.mu.Lock()
	w.flushes++
	w.mu.Unlock()
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// TestSDKWritesOneEventPerWrite pins what the gateway's groupstream.go
// relies on to write
// notifications/groups/list_changed between the SDK's events on a
// subscriptions/listen stream: the SDK writes each event whole, in one
// Write, and flushes through the writer's FlushError.
func TestSDKWritesOneEventPerWrite(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "bare"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "a"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	// 2026-07-28 requests are served statelessly, as the gateway serves them.
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true})
	rec := make(chan *recordingWriter, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := &recordingWriter{ResponseWriter: w}
		rec <- rw
		sdk.ServeHTTP(rw, r)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"m","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rw := <-rec
	sc := bufio.NewScanner(resp.Body)
	events := 0
	for events < 2 && sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") {
			events++
			if events == 1 {
				// The acknowledgement came; a change sends one more event.
				server.AddTool(&mcp.Tool{Name: "b", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{}, nil
				})
			}
		}
	}
	if events < 2 {
		t.Fatalf("the listen stream carried %d events, want the acknowledgement and tools/list_changed (status %d, writes %q)", events, resp.StatusCode, rw.writes)
	}
	rw.mu.Lock()
	defer rw.mu.Unlock()
	for _, w := range rw.writes {
		if !strings.HasSuffix(w, "\n\n") || strings.Count(w, "\ndata: ")+strings.Count(w[:min(len(w), 6)], "data: ") != 1 {
			t.Errorf("the SDK wrote part of an event, or several, in one Write: %q; groupstream.go must then find event boundaries itself", w)
		}
	}
	if rw.flushes == 0 {
		t.Error("the SDK no longer flushes through FlushError: groupstream.go's lock no longer covers its flushes")
	}
}

// TestSDKSendsNoCustomNotifications: a server's sending chain refuses a
// method the SDK does not know, so an extension's notification cannot be
// sent through it (which is why groupstream.go writes it on the stream
// itself).
func TestSDKSendsNoCustomNotifications(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "bare"}, nil)
	var next mcp.MethodHandler
	s.AddSendingMiddleware(func(n mcp.MethodHandler) mcp.MethodHandler { next = n; return n })
	_, ss := bareServer(t, s, nil)
	req := &mcp.ServerRequest[*mcp.ToolListChangedParams]{Session: ss, Params: &mcp.ToolListChangedParams{}}
	if _, err := next(context.Background(), "notifications/groups/list_changed", req); err == nil {
		t.Fatal("the SDK now sends a notification it does not know; groupstream.go could send notifications/groups/list_changed through the server")
	}
}

// TestSDKClientHearsNoCustomNotifications: a client drops a notification
// it does not know before its receiving middleware, so an upstream's
// notifications/groups/list_changed is invisible to SDK hooks; which is
// why the upstream package watches the transport for it (progressObserver
// on a connection, headerTransport on HTTP response bodies). The server is
// scripted line by line over stdio framing.
func TestSDKClientHearsNoCustomNotifications(t *testing.T) {
	seen := make(chan string, 4)
	c := mcp.NewClient(&mcp.Implementation{Name: "pin", Version: "1"}, nil)
	c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			seen <- method
			return next(ctx, method, req)
		}
	})
	write, _ := scripted(t, c, `{"tools":{"listChanged":true}}`)
	if err := write(`{"jsonrpc":"2.0","method":"notifications/groups/list_changed","params":{}}`); err != nil {
		t.Fatal(err)
	}
	if err := write(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{}}`); err != nil {
		t.Fatal(err)
	}
	// Notifications are handled in the order they arrive: when the tools'
	// one reaches the middleware, the groups' one has been dealt with.
	for method := range seen {
		if method == "notifications/groups/list_changed" {
			t.Fatal("the client's receiving middleware now sees an extension's notification; progressObserver and headerTransport's watching could become a middleware")
		}
		if method == "notifications/tools/list_changed" {
			break
		}
	}
}
