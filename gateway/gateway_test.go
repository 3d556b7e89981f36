package gateway_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

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

// TestHandlerSaysItChecksNoToken: a config's http.auth tokens are not
// applied by Handler, and it says so rather than serve silently open.
func TestHandlerSaysItChecksNoToken(t *testing.T) {
	cfg := writeConfig(t, `{"commands": {"echo": {"command": "echo", "actions": {"say": {}}}}, "http": {"auth": {"tokens": [{"token": "s3cret"}]}}}`)
	var logs strings.Builder
	gw, err := gateway.Open(context.Background(), &gateway.Options{Config: cfg, CacheDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	if _, err := gw.Handler(nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "http.auth token(s), which Gateway.Handler does not check") {
		t.Errorf("Handler serves a config with tokens without a word: %q", logs.String())
	}
	if strings.Contains(logs.String(), "s3cret") {
		t.Errorf("the warning shows the token: %q", logs.String())
	}
}
