package gateway_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold"
	"github.com/toolfold/toolfold/gateway"
)

type echoIn struct {
	Text string `json:"text"`
}

func library() *toolfold.Server {
	srv := toolfold.NewServer(&toolfold.Options{Name: "lib"})
	toolfold.AddTool(srv.Group("lib", &toolfold.GroupOptions{Description: "In-process tools"}), &mcp.Tool{Name: "shout"},
		toolfold.Func(func(_ context.Context, in echoIn) (string, error) { return strings.ToUpper(in.Text), nil }))
	return srv
}

func writeConfig(t *testing.T, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "toolfold.json")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// connect starts a session of gw and a Go SDK client on it, closed when
// the test ends.
func connect(t *testing.T, gw *gateway.Gateway) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := gw.Connect(ctx, st, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// listNames lists the tools a new session of gw sees.
func listNames(t *testing.T, gw *gateway.Gateway) []string {
	t.Helper()
	list, err := connect(t, gw).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	return names
}

func TestOpenServesConfigAndLibraryTogether(t *testing.T) {
	cfg := writeConfig(t, `{"commands": {"echo": {"command": "echo", "description": "Print words", "actions": {"say": {"readOnly": true, "params": {"words": {"type": "array", "items": {"type": "string"}, "positional": true}}}}}}}`)
	gw, err := gateway.Open(context.Background(), &gateway.Options{Config: cfg, Servers: []*toolfold.Server{library()}, Mode: toolfold.ModeFlat, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	cs := connect(t, gw)
	names := listNames(t, gw)
	ctx := context.Background()
	if !slices.Contains(names, "echo__say") || !slices.Contains(names, "shout") {
		t.Fatalf("tools = %v, want the config's echo__say and the library's shout", names)
	}
	for name, args := range map[string]map[string]any{"echo__say": {"words": []string{"hi"}}, "shout": {"text": "hi"}} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Errorf("%s: %v %+v", name, err, res)
		}
	}
}

// TestOpenWithoutConfigWarnsNothing serves library servers alone: the
// empty config that stands in for none is no reason for a warning.
func TestOpenWithoutConfigWarnsNothing(t *testing.T) {
	gw, err := gateway.Open(context.Background(), &gateway.Options{Servers: []*toolfold.Server{library()}, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	if w := gw.Warnings(); len(w) > 0 {
		t.Errorf("library servers without a config warn: %q", w)
	}
}

func TestOpenRefusesBadConfigAndCollisions(t *testing.T) {
	_, err := gateway.Open(context.Background(), &gateway.Options{Config: writeConfig(t, `{"mcpServerz": {}}`)})
	if err == nil || !strings.Contains(err.Error(), "mcpServers") {
		t.Errorf("a misspelt key must be refused naming the right one: %v", err)
	}
	srv := toolfold.NewServer(nil)
	toolfold.AddTool(srv, &mcp.Tool{Name: "echo__say"}, toolfold.Func(func(context.Context, echoIn) (string, error) { return "", nil }))
	cfg := writeConfig(t, `{"commands": {"echo": {"command": "echo", "actions": {"say": {}}}}}`)
	_, err = gateway.Open(context.Background(), &gateway.Options{Config: cfg, Servers: []*toolfold.Server{srv}, CacheDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), `library server "toolfold" (Servers[0]) has a tool "echo__say", and so has the config's "echo": rename the library tool, or give "echo" a different prefix`) {
		t.Errorf("a library tool named like a config tool must be refused: %v", err)
	}
}

// TestOpenKeepsOnlyReadOnlyToolsOfAReadOnlyServer mounts a library server
// whose Options.ReadOnly is set: only its read-only tools are served.
func TestOpenKeepsOnlyReadOnlyToolsOfAReadOnlyServer(t *testing.T) {
	srv := toolfold.NewServer(&toolfold.Options{Name: "lib", ReadOnly: true})
	g := srv.Group("lib", &toolfold.GroupOptions{Description: "In-process tools"})
	noop := toolfold.Func(func(context.Context, echoIn) (string, error) { return "", nil })
	toolfold.AddTool(g, &mcp.Tool{Name: "peek", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, noop)
	toolfold.AddTool(g, &mcp.Tool{Name: "poke"}, noop)
	gw, err := gateway.Open(context.Background(), &gateway.Options{Servers: []*toolfold.Server{srv}, Mode: toolfold.ModeFlat, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	if got := listNames(t, gw); !slices.Equal(got, []string{"peek"}) {
		t.Errorf("a read-only library server serves %v, want only its read-only tool peek", got)
	}
	if w := gw.Warnings(); len(w) > 0 {
		t.Errorf("dropping a read-only server's other tools warns: %q", w)
	}
}

// TestOpenNamesTheLibraryServerAtFault: problems of library servers are
// worded for library code, naming the servers and what to change.
func TestOpenNamesTheLibraryServerAtFault(t *testing.T) {
	noop := toolfold.Func(func(context.Context, echoIn) (string, error) { return "", nil })
	withTool := func(name string) *toolfold.Server {
		srv := toolfold.NewServer(&toolfold.Options{Name: name})
		toolfold.AddTool(srv, &mcp.Tool{Name: "search"}, noop)
		return srv
	}
	tests := []struct {
		name    string
		servers []*toolfold.Server
		want    []string
		not     string
	}{
		{"same tool in two servers", []*toolfold.Server{withTool("wiki"), withTool("mail")},
			[]string{`library server "wiki" (Servers[0]) and library server "mail" (Servers[1]) both have a tool "search"`, "rename the tool"}, "prefix"},
		{"two servers of the same name", []*toolfold.Server{withTool(""), withTool("")},
			[]string{`library server "toolfold" (Servers[0]) and library server "toolfold" (Servers[1])`}, "prefix"},
		{"an Include of a tool never added", []*toolfold.Server{func() *toolfold.Server {
			srv := library()
			srv.Group("lib", nil).Include("shuot")
			return srv
		}()}, []string{`library server "lib" (Servers[0]): toolfold: group "lib" includes "shuot": there is no such tool (did you mean "shout"?)`}, ""},
		{"a group to exclude that does not exist", []*toolfold.Server{toolfold.NewServer(&toolfold.Options{Name: "wiki", ExcludeGroups: []string{"nope"}})},
			[]string{`library server "wiki" (Servers[0]): toolfold: cannot exclude group "nope"`}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := gateway.Open(context.Background(), &gateway.Options{Servers: tt.servers, CacheDir: t.TempDir()})
			if err == nil {
				t.Fatal("Open succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if tt.not != "" && strings.Contains(err.Error(), tt.not) {
				t.Errorf("error %q speaks of a %s, which library servers have not", err, tt.not)
			}
		})
	}
}

// TestHandlerAppliesTheConfigsAuth: an embedded gateway's handler checks
// the config's tokens, and a limited token sees only its groups, as
// `toolfold serve --http` does; without auth in the config it serves all.
func TestHandlerAppliesTheConfigsAuth(t *testing.T) {
	withAuth := `{"commands": {"echo": {"command": "echo", "actions": {"say": {}}}},
		"http": {"auth": {"tokens": [{"token": "s3cret"}, {"token": "echo-only", "groups": ["echo"]}]}},
		"disclosure": {"mode": "flat"}}`
	noAuth := `{"commands": {"echo": {"command": "echo", "actions": {"say": {}}}}, "disclosure": {"mode": "flat"}}`
	tests := []struct {
		name   string
		config string
		token  string
		status int    // of the initialize request
		tools  string // the tools listed, sorted, when status is 200
	}{
		{"no token", withAuth, "", http.StatusUnauthorized, ""},
		{"a wrong token", withAuth, "guess", http.StatusUnauthorized, ""},
		{"a good token", withAuth, "s3cret", http.StatusOK, "echo__say shout"},
		{"a token limited to a group", withAuth, "echo-only", http.StatusOK, "echo__say"},
		{"no auth in the config", noAuth, "", http.StatusOK, "echo__say shout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gw, err := gateway.Open(context.Background(), &gateway.Options{Config: writeConfig(t, tt.config), CacheDir: t.TempDir(), Servers: []*toolfold.Server{library()}})
			if err != nil {
				t.Fatal(err)
			}
			defer gw.Close()
			h, err := gw.Handler(nil)
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(init))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("initialize answered %d, want %d", resp.StatusCode, tt.status)
			}
			if tt.status != http.StatusOK {
				return
			}
			hc := &http.Client{Transport: bearer{tt.token}}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(),
				&mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: hc, DisableStandaloneSSE: true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			list, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range list.Tools {
				names = append(names, tl.Name)
			}
			slices.Sort(names)
			if got := strings.Join(names, " "); got != tt.tools {
				t.Errorf("tools = %q, want %q", got, tt.tools)
			}
		})
	}
}

// bearer adds a token to every request, when there is one.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.token != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestRunEndsWithItsContext: on a transport other than stdio, Run stops
// when its context ends and returns ctx.Err().
func TestRunEndsWithItsContext(t *testing.T) {
	gw, err := gateway.Open(context.Background(), &gateway.Options{Servers: []*toolfold.Server{library()}, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ct, st := mcp.NewInMemoryTransports()
	ran := make(chan error, 1)
	go func() { ran <- gw.Run(ctx, st) }()
	// Connecting needs the gateway's answer: Run is serving.
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	cancel()
	select {
	case err := <-ran:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute): // bounds a failure, not a pass
		t.Fatal("Run did not return after its context ended")
	}
}
