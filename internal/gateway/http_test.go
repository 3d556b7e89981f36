package gateway_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
)

// sessionCounter counts the sessions the gateway reports.
type sessionCounter struct {
	mu       sync.Mutex
	sessions int
}

func (o *sessionCounter) ToolCalled(string, string, string, string, time.Duration) {}
func (o *sessionCounter) SessionStarted(string) {
	o.mu.Lock()
	o.sessions++
	o.mu.Unlock()
}
func (o *sessionCounter) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.sessions
}

func serveHTTP(t testing.TB, g *gateway.Gateway, opts *gateway.HTTPOptions) string {
	t.Helper()
	h, err := g.HTTPHandler(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func post(t testing.TB, url, sessionID, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sessionID != "" {
		req.Header.Set("Mcp-Session-Id", sessionID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, string(data)
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"claude-code","version":"1"}}}`

func connectHTTP(t *testing.T, url string) (*mcp.ClientSession, error) {
	t.Helper()
	// Sessions are a 2025-11-25 matter: a 2026-07-28 client has none.
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "claude-code"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func TestHTTPSessionCap(t *testing.T) {
	g := newGateway(t, gateway.Options{Mode: expose.Groups}, nil)
	url := serveHTTP(t, g, &gateway.HTTPOptions{MaxSessions: 2})
	first, err := connectHTTP(t, url)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := connectHTTP(t, url); err != nil {
		t.Fatal(err)
	}
	if _, err := connectHTTP(t, url); err == nil {
		t.Fatal("a third session opened with http.maxSessions at 2")
	}
	resp, body := post(t, url, "", initializeBody)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "http.maxSessions") || !strings.Contains(body, `"id":1`) {
		t.Fatalf("an initialize over the cap got %d %s; want 503 naming http.maxSessions, as a JSON-RPC error to id 1", resp.StatusCode, body)
	}
	// The open sessions are untouched, and a closed one makes room.
	if res, err := first.ListTools(context.Background(), nil); err != nil || len(res.Tools) == 0 {
		t.Fatalf("an open session after a refusal: %v %v", res, err)
	}
	first.Close()
	if _, err := connectHTTP(t, url); err != nil {
		t.Fatalf("a session after another closed: %v", err)
	}
	if n := g.HTTPSessions(); n != 2 {
		t.Errorf("HTTPSessions = %d, want 2", n)
	}
}

func TestHTTPSessionCapCoversGroupEndpoints(t *testing.T) {
	g := newGateway(t, gateway.Options{Mode: expose.Search}, nil)
	opts := &gateway.HTTPOptions{MaxSessions: 1}
	main := serveHTTP(t, g, opts)
	h, err := g.GroupHandler("docs", false, opts)
	if err != nil {
		t.Fatal(err)
	}
	group := httptest.NewServer(h)
	t.Cleanup(group.Close)
	if _, err := connectHTTP(t, main); err != nil {
		t.Fatal(err)
	}
	if resp, body := post(t, group.URL, "", initializeBody); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a group endpoint's session beyond the gateway's cap got %d %s, want 503", resp.StatusCode, body)
	}
}

func TestHTTPIdleSessionsClose(t *testing.T) {
	g := newGateway(t, gateway.Options{Mode: expose.Search}, nil)
	opts := gateway.HTTPOptions{SessionTimeout: 20 * time.Millisecond, MaxSessions: 1}
	url := serveHTTP(t, g, &opts)
	closed := make(chan string, 1)
	gateway.OnIdleSessionClosed(g, opts, func(id string) { closed <- id })
	resp, body := post(t, url, "", initializeBody)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	if got := <-closed; got != id {
		t.Fatalf("session %q closed for idleness, want %q", got, id)
	}
	if n := g.HTTPSessions(); n != 0 {
		t.Fatalf("HTTPSessions = %d after the idle session closed, want 0", n)
	}
	if resp, _ := post(t, url, id, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("a request of a session closed for idleness got %d, want 404", resp.StatusCode)
	}
	// Its room is free again.
	if resp, body := post(t, url, "", initializeBody); resp.StatusCode != http.StatusOK {
		t.Fatalf("a new session after the idle one closed: %d %s", resp.StatusCode, body)
	}
}

func TestHTTPPostsWithoutSessionAreNotSessions(t *testing.T) {
	obs := &sessionCounter{}
	g := newGateway(t, gateway.Options{Mode: expose.Groups, Observer: obs}, nil)
	url := serveHTTP(t, g, nil)
	for i := 0; i < 50; i++ {
		resp, body := post(t, url, "", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		if resp.StatusCode == http.StatusOK && strings.Contains(body, `"tools"`) {
			t.Fatalf("tools/list without a session was served: %s", body)
		}
	}
	// 2026-07-28 requests carry no session, and are served without one.
	for i := 0; i < 5; i++ {
		code, _, body, _ := postMCP(t, url, `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"m","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`,
			map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"})
		if code != http.StatusOK || !strings.Contains(body, `"tools"`) {
			t.Fatalf("a 2026-07-28 tools/list: %d %s", code, body)
		}
	}
	if n, live, open := obs.count(), g.LiveViewsForTest(), g.HTTPSessions(); n != 0 || live != 0 || open != 0 {
		t.Fatalf("55 POSTs without a session: %d sessions counted, %d views kept, %d sessions open; want none", n, live, open)
	}
	if _, err := connectHTTP(t, url); err != nil {
		t.Fatal(err)
	}
	if n := obs.count(); n != 1 {
		t.Errorf("one real session counted %d times", n)
	}
}

