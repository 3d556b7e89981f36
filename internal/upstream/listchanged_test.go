package upstream

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/config"
)

// TestPromptAndResourceListChangesAreReported checks that an upstream's
// prompts/list_changed and resources/list_changed reach the Manager's
// callbacks, on the protocol toolfold offers upstreams (2025-11-25, where
// the server sends them on the session) and on the SDK's newest (2026-07-28,
// where the client must subscribe through subscriptions/listen), and that
// the next listing has the change: the Manager keeps no copy to go stale.
func TestPromptAndResourceListChangesAreReported(t *testing.T) {
	for _, proto := range []string{"2025-11-25", ""} {
		for _, kind := range []string{"prompts", "resources"} {
			name := kind + "/" + proto
			if proto == "" {
				name = kind + "/newest"
			}
			t.Run(name, func(t *testing.T) {
				srv := mcp.NewServer(&mcp.Implementation{Name: "lists", Version: "1"}, nil)
				noPrompt := func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
					return &mcp.GetPromptResult{}, nil
				}
				noRead := func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
					return &mcp.ReadResourceResult{}, nil
				}
				// Something of each from the start, so the server declares
				// both capabilities with listChanged.
				srv.AddPrompt(&mcp.Prompt{Name: "first"}, noPrompt)
				srv.AddResource(&mcp.Resource{Name: "first", URI: "mem://first"}, noRead)

				prompts, resources := make(chan string, 10), make(chan string, 10)
				m := newTestManager(t, map[string]config.ServerConfig{"mem": {Command: "unused"}}, &Options{
					dial:               inMemoryDialer(srv),
					ProtocolVersion:    proto,
					OnPromptsChanged:   func(s string) { prompts <- s },
					OnResourcesChanged: func(s string) { resources <- s },
				})
				ctx := context.Background()
				if _, err := m.ListPrompts(ctx, "mem"); err != nil {
					t.Fatalf("ListPrompts: %v", err)
				}

				want, other := prompts, resources
				if kind == "prompts" {
					srv.AddPrompt(&mcp.Prompt{Name: "second"}, noPrompt)
				} else {
					want, other = resources, prompts
					srv.AddResource(&mcp.Resource{Name: "second", URI: "mem://second"}, noRead)
				}
				select {
				case s := <-want:
					if s != "mem" {
						t.Errorf("reported for %q, want mem", s)
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("no %s change was reported", kind)
				}
				select {
				case <-other:
					t.Errorf("the other list was reported changed too")
				case <-time.After(100 * time.Millisecond):
				}

				var n int
				if kind == "prompts" {
					list, err := m.ListPrompts(ctx, "mem")
					if err != nil {
						t.Fatal(err)
					}
					n = len(list)
				} else {
					list, err := m.ListResources(ctx, "mem")
					if err != nil {
						t.Fatal(err)
					}
					n = len(list)
				}
				if n != 2 {
					t.Errorf("the next %s listing has %d items, want 2", kind, n)
				}
			})
		}
	}
}
