package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/config"
)

// fixture is an API over fakes, with what it recorded.
type fixture struct {
	api      *API
	cat      atomic.Pointer[catalog.Catalog]
	sources  []SourceStatus
	built    []groupKey // every GroupHandler call, in order
	measured atomic.Int32
	logs     *bytes.Buffer
	mu       sync.Mutex
}

// newFixture serves catalogtest.Tree with two sources; opts may adjust the
// options before New.
func newFixture(t testing.TB, adjust func(*Options)) *fixture {
	t.Helper()
	f := &fixture{logs: &bytes.Buffer{}}
	f.cat.Store(catalogtest.Tree(t))
	f.sources = []SourceStatus{
		{Name: "github", Kind: KindMCP, State: StateReady, Transport: "stdio", Tools: 3},
		{Name: "memory", Kind: KindMCP, State: StateFailed, Transport: "stdio", Error: "upstream \"memory\" exited at start (exit status 1): boom", StderrTail: "boom\n"},
	}
	opts := &Options{
		MCP: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "the MCP handler")
		}),
		Catalog: f.cat.Load,
		Measure: func(c *catalog.Catalog) (*Measurement, error) {
			f.measured.Add(1)
			return MeasureFlat(c)
		},
		Sources: func() []SourceStatus { return f.sources },
		GroupHandler: func(group string, readOnly bool) (http.Handler, error) {
			f.mu.Lock()
			f.built = append(f.built, groupKey{group, readOnly})
			f.mu.Unlock()
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/plain")
				fmt.Fprintf(w, "MCP for %s (read-only %v)", group, readOnly)
			}), nil
		},
		Logger: slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if adjust != nil {
		adjust(opts)
	}
	api, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	f.api = api
	return f
}

// do sends a request straight to the handler, as a loopback listener
// would receive it.
func (f *fixture) do(t testing.TB, method, target string, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	r.Host = "127.0.0.1:8080"
	r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}))
	for k, vs := range header {
		for _, v := range vs {
			r.Header.Add(k, v)
		}
	}
	w := httptest.NewRecorder()
	f.api.ServeHTTP(w, r)
	return w
}

func decode[T any](t *testing.T, w *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
		t.Fatalf("body is not the JSON expected: %v\n%s", err, w.Body)
	}
	return v
}

func names[T any](rows []T, name func(T) string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = name(r)
	}
	return out
}

func groupName(r GroupRow) string { return r.Name }
func toolName(r ToolRow) string   { return r.Name }

