package gateway_test

import (
	"testing"

	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/tokens"
	"github.com/toolfold/toolfold/internal/view"
)

// TestContextCostOfTheSharedCatalog measures the first tools/list of every
// mode with all 35 real servers of testdata/catalogs configured, against
// the goals: search at most 2 % of the flat baseline, groups at most 5 %.
func TestContextCostOfTheSharedCatalog(t *testing.T) {
	cat := catalogtest.Shared(t)
	space, err := view.NewSpace(cat, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := gateway.New(space, &gateway.Options{Mode: expose.Flat, AnnotateDescriptions: true})
	if err != nil {
		t.Fatal(err)
	}
	cost := map[expose.Mode]int{}
	for _, m := range []expose.Mode{expose.Flat, expose.Groups, expose.Grouped, expose.Search} {
		tools, err := g.InitialTools(m)
		if err != nil {
			t.Fatal(err)
		}
		n, err := tokens.ToolsCost(tools)
		if err != nil {
			t.Fatal(err)
		}
		cost[m] = n
		t.Logf("%-8s %4d tools %7d tokens %6.2f%% of flat", m, len(tools), n, 100*float64(n)/float64(cost[expose.Flat]))
	}
	// A client of the grouping extension: its tools/list (every tool, with
	// its groups) and groups/list, before it filters.
	extTools, err := tokens.ToolsCost(g.ExtensionTools())
	if err != nil {
		t.Fatal(err)
	}
	extList, err := tokens.JSONCost(g.GroupsList())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("grouping extension: tools/list %d + groups/list %d tokens (%d groups listed) = %.2f%% of flat",
		extTools, extList, len(g.GroupsList()), 100*float64(extTools+extList)/float64(cost[expose.Flat]))
	if len(cat.Tools()) < 900 {
		t.Errorf("only %d tools loaded; the shared catalogs hold 903 without azure-all", len(cat.Tools()))
	}
	goals := map[expose.Mode]float64{expose.Search: 0.02, expose.Groups: 0.05}
	for m, goal := range goals {
		if share := float64(cost[m]) / float64(cost[expose.Flat]); share > goal {
			t.Errorf("%s mode costs %.2f%% of flat, over the goal of %.0f%%", m, 100*share, 100*goal)
		}
	}
}
