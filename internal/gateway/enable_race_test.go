package gateway_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/view"
)

// TestEnablesSurviveCatalogUpdates: enable_tools calls made while the
// catalog is replaced again and again (as upstreams finishing their start
// replace it) are all kept. An update copies each session's view into the
// new catalog; an enable that changed the view after the copy was lost
// (fixed by session.changing). The window of that race is a few
// statements wide, so this test does not catch it every run; under -race
// it also checks that enabling and migrating share no unguarded state.
func TestEnablesSurviveCatalogUpdates(t *testing.T) {
	const groups = 100
	newSpace := func() *view.Space {
		// Fresh tools each time: a catalog owns the tools it is built from.
		var spec catalog.Spec
		for i := range groups {
			id := catalog.ToolID(fmt.Sprintf("t%02d", i))
			spec.Tools = append(spec.Tools, catalogtest.Tool(string(id)))
			spec.Groups = append(spec.Groups, catalog.GroupSpec{ID: catalog.GroupID(fmt.Sprintf("g%02d", i)), Members: catalog.Members{Tools: []catalog.ToolID{id}}})
		}
		space, err := view.NewSpace(catalogtest.Build(t, spec), nil)
		if err != nil {
			t.Fatal(err)
		}
		return space
	}
	g, err := gateway.New(newSpace(), &gateway.Options{Mode: expose.Groups})
	if err != nil {
		t.Fatal(err)
	}
	// Notifications are not read here: a handler that blocked would stall
	// the session.
	cs := connectAt(t, g, "enabler", "2025-11-25", &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {}})

	// Catalogs are built beforehand, so that updates come as fast as they
	// can: every one is a chance to lose an enable.
	spaces := make([]*view.Space, 32)
	for i := range spaces {
		spaces[i] = newSpace()
	}
	stop := make(chan struct{})
	var updates sync.WaitGroup
	updates.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := g.Update(spaces[i%len(spaces)]); err != nil {
				t.Error(err)
				return
			}
		}
	})
	for i := range groups {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "enable_tools", Arguments: map[string]any{"groups": []string{fmt.Sprintf("g%02d", i)}}})
		if err != nil || res.IsError {
			t.Fatalf("enable_tools g%02d: %v %+v", i, err, res)
		}
	}
	close(stop)
	updates.Wait()

	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, tl := range list.Tools {
		have[tl.Name] = true
	}
	var lost []string
	for i := range groups {
		if name := fmt.Sprintf("t%02d", i); !have[name] {
			lost = append(lost, name)
		}
	}
	if len(lost) > 0 {
		t.Errorf("enabled groups lost to catalog updates; their tools are missing: %s", strings.Join(lost, ", "))
	}
}
