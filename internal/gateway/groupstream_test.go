package gateway_test

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
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/groupsext"
	"github.com/toolfold/toolfold/internal/view"
)

// modernExtMeta is the _meta of a 2026-07-28 request from a client of the
// grouping extension.
const modernExtMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"m","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"extensions":{"` + groupsext.ID + `":{}}}}`

// TestModernHTTPClientHearsGroupsChange: a 2026-07-28 client of the
// grouping extension over HTTP is promised listChanged by server/discover,
// and hears notifications/groups/list_changed on its subscriptions/listen
// stream, stamped with that stream's id, when the top-level groups change.
func TestModernHTTPClientHearsGroupsChange(t *testing.T) {
	g := newGateway(t, gateway.Options{}, nil)
	h, err := g.HTTPHandler(nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	headers := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}

	_, _, body, _ := postMCP(t, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+modernExtMeta+`}}`, headers)
	if !strings.Contains(body, `"`+groupsext.ID+`":{"listChanged":true}`) {
		t.Errorf("server/discover does not promise groups listChanged:\n%s", body)
	}

	// A hang guard, not a timing: the stream must carry the notice.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(
		`{"jsonrpc":"2.0","id":"listen-7","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},`+modernExtMeta+`}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := make(chan string)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				select {
				case events <- data:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	next := func() map[string]any {
		t.Helper()
		select {
		case data, ok := <-events:
			if !ok {
				t.Fatal("the listen stream ended")
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(data), &m); err != nil {
				t.Fatalf("an event that is not JSON: %s", data)
			}
			return m
		case <-ctx.Done():
			t.Fatal("no event on the listen stream")
		}
		return nil
	}
	if ack := next(); ack["method"] != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first event %v, want the acknowledgement", ack)
	}
	space, err := view.NewSpace(sourcedCatalog(t, false), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(space); err != nil {
		t.Fatal(err)
	}
	for {
		m := next()
		if m["method"] != groupsext.NotificationListChanged {
			continue // tools/list_changed, also due
		}
		meta, _ := m["params"].(map[string]any)["_meta"].(map[string]any)
		if meta["io.modelcontextprotocol/subscriptionId"] != "listen-7" {
			t.Errorf("the notice names subscription %v, want listen-7", meta)
		}
		return
	}
}

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

// TestSDKWritesOneEventPerWrite pins what groupstream.go relies on to write
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

// TestSessionHTTPClientHearsGroupsChange: a 2025-11-25 client of the
// grouping extension over HTTP is promised listChanged by initialize, and
// hears notifications/groups/list_changed on its session's standalone
// stream (GET) when the top-level groups change.
func TestSessionHTTPClientHearsGroupsChange(t *testing.T) {
	g := newGateway(t, gateway.Options{}, nil)
	h, err := g.HTTPHandler(nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	_, _, body, hdr := postMCP(t, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"s","version":"1"},"capabilities":{"extensions":{"`+groupsext.ID+`":{}}}}}`)
	id := hdr.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatalf("initialize opened no session: %s", body)
	}
	if !strings.Contains(body, `"`+groupsext.ID+`":{"listChanged":true}`) {
		t.Errorf("initialize does not promise groups listChanged:\n%s", body)
	}
	session := map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-11-25"}
	postMCP(t, srv.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, session)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range session {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %s", resp.Status)
	}
	space, err := view.NewSpace(sourcedCatalog(t, false), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(space); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(data, `"method":"`+groupsext.NotificationListChanged+`"`) {
			return
		}
	}
	t.Fatalf("the standalone stream ended without groups/list_changed: %v", sc.Err())
}
