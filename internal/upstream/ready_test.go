package upstream

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/config"
)

// readyWatch is a slog handler that, when the server warns that it cut
// long descriptions (which happens while the list is recorded, never
// under the server's lock), checks what a caller could see at that moment.
type readyWatch struct {
	slog.Handler
	check func()
}

// Enabled is true whatever the handler below says: the check must run.
func (readyWatch) Enabled(context.Context, slog.Level) bool { return true }

func (h readyWatch) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "upstream tool descriptions longer than toolfold keeps were cut" {
		h.check()
	}
	return h.Handler.Handle(ctx, r)
}

func (h readyWatch) WithAttrs(as []slog.Attr) slog.Handler {
	return readyWatch{h.Handler.WithAttrs(as), h.check}
}

func (h readyWatch) WithGroup(name string) slog.Handler {
	return readyWatch{h.Handler.WithGroup(name), h.check}
}

// A server is never ready without its tools: the list is recorded in the
// same step as the state. Before, the start published "ready" and then
// recorded the list, and a caller in between got no tools and no error
// (seen failing: the check below found the server ready with no list).
func TestServerIsNeverReadyBeforeItsTools(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	fx := fixture(t, "bulk", map[string]string{"FIXTURE_TOOLS": "3", "FIXTURE_DESCRIPTION_BYTES": "100"})
	var (
		mu      sync.Mutex
		checked int
		bad     []string
		m       *Manager
	)
	check := func() {
		s := m.servers["fx"]
		s.mu.Lock()
		ready, known := s.phase == phaseReady, s.known
		s.mu.Unlock()
		mu.Lock()
		defer mu.Unlock()
		checked++
		if ready && !known {
			bad = append(bad, "ready with no tool list")
		}
	}
	log := slog.New(readyWatch{slog.DiscardHandler, check})
	m = newTestManager(t, map[string]config.ServerConfig{"fx": fx}, &Options{ProtocolVersion: "2025-11-25", Logger: log,
		// So descriptions are cut, and the cut is logged while the list
		// is recorded.
		MaxDescriptionBytes: 10})
	tools, err := m.Tools(context.Background(), "fx")
	if err != nil || len(tools) != 5 {
		t.Fatalf("Tools: %d tools, %v; want 5", len(tools), err)
	}
	mu.Lock()
	defer mu.Unlock()
	if checked == 0 {
		t.Fatal("no description was cut, so nothing was checked")
	}
	if len(bad) > 0 {
		t.Errorf("a caller could see the server %v", bad)
	}
}

// A list read after a tools/list_changed that came during a start is
// newer than the start's own: recorded first, it stays when the start's
// older list comes in after it. Before, the last writer won.
func TestOlderToolListDoesNotOverwriteNewer(t *testing.T) {
	m := newTestManager(t, map[string]config.ServerConfig{"fx": fixture(t, "bulk", nil)}, nil)
	s := m.servers["fx"]
	c := &connection{s: s, gen: s.startGen} // a connection of the current start
	list := func(names ...string) []*mcp.Tool {
		var tools []*mcp.Tool
		for _, n := range names {
			tools = append(tools, &mcp.Tool{Name: n, InputSchema: map[string]any{"type": "object"}})
		}
		return tools
	}
	for _, tc := range []struct {
		name       string
		newerFirst bool
	}{
		{"newer recorded first", true},
		{"in order", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := s.beginList()   // the start's read
			refresh := s.beginList() // the re-read after list_changed
			if tc.newerFirst {
				s.setTools(c, refresh, nil, list("new"), nil)
				s.setTools(c, start, nil, list("old"), nil)
			} else {
				s.setTools(c, start, nil, list("old"), nil)
				s.setTools(c, refresh, nil, list("new"), nil)
			}
			got, ok := s.knownTools()
			if !ok || len(got) != 1 || got[0].Name != "new" {
				t.Errorf("recorded %v (known %v); want the newer list [new]", got, ok)
			}
		})
	}
}
