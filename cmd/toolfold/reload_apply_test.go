package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lineWriter hands each line written to it to a channel, so that a test
// waits on the log line it expects instead of sleeping.
type lineWriter struct {
	mu    sync.Mutex
	part  []byte
	lines chan string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.part = append(w.part, p...)
	for {
		i := slices.Index(w.part, '\n')
		if i < 0 {
			return len(p), nil
		}
		select {
		case w.lines <- string(w.part[:i]):
		default: // nobody reads that many: drop rather than block serve
		}
		w.part = w.part[i+1:]
	}
}

// waitLine returns the first line that contains want.
func (w *lineWriter) waitLine(t *testing.T, want string) string {
	t.Helper()
	ctx, cancel := hangGuard(t)
	defer cancel()
	for {
		select {
		case l := <-w.lines:
			if strings.Contains(l, want) {
				return l
			}
		case <-ctx.Done():
			t.Fatalf("no log line with %q", want)
		}
	}
}

// hangGuard bounds a wait for an event that a broken build never sends,
// so the test fails with a message instead of at go test's timeout.
func hangGuard(t *testing.T) (context.Context, context.CancelFunc) {
	return context.WithTimeout(t.Context(), time.Minute)
}

// stdioServe runs serve in-process on the config in dir and connects a
// client to it over stdio; changed hears each tools list_changed.
type stdioServe struct {
	cs      *mcp.ClientSession
	log     *lineWriter
	changed chan struct{}
	count   atomic.Int32
}

func startStdioServe(t *testing.T, dir string, args ...string) *stdioServe {
	t.Helper()
	t.Chdir(dir)
	cache := t.TempDir()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &stdioServe{log: &lineWriter{lines: make(chan string, 1000)}, changed: make(chan struct{}, 100)}
	e := env{stdin: inR, stdout: outW, stderr: s.log, lookupEnv: func(k string) (string, bool) {
		if k == "TOOLFOLD_CACHE_DIR" {
			return cache, true
		}
		return "", false
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- run(ctx, append([]string{"serve"}, args...), e) }()
	c := mcp.NewClient(&mcp.Implementation{Name: "reload-test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			s.count.Add(1)
			s.changed <- struct{}{}
		},
	})
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	s.cs = cs
	t.Cleanup(func() {
		cs.Close()
		inW.Close()
		cancel()
		<-done
		outR.Close()
	})
	return s
}

// names lists the client's tools.
func (s *stdioServe) names(t *testing.T) []string {
	t.Helper()
	res, err := s.cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tl := range res.Tools {
		out = append(out, tl.Name)
	}
	return out
}

// waitTools waits, list_changed by list_changed, until every name is
// listed.
func (s *stdioServe) waitTools(t *testing.T, names ...string) {
	t.Helper()
	ctx, cancel := hangGuard(t)
	defer cancel()
	for {
		have := s.names(t)
		if !slices.ContainsFunc(names, func(n string) bool { return !slices.Contains(have, n) }) {
			return
		}
		select {
		case <-s.changed:
		case <-ctx.Done():
			t.Fatalf("tools %v never listed; have %v", names, have)
		}
	}
}

func (s *stdioServe) call(t *testing.T, tool string, args map[string]any) string {
	t.Helper()
	res, err := s.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	if res.IsError {
		return "error: " + strings.Join(parts, "")
	}
	return strings.Join(parts, "")
}

func pidServer(t *testing.T) map[string]any {
	return map[string]any{"command": testBinary(t), "env": map[string]string{"TOOLFOLD_TEST_HELPER": "pid"}}
}

// TestReloadAddsServerKeepsOthers is issue 30's first point with real
// processes: a config saved with a third server added leaves the first
// two servers' processes alone, brings the third one's tools, and tells
// the connected client once.
func TestReloadAddsServerKeepsOthers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts stdio servers")
	}
	dir := t.TempDir()
	servers := map[string]any{"a": pidServer(t), "b": pidServer(t)}
	cfg := writeConfigJSON(t, dir, "toolfold.json", map[string]any{"mcpServers": servers})
	s := startStdioServe(t, dir, "--mode", "flat", "--config", cfg)
	s.waitTools(t, "a__pid", "b__pid")
	pidA, pidB := s.call(t, "a__pid", nil), s.call(t, "b__pid", nil)
	before := s.count.Load()

	servers["c"] = pidServer(t)
	writeConfigJSON(t, dir, "toolfold.json", map[string]any{"mcpServers": servers})
	audit := s.log.waitLine(t, "audit: config reload applied")
	if !strings.Contains(audit, "added=[c]") || !strings.Contains(audit, "removed=[]") || !strings.Contains(audit, "changed=[]") {
		t.Errorf("the audit line does not say c was added and nothing else: %s", audit)
	}
	s.waitTools(t, "c__pid")
	if got := s.call(t, "c__pid", nil); got == "" || got == pidA || got == pidB {
		t.Errorf("c__pid = %q; want a process of its own", got)
	}
	if got := s.call(t, "a__pid", nil); got != pidA {
		t.Errorf("a's process is %s after the reload, was %s: an unchanged server was restarted", got, pidA)
	}
	if got := s.call(t, "b__pid", nil); got != pidB {
		t.Errorf("b's process is %s after the reload, was %s: an unchanged server was restarted", got, pidB)
	}
	// The calls above were answered after any notification sent before
	// them: the count is final.
	if n := s.count.Load() - before; n != 1 {
		t.Errorf("the client heard tools list_changed %d times for one server added, want once", n)
	}
}

