package gateway_test

import (
	"context"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/view"
)

// TestConcurrentUpdatesAgree: Update is safe for concurrent use. Two
// updates at once leave every session on the catalog the gateway reports
// as current; unserialized, one update could move the sessions after the
// other had swapped the catalog, so a client listed the loser's tools. The
// window is a few statements wide, so a run may miss it; under -race it
// also checks that updates share no unguarded state.
func TestConcurrentUpdatesAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("many sessions and updates")
	}
	spaceOf := func(tool string) *view.Space {
		space, err := view.NewSpace(catalogtest.Build(t, catalog.Spec{Tools: []*catalog.Tool{catalogtest.Tool(tool)}}), nil)
		if err != nil {
			t.Fatal(err)
		}
		return space
	}
	g, err := gateway.New(spaceOf("start"), &gateway.Options{Mode: expose.Flat})
	if err != nil {
		t.Fatal(err)
	}
	// Several sessions make the move to a new catalog long enough for
	// two updates to overlap.
	var sessions []*mcp.ClientSession
	for range 8 {
		sessions = append(sessions, connectAt(t, g, "lister", "2025-11-25", &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {}}))
	}
	for round := range 30 {
		a, b := spaceOf("a"), spaceOf("b")
		var wg sync.WaitGroup
		for _, s := range []*view.Space{a, b} {
			wg.Go(func() {
				if err := g.Update(s); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		want := g.Catalog().ToolIDs()[0]
		for i, cs := range sessions {
			list, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Tools) != 1 || list.Tools[0].Name != want {
				t.Fatalf("round %d: session %d lists %v, the gateway serves %q", round, i, list.Tools[0].Name, want)
			}
		}
	}
}