// TestHTTPSessionKeepsNoInitializeBody checks that what a client pads its
// initialize with is not kept for the session's life, wherever it puts it:
// a member nobody reads, clientInfo, a capability, an extension's
// settings, _meta.
func TestHTTPSessionKeepsNoInitializeBody(t *testing.T) {
	pad := strings.Repeat("x", 3<<20)
	for _, tc := range []struct{ name, from, to string }{
		{"unknown member", `"capabilities"`, `"padding":"` + pad + `","capabilities"`},
		{"clientInfo name", `"name":"`, `"name":"` + pad},
		{"clientInfo icons", `"version":`, `"icons":[{"src":"` + pad + `"}],"version":`},
		{"experimental capability", `"capabilities":{}`, `"capabilities":{"experimental":{"x":"` + pad + `"}}`},
		{"extension settings", `"capabilities":{}`, `"capabilities":{"extensions":{"x/y":{"v":"` + pad + `"}}}`},
		{"_meta", `"capabilities"`, `"_meta":{"x":"` + pad + `"},"capabilities"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGateway(t, gateway.Options{Mode: expose.Search}, nil)
			url := serveHTTP(t, g, nil)
			body := strings.Replace(initializeBody, tc.from, tc.to, 1)
			if body == initializeBody {
				t.Fatalf("the test's initialize has no %s", tc.from)
			}
			// One plain session first, so what every endpoint holds once is
			// not counted.
			if resp, out := post(t, url, "", initializeBody); resp.StatusCode != http.StatusOK {
				t.Fatalf("initialize: %d %s", resp.StatusCode, out)
			}
			var ms runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms)
			before := ms.HeapAlloc
			const sessions = 8
			for i := 0; i < sessions; i++ {
				if resp, out := post(t, url, "", body); resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
					t.Fatalf("initialize: %d %.200s", resp.StatusCode, out)
				}
			}
			runtime.GC()
			runtime.ReadMemStats(&ms)
			kept := int64(ms.HeapAlloc) - int64(before)
			// An idle session without a stream costs tens of KiB; the
			// padding alone would be 3 MiB each.
			if g.HTTPSessions() != sessions+1 || kept > sessions*(256<<10) {
				t.Fatalf("%d sessions opened with a 3 MiB %s keep %d KiB; want under 256 KiB each", sessions, tc.name, kept>>10)
			}
			t.Logf("%d sessions keep %d KiB (%d KiB each)", sessions, kept>>10, kept/sessions>>10)
		})
	}
}

// TestViewsAreForgottenWhenTheirSessionEnds: a groups-mode session's view
// is kept exactly while its session is open: it is forgotten when the
// client deletes the session, when the session is closed for idleness,
// and when a stdio client leaves. Nothing waits for a garbage collection.
func TestViewsAreForgottenWhenTheirSessionEnds(t *testing.T) {
	g := newGateway(t, gateway.Options{Mode: expose.Groups}, nil)
	opts := gateway.HTTPOptions{SessionTimeout: time.Hour}
	url := serveHTTP(t, g, &opts)
	var ids []string
	for range 3 {
		resp, body := post(t, url, "", initializeBody)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("initialize: %d %s", resp.StatusCode, body)
		}
		ids = append(ids, resp.Header.Get("Mcp-Session-Id"))
	}
	if n := g.LiveViewsForTest(); n != 3 {
		t.Fatalf("%d views kept for 3 open sessions", n)
	}
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	req.Header.Set("Mcp-Session-Id", ids[0])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n := g.LiveViewsForTest(); n != 2 {
		t.Fatalf("%d views kept after one session was deleted, want 2", n)
	}

	// A stdio client's view goes with its connection.
	w := serveWire(t, g)
	w.initialize("2025-11-25")
	if n := g.LiveViewsForTest(); n != 3 {
		t.Fatalf("%d views kept with a stdio client connected, want 3", n)
	}
	w.close()
	if n := g.LiveViewsForTest(); n != 2 {
		t.Fatalf("%d views kept after the stdio client left, want 2", n)
	}

	// A session closed for idleness.
	idle := newGateway(t, gateway.Options{Mode: expose.Groups}, nil)
	short := gateway.HTTPOptions{SessionTimeout: 20 * time.Millisecond}
	idleURL := serveHTTP(t, idle, &short)
	closed := make(chan string, 1)
	gateway.OnIdleSessionClosed(idle, short, func(id string) { closed <- id })
	if resp, body := post(t, idleURL, "", initializeBody); resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	<-closed
	if n := idle.LiveViewsForTest(); n != 0 {
		t.Fatalf("%d views kept after the only session was closed for idleness", n)
	}
}

// BenchmarkHTTPSessionHeap reports the heap an idle HTTP session keeps
// (no event stream open), with a plain initialize and with one whose
// clientInfo.name is 3 MiB: what the session cap bounds.
//
//	go test -run '^$' -bench HTTPSessionHeap ./internal/gateway/
func BenchmarkHTTPSessionHeap(b *testing.B) {
	pad := strings.Repeat("x", 3<<20)
	for _, bc := range []struct{ name, body string }{
		{"plain", initializeBody},
		{"padded-clientInfo", strings.Replace(initializeBody, `"name":"`, `"name":"`+pad, 1)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			g := newGateway(b, gateway.Options{Mode: expose.Search}, nil)
			url := serveHTTP(b, g, &gateway.HTTPOptions{MaxSessions: 100000})
			post(b, url, "", initializeBody) // what every endpoint holds once
			const sessions = 50
			var perSession float64
			for b.Loop() {
				var ms runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&ms)
				before := ms.HeapAlloc
				for range sessions {
					if resp, _ := post(b, url, "", bc.body); resp.StatusCode != http.StatusOK {
						b.Fatalf("initialize: %d", resp.StatusCode)
					}
				}
				runtime.GC()
				runtime.ReadMemStats(&ms)
				perSession = float64(int64(ms.HeapAlloc)-int64(before)) / sessions
			}
			b.ReportMetric(perSession, "heap-bytes/session")
		})
	}
}

// TestHTTPSessionCapFollowsReload: a reloaded http.maxSessions caps the
// next initialize; the sessions open stay open.
func TestHTTPSessionCapFollowsReload(t *testing.T) {
	g := newGateway(t, gateway.Options{Mode: expose.Search}, nil)
	url := serveHTTP(t, g, &gateway.HTTPOptions{MaxSessions: 1})
	first, err := connectHTTP(t, url)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		max  int
		open bool
	}{
		{"at the start's cap", 1, false},
		{"raised to 2", 2, true},
		{"lowered to 1, two open", 1, false},
	}
	for _, s := range steps {
		g.SetMaxSessions(s.max)
		if _, err := connectHTTP(t, url); (err == nil) != s.open {
			t.Errorf("%s: a new session opened = %v, want %v (%v)", s.name, err == nil, s.open, err)
		}
	}
	if _, err := first.ListTools(context.Background(), nil); err != nil {
		t.Errorf("the first session after the cap changed: %v", err)
	}
}