// startHTTPServe runs serve --http in-process on the config in dir and
// returns its /mcp URL once it listens.
func startHTTPServe(t *testing.T, dir string, log *lineWriter, args ...string) string {
	t.Helper()
	t.Chdir(dir)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cache := t.TempDir()
	e := env{stdin: io.NopCloser(strings.NewReader("")), stdout: nopCloser{io.Discard}, stderr: log, lookupEnv: func(k string) (string, bool) {
		if k == "TOOLFOLD_CACHE_DIR" {
			return cache, true
		}
		return "", false
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--http", addr, "--drain-timeout", "1s"}, args...), e)
	}()
	t.Cleanup(func() { cancel(); <-done })
	log.waitLine(t, "serving streamable HTTP")
	return "http://" + addr + "/mcp"
}

// bearer adds a token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func connectAs(t *testing.T, url, token string) (*mcp.ClientSession, error) {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "reload-test", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token}}, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// TestReloadRevokesToken: a token taken out of the config is refused from
// the next request, and the session opened with it ends; the other
// token's session carries on.
func TestReloadRevokesToken(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a stdio server")
	}
	const alice, bob = "alice-token-0123456789abcdef", "bob-token-0123456789abcdef"
	dir := t.TempDir()
	write := func(tokens ...string) {
		var list []map[string]any
		for _, tok := range tokens {
			list = append(list, map[string]any{"token": tok})
		}
		writeConfigJSON(t, dir, "toolfold.json", map[string]any{"http": map[string]any{"auth": map[string]any{"tokens": list}},
			"mcpServers": map[string]any{"a": pidServer(t)}})
	}
	write(alice, bob)
	log := &lineWriter{lines: make(chan string, 1000)}
	url := startHTTPServe(t, dir, log, "--mode", "flat", "--config", filepath.Join(dir, "toolfold.json"))
	as, err := connectAs(t, url, alice)
	if err != nil {
		t.Fatal(err)
	}
	bs, err := connectAs(t, url, bob)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bs.ListTools(t.Context(), nil); err != nil {
		t.Fatalf("bob before the reload: %v", err)
	}

	write(alice)
	if l := log.waitLine(t, "audit: token revoked"); !strings.Contains(l, "token=http.auth.tokens[1]") || !strings.Contains(l, "sessions_ended=1") {
		t.Errorf("the audit line does not say bob's entry and its one session ended: %s", l)
	}
	if _, err := bs.ListTools(t.Context(), nil); err == nil {
		t.Error("bob's session still answers after his token was revoked")
	}
	if _, err := connectAs(t, url, bob); err == nil {
		t.Error("a revoked token opened a new session")
	}
	if _, err := as.ListTools(t.Context(), nil); err != nil {
		t.Errorf("alice's session broke though her token stayed: %v", err)
	}
}

// TestReloadAppliesPresentation is issue 30's third point for the
// presentation: a reload that renames a meta-tool applies from the next
// request, on the session that stays open, which hears list_changed and
// calls the tool by its new name; nothing waits for a restart.
func TestReloadAppliesPresentation(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a stdio server")
	}
	dir := t.TempDir()
	write := func(find string) string {
		d := map[string]any{"mode": "search"}
		if find != "" {
			d["metaTools"] = map[string]any{"find_tools": find}
		}
		return writeConfigJSON(t, dir, "toolfold.json", map[string]any{"disclosure": d, "mcpServers": map[string]any{"a": pidServer(t)}})
	}
	s := startStdioServe(t, dir, "--config", write(""))
	s.waitTools(t, "find_tools")

	write("lookup")
	if l := s.log.waitLine(t, "audit: config reload applied"); strings.Contains(l, "restart") {
		t.Errorf("the reload wants a restart: %s", l)
	}
	s.waitTools(t, "lookup")
	if got := s.names(t); slices.Contains(got, "find_tools") {
		t.Errorf("find_tools is still listed after it was renamed: %v", got)
	}
	if got := s.call(t, "lookup", map[string]any{"query": "process id"}); !strings.Contains(got, "a__pid") {
		t.Errorf("lookup on the open session = %q; want it to find a__pid", got)
	}
}

// TestReloadAppliesAllowedOrigins: http.allowedOrigins applies from the
// next request, over real HTTP, and is no longer reported as needing a
// restart.
func TestReloadAppliesAllowedOrigins(t *testing.T) {
	if testing.Short() {
		t.Skip("serves HTTP")
	}
	const app, other = "https://app.example.com", "https://other.example.com"
	dir := t.TempDir()
	write := func(origin string) string {
		return writeConfigJSON(t, dir, "toolfold.json", map[string]any{"http": map[string]any{"allowedOrigins": []string{origin}}, "mcpServers": map[string]any{}})
	}
	log := &lineWriter{lines: make(chan string, 1000)}
	url := strings.TrimSuffix(startHTTPServe(t, dir, log, "--config", write(app)), "/mcp")
	status := func(origin string) int {
		req, err := http.NewRequestWithContext(t.Context(), "GET", url+"/healthz", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Origin", origin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if a, o := status(app), status(other); a != http.StatusOK || o != http.StatusForbidden {
		t.Fatalf("before the reload: %s %d, %s %d", app, a, other, o)
	}
	write(other)
	log.waitLine(t, "audit: config reload applied")
	if a, o := status(app), status(other); a != http.StatusForbidden || o != http.StatusOK {
		t.Errorf("after the reload: %s %d, want 403; %s %d, want 200", app, a, other, o)
	}
}