func TestRoutes(t *testing.T) {
	tests := []struct {
		name        string
		method      string
		target      string
		status      int
		contentType string
		check       func(t *testing.T, w *httptest.ResponseRecorder)
	}{
		{"health", "GET", "/healthz", 200, "application/json", func(t *testing.T, w *httptest.ResponseRecorder) {
			h := decode[Health](t, w)
			if h.Status != StatusServing || h.Tools != 7 || h.Groups != 4 || len(h.Sources) != 2 {
				t.Errorf("health = %+v, want serving with 7 tools, 4 groups, 2 sources", h)
			}
			if s := h.Sources[1]; s.Name != "memory" || s.State != StateFailed || s.StderrTail != "boom\n" || !strings.Contains(s.Error, "exit status 1") {
				t.Errorf("failed source = %+v, want its state, error and stderr tail", s)
			}
		}},
		{"health head", "HEAD", "/healthz", 200, "application/json", func(t *testing.T, w *httptest.ResponseRecorder) {
			if w.Body.Len() != 0 {
				t.Errorf("HEAD answered a body: %q", w.Body)
			}
		}},
		{"groups", "GET", "/api/groups", 200, "application/json", func(t *testing.T, w *httptest.ResponseRecorder) {
			tree := decode[GroupTree](t, w)
			if got, want := fmt.Sprint(names(tree.Groups, groupName)), "[code code.repos code.repos.br docs]"; got != want {
				t.Errorf("groups = %s, want %s in tree order", got, want)
			}
			repos := tree.Groups[1]
			if repos.Parent != "code" || repos.Tools != 2 || repos.Depth != 1 || repos.Default != "available" || repos.Description != "Repositories" || repos.Tokens <= 0 {
				t.Errorf("code.repos = %+v", repos)
			}
			if tree.Ungrouped != 1 || tree.UngroupedTokens <= 0 || tree.Excluded == nil {
				t.Errorf("ungrouped = %d (%d tokens), excluded = %v", tree.Ungrouped, tree.UngroupedTokens, tree.Excluded)
			}
		}},
		{"groups are indented JSON", "GET", "/api/groups", 200, "application/json", func(t *testing.T, w *httptest.ResponseRecorder) {
			if !strings.HasPrefix(w.Body.String(), "{\n  \"groups\": [\n    {\n") {
				t.Errorf("body is not indented: %.60q", w.Body)
			}
		}},
		{"tools", "GET", "/api/tools", 200, "application/json", func(t *testing.T, w *httptest.ResponseRecorder) {
			rows := decode[[]ToolRow](t, w)
			if got, want := fmt.Sprint(names(rows, toolName)), "[a b c d e f u]"; got != want {
				t.Errorf("tools = %s, want %s", got, want)
			}
			a := rows[0]
			if fmt.Sprint(a.Groups) != "[code docs]" || a.Description != "Tool a" || a.Tokens <= 0 {
				t.Errorf("tool a = %+v", a)
			}
			if u := rows[6]; len(u.Groups) != 0 || u.Groups == nil {
				t.Errorf("ungrouped tool's groups = %#v, want an empty list", u.Groups)
			}
		}},
		{"tools of a group and its children", "GET", "/api/tools?group=code.repos", 200, "application/json", func(t *testing.T, w *httptest.ResponseRecorder) {
			if got := fmt.Sprint(names(decode[[]ToolRow](t, w), toolName)); got != "[c d e]" {
				t.Errorf("tools = %s, want [c d e]", got)
			}
		}},
		{"tools of an unknown group", "GET", "/api/tools?group=cod", 404, "application/json", wantError(`no group "cod"`, `did you mean "code"?`)},
		{"dashboard", "GET", "/", 200, "text/html; charset=utf-8", func(t *testing.T, w *httptest.ResponseRecorder) {
			for _, s := range []string{"<title>toolfold</title>", "code.repos", "Repositories", `href="/api/groups"`, `href="/api/tools"`, `href="/healthz"`, "memory", "exit status 1", "<code>/mcp</code>"} {
				if !strings.Contains(w.Body.String(), s) {
					t.Errorf("dashboard lacks %q", s)
				}
			}
			if strings.Contains(w.Body.String(), "<script") {
				t.Error("dashboard carries a script")
			}
			if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
				t.Errorf("Content-Security-Policy = %q", csp)
			}
		}},
		{"mcp", "POST", "/mcp", 200, "text/plain", wantBody("the MCP handler")},
		{"mcp of a group", "POST", "/mcp/code.repos", 200, "text/plain", wantBody("MCP for code.repos (read-only false)")},
		{"mcp of an unknown group", "POST", "/mcp/docz", 404, "application/json", wantError(`no group "docz"`, `did you mean "docs"? that is /mcp/docs`)},
		{"nothing here", "GET", "/api/nothing", 404, "application/json", wantError("nothing at /api/nothing", "/api/groups")},
		{"mcp with a trailing slash", "GET", "/mcp/", 404, "application/json", wantError("nothing at /mcp/")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			w := f.do(t, tt.method, tt.target, nil)
			if w.Code != tt.status {
				t.Fatalf("%s %s = %d, want %d: %s", tt.method, tt.target, w.Code, tt.status, w.Body)
			}
			if ct := w.Header().Get("Content-Type"); ct != tt.contentType {
				t.Errorf("Content-Type = %q, want %q", ct, tt.contentType)
			}
			tt.check(t, w)
		})
	}
}

func wantBody(want string) func(*testing.T, *httptest.ResponseRecorder) {
	return func(t *testing.T, w *httptest.ResponseRecorder) {
		t.Helper()
		if w.Body.String() != want {
			t.Errorf("body = %q, want %q", w.Body, want)
		}
	}
}

// wantError checks a {"error": ...} body for every fragment.
func wantError(fragments ...string) func(*testing.T, *httptest.ResponseRecorder) {
	return func(t *testing.T, w *httptest.ResponseRecorder) {
		t.Helper()
		msg := decode[map[string]string](t, w)["error"]
		for _, f := range fragments {
			if !strings.Contains(msg, f) {
				t.Errorf("error %q lacks %q", msg, f)
			}
		}
	}
}

