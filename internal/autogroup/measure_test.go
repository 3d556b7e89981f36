package autogroup_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/autogroup"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/tokens"
	"github.com/toolfold/toolfold/internal/view"
)

// derivedShared is the shared catalog (a group per server, as a config
// with no groups section makes) refined with the default settings.
func derivedShared(t *testing.T) (before, after *catalog.Catalog) {
	t.Helper()
	before = catalogtest.Shared(t)
	spec := catalog.Spec{}
	for _, tl := range before.Tools() {
		cp := *tl
		spec.Tools = append(spec.Tools, &cp)
	}
	for _, g := range before.Roots() {
		spec.Groups = append(spec.Groups, catalog.GroupSpec{ID: g.ID, Description: g.Description, Members: catalog.Members{Sources: []string{string(g.ID)}}})
	}
	refined, warnings := autogroup.Refine(spec, before, autogroup.Settings{})
	if len(warnings) > 0 {
		t.Fatalf("warnings: %v", warnings)
	}
	res, err := catalog.Build(refined)
	if err != nil {
		t.Fatal(err)
	}
	return before, res.Catalog
}

// home is the one group that holds a tool directly.
func home(t *testing.T, tl *catalog.Tool) *catalog.Group {
	t.Helper()
	if len(tl.Groups) != 1 {
		t.Fatalf("%s sits in %d groups, want 1", tl.ID, len(tl.Groups))
	}
	return tl.Groups[0]
}

// TestSharedCatalogFigures measures what derivation gives the shared
// catalogs (issue 12) and holds the figures to floors:
//   - the largest group a tool sits in, and the share of tools that sit
//     in a group of at most the target size;
//   - the tokens a model reads to reach a tool in groups mode, enabling
//     the path from the server's group to the tool's group one call at a
//     time (each enable_tools result plus the final tools/list), against
//     enabling the whole server group;
//   - group@5 of find_tools at the level of the groups tools sit in.
func TestSharedCatalogFigures(t *testing.T) {
	if testing.Short() {
		t.Skip("measures every tool of the shared catalogs")
	}
	before, after := derivedShared(t)
	size := autogroup.DefaultSize

	// Structure.
	largest, largestID, within := 0, catalog.GroupID(""), 0
	leaves, derived := 0, 0
	for _, g := range after.Groups() {
		if len(g.Tools) > largest {
			largest, largestID = len(g.Tools), g.ID
		}
		if len(g.Children) == 0 {
			leaves++
		}
		if g.Derived {
			derived++
		}
	}
	for _, tl := range after.Tools() {
		// A server just over the target size is left whole on purpose:
		// a split would put a step before each of its tools.
		if h := home(t, tl); len(h.Tools) <= size || (h.Parent == nil && len(h.Tools) <= size+size/2) {
			within++
		}
	}
	share := float64(within) / float64(len(after.Tools()))
	t.Logf("%d tools, %d groups (%d derived, %d leaves); largest group %s with %d tools; %d tools (%.1f%%) sit in groups of at most %d",
		len(after.Tools()), len(after.Groups()), derived, leaves, largestID, largest, within, 100*share, size)
	// A group may stay over the target only when derivation judged its
	// tools unsplittable and left it whole.
	for _, g := range after.Groups() {
		if len(g.Tools) > size {
			t.Logf("left whole: %s with %d tools", g.ID, len(g.Tools))
			if g.Parent == nil && len(g.Tools) <= size+size/2 {
				continue
			}
			if slices.ContainsFunc(g.Children, func(c *catalog.Group) bool { return c.Derived }) {
				t.Errorf("%s was split but still holds %d tools directly", g.ID, len(g.Tools))
			}
		}
	}
	if share < 0.97 {
		t.Errorf("only %.1f%% of tools sit in groups of at most %d, want at least 97%%", 100*share, size)
	}

	// Tokens to reach each tool.
	costBefore := reachCosts(t, before)
	costAfter := reachCosts(t, after)
	worstGroup, worstCost := "", 0
	for i, tl := range after.Tools() {
		if costAfter[i] > worstCost {
			worstGroup, worstCost = string(home(t, tl).ID), costAfter[i]
		}
	}
	t.Logf("the costliest group to reach is %s (%d tokens)", worstGroup, worstCost)
	for _, server := range []string{"twilio", "azure", "cloudflare", "grafana"} {
		var b, a []int
		depth := 0
		for i, tl := range after.Tools() {
			if tl.Source == server {
				b, a = append(b, costBefore[i]), append(a, costAfter[i])
				depth = max(depth, home(t, tl).Depth+1)
			}
		}
		mb, wb := medianWorst(b)
		ma, wa := medianWorst(a)
		t.Logf("%s: tokens to reach a tool: median %d, worst %d (whole server: %d, %d); at most %d groups to enable", server, ma, wa, mb, wb, depth)
	}
	med0, worst0 := medianWorst(costBefore)
	med1, worst1 := medianWorst(costAfter)
	t.Logf("tokens to reach a tool (enable path + list): today median %d, worst %d; derived median %d, worst %d", med0, worst0, med1, worst1)
	if med1 >= med0 || worst1 >= worst0 {
		t.Errorf("derived groups must make reaching a tool cheaper: median %d→%d, worst %d→%d", med0, med1, worst0, worst1)
	}

	// group@5 of find_tools, at the level of the groups tools sit in.
	g0 := groupRecall(t, before, false)
	g1 := groupRecall(t, after, false)
	t.Logf("find_tools group@5 (the group holding the right tool among the five returned): per server %.3f; derived groups %.3f (any ancestor %.3f)", g0.exact, g1.exact, g1.ancestor)
	a0 := groupRecall(t, before, true)
	a1 := groupRecall(t, after, true)
	t.Logf("with the agent's phrasings as queries: per server %.3f; derived groups %.3f (any ancestor %.3f)", a0.exact, a1.exact, a1.ancestor)
	// The floor sits just under what derivation reaches today (0.894);
	// raise it as names and descriptions improve, never lower it.
	if g1.exact < 0.88 {
		t.Errorf("group@5 at the level of derived groups fell to %.3f, below the floor 0.88", g1.exact)
	}
}

