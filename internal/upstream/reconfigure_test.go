package upstream

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/config"
)

// callText calls a tool and returns its text, failing the test on error.
func callText(t *testing.T, m *Manager, server, tool string, a map[string]any) string {
	t.Helper()
	res, err := m.CallTool(t.Context(), server, &mcp.CallToolParams{Name: tool, Arguments: a}, nil)
	if err != nil {
		t.Fatalf("%s/%s: %v", server, tool, err)
	}
	return text(res)
}

// A reload keeps an unchanged server's process, starts an added one,
// turns calls to a removed one away with ErrRemoved while the call it is
// answering finishes, and restarts a changed one.
func TestReconfigure(t *testing.T) {
	if testing.Short() {
		t.Skip("starts fixture processes")
	}
	events := newEventLog(t)
	a := fixture(t, "serve", nil)
	b := fixture(t, "serve", map[string]string{"FIXTURE_EVENT_LOG": events.path})
	m := newTestManager(t, map[string]config.ServerConfig{"a": a, "b": b}, nil)
	pidA := callText(t, m, "a", "pid", nil)

	// A call in flight on b, held until the test opens the pipe.
	gate := filepath.Join(t.TempDir(), "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	held := make(chan string, 1)
	go func() {
		res, err := m.CallTool(context.Background(), "b", &mcp.CallToolParams{Name: "gate", Arguments: map[string]any{"path": gate}}, nil)
		if err != nil {
			held <- "error: " + err.Error()
			return
		}
		held <- text(res)
	}()
	events.wait(t, "started gate")

	ch := m.Reconfigure(map[string]config.ServerConfig{"a": a, "c": fixture(t, "serve", nil)})
	if want := []string{"c"}; !slices.Equal(ch.Added, want) {
		t.Errorf("added %v, want %v", ch.Added, want)
	}
	if want := []string{"b"}; !slices.Equal(ch.Removed, want) {
		t.Errorf("removed %v, want %v", ch.Removed, want)
	}
	if want := []string{"a"}; !slices.Equal(ch.Unchanged, want) || len(ch.Changed) != 0 {
		t.Errorf("unchanged %v changed %v, want %v and none", ch.Unchanged, ch.Changed, want)
	}
	if got := callText(t, m, "a", "pid", nil); got != pidA {
		t.Errorf("a's pid is %s after the reload, want %s: an unchanged server was restarted", got, pidA)
	}
	if got := callText(t, m, "c", "add", map[string]any{"a": 1, "b": 2}); got != "3" {
		t.Errorf("c/add = %q, want 3", got)
	}
	_, err := m.CallTool(t.Context(), "b", &mcp.CallToolParams{Name: "pid"}, nil)
	if !errors.Is(err, ErrRemoved) {
		t.Errorf("a call to the removed server: %v, want ErrRemoved", err)
	}
	select {
	case <-ch.Retired:
		t.Fatal("the removed server stopped with a call in flight")
	default:
	}
	// Releasing the held call: it is answered, and then b stops.
	f, err := os.OpenFile(gate, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got := <-held; got != "released" {
		t.Errorf("the call in flight on the removed server got %q, want released", got)
	}
	<-ch.Retired
	if names := m.Names(); !slices.Equal(names, []string{"a", "c"}) {
		t.Errorf("names %v, want [a c]", names)
	}

	// A changed env restarts a, under its new config.
	a2 := fixture(t, "serve", map[string]string{"FIXTURE_MARK": "two"})
	ch = m.Reconfigure(map[string]config.ServerConfig{"a": a2, "c": m.configOf(t, "c")})
	if want := []string{"a"}; !slices.Equal(ch.Changed, want) || len(ch.Added)+len(ch.Removed) != 0 {
		t.Errorf("changed %v (added %v removed %v), want %v only", ch.Changed, ch.Added, ch.Removed, want)
	}
	<-ch.Retired
	if got := callText(t, m, "a", "env", map[string]any{"name": "FIXTURE_MARK"}); got != "two" {
		t.Errorf("a's FIXTURE_MARK = %q after the change, want two", got)
	}
	if got := callText(t, m, "a", "pid", nil); got == pidA {
		t.Errorf("a kept pid %s though its config changed", got)
	}
}

// configOf is a server's config as the Manager holds it.
func (m *Manager) configOf(t *testing.T, name string) config.ServerConfig {
	t.Helper()
	s, err := m.lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return s.cfg
}

// A prefix or group is the catalog's: changing only those keeps the process.
func TestSameServerIgnoresCatalogSettings(t *testing.T) {
	p, g := "x", "y"
	base := config.ServerConfig{Command: "srv", Args: []string{"--a"}, Env: config.SecretMap{"K": "v"}}
	for _, tc := range []struct {
		name string
		edit func(*config.ServerConfig)
		same bool
	}{
		{"identical", func(*config.ServerConfig) {}, true},
		{"prefix", func(c *config.ServerConfig) { c.Prefix = &p }, true},
		{"group", func(c *config.ServerConfig) { c.Group = &g }, true},
		{"args", func(c *config.ServerConfig) { c.Args = []string{"--b"} }, false},
		{"env value", func(c *config.ServerConfig) { c.Env = config.SecretMap{"K": "w"} }, false},
		{"url", func(c *config.ServerConfig) { c.URL = "http://127.0.0.1:1/mcp" }, false},
		{"timeout", func(c *config.ServerConfig) { c.Timeout = 5 }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := base
			b.Env = config.SecretMap{"K": "v"}
			tc.edit(&b)
			if got := sameServer(base, b); got != tc.same {
				t.Errorf("sameServer = %v, want %v", got, tc.same)
			}
		})
	}
}