func TestMethodsOtherThanGetAreRefused(t *testing.T) {
	f := newFixture(t, nil)
	for _, target := range []string{"/healthz", "/api/groups", "/api/tools", "/"} {
		for _, method := range []string{"POST", "PUT", "DELETE", "PATCH", "OPTIONS"} {
			w := f.do(t, method, target, nil)
			if w.Code != http.StatusMethodNotAllowed {
				t.Errorf("%s %s = %d, want 405", method, target, w.Code)
				continue
			}
			if allow := w.Header().Get("Allow"); allow != "GET, HEAD" {
				t.Errorf("%s %s: Allow = %q, want \"GET, HEAD\"", method, target, allow)
			}
			wantError("only answers GET and HEAD", method)(t, w)
		}
	}
}

func TestHealthSumsUpSources(t *testing.T) {
	failed := func(name string) SourceStatus {
		return SourceStatus{Name: name, Kind: KindMCP, State: StateFailed, Error: "it broke"}
	}
	tests := []struct {
		name    string
		sources []SourceStatus
		want    string
	}{
		{"no sources", nil, StatusServing},
		{"one of two failed", []SourceStatus{failed("a"), {Name: "b", State: StateReady}}, StatusServing},
		{"a source still starting", []SourceStatus{failed("a"), {Name: "b", State: StateStarting}}, StatusServing},
		{"idle sources are not failures", []SourceStatus{{Name: "a", State: StateIdle}}, StatusServing},
		{"every source failed", []SourceStatus{failed("a"), failed("b")}, StatusDegraded},
		{"every enabled source failed", []SourceStatus{failed("a"), {Name: "b", State: StateIdle, Disabled: true}}, StatusDegraded},
		{"only disabled sources", []SourceStatus{{Name: "b", State: StateIdle, Disabled: true}}, StatusServing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, func(o *Options) { o.Sources = func() []SourceStatus { return tt.sources } })
			w := f.do(t, "GET", "/healthz", nil)
			if w.Code != http.StatusOK {
				t.Fatalf("/healthz = %d, want 200 whatever the sources", w.Code)
			}
			h := decode[Health](t, w)
			if h.Status != tt.want {
				t.Errorf("status = %q, want %q", h.Status, tt.want)
			}
			if h.Sources == nil || len(h.Sources) != len(tt.sources) {
				t.Errorf("sources = %#v, want the %d given (never null)", h.Sources, len(tt.sources))
			}
		})
	}
}

func TestNoCatalogYet(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.Catalog = func() *catalog.Catalog { return nil } })
	for _, tt := range []struct {
		target string
		status int
		want   string
	}{
		{"/healthz", 200, `"tools": 0`},
		{"/api/groups", 200, `"groups": []`},
		{"/api/tools", 200, "[]"},
		{"/", 200, "No groups"},
		{"/mcp/code", 503, "no catalog yet"},
	} {
		w := f.do(t, "GET", tt.target, nil)
		if w.Code != tt.status || !strings.Contains(w.Body.String(), tt.want) {
			t.Errorf("%s = %d %s, want %d with %q", tt.target, w.Code, w.Body, tt.status, tt.want)
		}
	}
}

func TestOrigin(t *testing.T) {
	tests := []struct {
		origin string
		status int
	}{
		{"", 200},
		{"http://localhost:3000", 200},
		{"http://127.0.0.1", 200},
		{"http://[::1]:6274", 200},
		{"http://app.localhost:5173", 200},
		{"https://app.example.com", 200}, // listed
		{"HTTPS://APP.EXAMPLE.COM:443", 200},
		{"https://evil.example", 403},
		{"http://app.example.com", 403}, // listed with https only
		{"https://app.example.com.evil.example", 403},
		{"http://localhost.evil.example", 403},
		{"null", 403},
		{"file://", 403},
	}
	f := newFixture(t, func(o *Options) { o.AllowedOrigins = []string{"https://app.example.com/"} })
	for _, path := range []string{"/healthz", "/api/tools", "/", "/mcp", "/mcp/code"} {
		for _, tt := range tests {
			h := http.Header{}
			if tt.origin != "" {
				h.Set("Origin", tt.origin)
			}
			w := f.do(t, "GET", path, h)
			if w.Code != tt.status {
				t.Errorf("GET %s with Origin %q = %d, want %d", path, tt.origin, w.Code, tt.status)
				continue
			}
			acao := w.Header().Get("Access-Control-Allow-Origin")
			switch {
			case tt.status == 403:
				wantError("http.allowedOrigins", tt.origin)(t, w)
				if acao != "" {
					t.Errorf("refused origin %q got Access-Control-Allow-Origin %q", tt.origin, acao)
				}
			case tt.origin != "" && acao != tt.origin:
				t.Errorf("allowed origin %q got Access-Control-Allow-Origin %q", tt.origin, acao)
			}
		}
	}
}