func medianWorst(costs []int) (int, int) {
	s := slices.Clone(costs)
	slices.Sort(s)
	return s[len(s)/2], s[len(s)-1]
}

// reachCosts returns, per tool, the tokens a groups-mode client reads to
// reach it (and checks that it is then listed): the result of enabling each group on the path from the top
// (one call per level, as a model that discovers the children does) and
// the tools/list that follows. Tools sharing a group share the figure.
func reachCosts(t *testing.T, cat *catalog.Catalog) []int {
	t.Helper()
	gw := newGateway(t, cat)
	byGroup := map[catalog.GroupID]int{}
	var out []int
	for _, tl := range cat.Tools() {
		h := home(t, tl)
		cost, ok := byGroup[h.ID]
		if !ok {
			cost = reachCost(t, gw, h)
			byGroup[h.ID] = cost
		}
		out = append(out, cost)
	}
	return out
}

func reachCost(t *testing.T, gw *gateway.Gateway, g *catalog.Group) int {
	t.Helper()
	ctx := context.Background()
	cs := connect(t, gw)
	defer cs.Close()
	path := g.Ancestors() // nearest first
	slices.Reverse(path)
	path = append(path, g)
	total := 0
	enabled := map[string]bool{}
	for _, step := range path {
		if enabled[string(step.ID)] {
			continue // enabling its parent enabled it too
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "enable_tools", Arguments: map[string]any{"groups": []string{string(step.ID)}}})
		if err != nil || res.IsError {
			t.Fatalf("enable %s: %v %v", step.ID, err, res)
		}
		if data, ok := res.StructuredContent.(map[string]any); ok {
			if names, ok := data["enabled"].([]any); ok {
				for _, n := range names {
					enabled[fmt.Sprint(n)] = true
				}
			}
		}
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				total += tokens.Count(tc.Text)
			}
		}
	}
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The path reaches every tool of the group: each is now listed.
	listed := map[string]bool{}
	for _, tl := range list.Tools {
		listed[tl.Name] = true
	}
	expo, ok := gw.Exposure(expose.Groups)
	if !ok {
		t.Fatal("no groups exposure")
	}
	for _, tl := range g.Tools {
		if name := expo.FlatWire(tl).Name; !listed[name] {
			t.Errorf("after enabling %s, %s (%s) is not listed", g.ID, tl.ID, name)
		}
	}
	n, err := tokens.ToolsCost(list.Tools)
	if err != nil {
		t.Fatal(err)
	}
	return total + n
}