func TestAnyOrigin(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.AllowedOrigins = []string{"*"} })
	if w := f.do(t, "GET", "/healthz", http.Header{"Origin": {"https://evil.example"}}); w.Code != 200 {
		t.Errorf(`with allowedOrigins ["*"], a foreign origin got %d`, w.Code)
	}
}

func TestPreflight(t *testing.T) {
	f := newFixture(t, func(o *Options) {
		o.Tokens = []config.TokenConfig{{Token: "s3cret-token-value"}}
	})
	h := http.Header{"Origin": {"http://localhost:6274"}, "Access-Control-Request-Method": {"POST"}, "Access-Control-Request-Headers": {"authorization, mcp-session-id"}}
	w := f.do(t, "OPTIONS", "/mcp", h)
	if w.Code != http.StatusNoContent {
		t.Fatalf("preflight from a loopback origin = %d, want 204 (a preflight carries no token): %s", w.Code, w.Body)
	}
	if got := w.Header().Get("Access-Control-Allow-Headers"); !strings.Contains(got, "Authorization") || !strings.Contains(got, "Mcp-Session-Id") {
		t.Errorf("Access-Control-Allow-Headers = %q", got)
	}
	h.Set("Origin", "https://evil.example")
	if w := f.do(t, "OPTIONS", "/mcp", h); w.Code != http.StatusForbidden {
		t.Errorf("preflight from a foreign origin = %d, want 403", w.Code)
	}
}

func TestHostOnLoopbackListener(t *testing.T) {
	f := newFixture(t, nil)
	srv := httptest.NewServer(f.api) // listens on 127.0.0.1
	defer srv.Close()
	for _, tt := range []struct {
		host   string
		status int
	}{
		{"", 200}, // the listener's own address
		{"localhost:8080", 200},
		{"[::1]:8080", 200},
		{"evil.example:8080", 403},
		{"evil.example", 403},
	} {
		for _, path := range []string{"/healthz", "/api/tools", "/", "/mcp"} {
			req, _ := http.NewRequest("GET", srv.URL+path, nil)
			if tt.host != "" {
				req.Host = tt.host
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Errorf("GET %s with Host %q = %d, want %d", path, tt.host, resp.StatusCode, tt.status)
			}
		}
	}
	// The same Host on a listener that is not loopback is the operator's
	// choice (they bound to a public address): no Host check there.
	r := httptest.NewRequest("GET", "/healthz", nil)
	r.Host = "toolfold.internal:8080"
	r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(10, 0, 0, 5), Port: 8080}))
	w := httptest.NewRecorder()
	f.api.ServeHTTP(w, r)
	if w.Code != 200 {
		t.Errorf("Host on a non-loopback listener = %d, want 200", w.Code)
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	cat := func() *catalog.Catalog { return nil }
	for _, tt := range []struct {
		name string
		opts *Options
		want string
	}{
		{"nil", nil, "Options.Catalog is required"},
		{"no catalog", &Options{}, "Options.Catalog is required"},
		{"empty token", &Options{Catalog: cat, Tokens: []config.TokenConfig{{Token: "ok-token"}, {Token: "  "}}}, "http.auth.tokens[1].token is empty"},
		{"bad origin", &Options{Catalog: cat, AllowedOrigins: []string{"app.example.com"}}, `http.allowedOrigins[0]: "app.example.com" is not an origin`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New = %v, want an error with %q", err, tt.want)
			}
		})
	}
}

// newLoopbackServer serves h on 127.0.0.1 for the test's life.
func newLoopbackServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}