func newGateway(t *testing.T, cat *catalog.Catalog) *gateway.Gateway {
	t.Helper()
	space, err := view.NewSpace(cat, &view.Options{})
	if err != nil {
		t.Fatal(err)
	}
	gw, err := gateway.New(space, &gateway.Options{Name: "measure", Version: "0", Mode: expose.Groups, AnnotateDescriptions: true})
	if err != nil {
		t.Fatal(err)
	}
	return gw
}

func connect(t *testing.T, gw *gateway.Gateway) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := gw.Connect(ctx, gateway.ClientInfo{Name: "measure"}, st)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "measure"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

type recall struct{ exact, ancestor float64 }

// groupRecall runs every request of the search evaluation sets through
// find_tools and counts how often the group a right tool sits in is
// among the groups returned (exact), or any group above it (ancestor).
func groupRecall(t *testing.T, cat *catalog.Catalog, agent bool) recall {
	t.Helper()
	gw := newGateway(t, cat)
	cs := connect(t, gw)
	defer cs.Close()
	// The four evaluation sets of internal/search (eval_test.go's
	// evalSets); their .agent.json companions add the phrasings an agent
	// sends along, which find_tools takes as "queries".
	files := []string{"eval.json", "eval_holdout.json", "eval_holdout2.json", "eval_holdout3.json"}
	var cases, exact, ancestor int
	for _, name := range files {
		f := filepath.Join("..", "search", "testdata", name)
		phrasings := map[string][]string{}
		if agent {
			raw, err := os.ReadFile(strings.TrimSuffix(f, ".json") + ".agent.json")
			if err != nil {
				t.Fatal(err)
			}
			var set []struct {
				Query     string   `json:"query"`
				Phrasings []string `json:"phrasings"`
			}
			if err := json.Unmarshal(raw, &set); err != nil {
				t.Fatal(err)
			}
			for _, c := range set {
				phrasings[c.Query] = c.Phrasings
			}
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var set []struct {
			Query  string   `json:"query"`
			Expect []string `json:"expect"`
		}
		if err := json.Unmarshal(raw, &set); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, c := range set {
			cases++
			args := map[string]any{"query": c.Query, "limit": 5}
			if agent {
				args["queries"] = phrasings[c.Query]
			}
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "find_tools", Arguments: args})
			if err != nil || res.IsError {
				t.Fatalf("find_tools %q: %v %v", c.Query, err, res)
			}
			var found struct {
				Groups []struct {
					Name string `json:"name"`
				} `json:"groups"`
			}
			b, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(b, &found); err != nil {
				t.Fatal(err)
			}
			hitExact, hitAncestor := false, false
			for _, e := range c.Expect {
				tl, ok := cat.Tool(catalog.ToolID(e))
				if !ok {
					continue
				}
				h := home(t, tl)
				for _, g := range found.Groups {
					if g.Name == string(h.ID) {
						hitExact = true
					}
					if g.Name == string(h.ID) || strings.HasPrefix(string(h.ID), g.Name+".") {
						hitAncestor = true
					}
				}
			}
			if hitExact {
				exact++
			}
			if hitAncestor {
				ancestor++
			}
		}
	}
	t.Logf("%d requests from %d evaluation sets", cases, len(files))
	return recall{exact: float64(exact) / float64(cases), ancestor: float64(ancestor) / float64(cases)}
}
