package meta_test

import (
	"encoding/json"
	"fmt"
	"maps"
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
	"github.com/toolfold/toolfold/internal/meta"
	"github.com/toolfold/toolfold/internal/tokens"
	"github.com/toolfold/toolfold/internal/view"
)

// answerTokens is the budget the meta-tools' answers keep to, in o200k
// tokens: meta.AnswerBudget in bytes is meant to stay under it.
const answerTokens = 4000

// sharedDerived is the shared catalogs as the gateway serves them by
// default: a group per server, big ones split into derived groups.
func sharedDerived(t *testing.T) *catalog.Catalog {
	t.Helper()
	before := catalogtest.Shared(t)
	spec := catalog.Spec{}
	for _, tl := range before.Tools() {
		cp := *tl
		spec.Tools = append(spec.Tools, &cp)
	}
	for _, g := range before.Roots() {
		spec.Groups = append(spec.Groups, catalog.GroupSpec{ID: g.ID, Description: g.Description, Instructions: g.Instructions, Members: catalog.Members{Sources: []string{string(g.ID)}}})
	}
	refined, _ := autogroup.Refine(spec, before, autogroup.Settings{})
	res, err := catalog.Build(refined)
	if err != nil {
		t.Fatal(err)
	}
	return res.Catalog
}

// TestAnswersKeepToTheBudget calls every meta-tool over the shared
// catalogs the way an agent does (find each tool by its name, describe
// it, every guidance topic, enable every group) and holds each answer's
// text and structured data to answerTokens.
func TestAnswersKeepToTheBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("answers for every tool and group of the shared catalogs")
	}
	cat := sharedDerived(t)
	space, err := view.NewSpace(cat, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := meta.DefaultNames()
	largest, largestWhat := 0, ""
	// The largest answer of each meta-tool in each mode, text and data
	// apart, for the evaluation's figures (logged with -v).
	type size struct {
		chars, tokens int
		what          string
	}
	by := map[string]size{}
	var mode expose.Mode
	check := func(what string, v any) {
		t.Helper()
		r := meta.Result(v, false)
		text := r.Content[0].(*mcp.TextContent).Text
		data, _ := json.Marshal(r.StructuredContent)
		tool := strings.Fields(strings.TrimPrefix(what, string(mode)+" "))[0]
		if tool == "stateless" {
			tool = "enable_tools (stateless)"
		}
		for i, part := range []string{text, string(data)} {
			got := tokens.Count(part)
			if got > largest {
				largest, largestWhat = got, what
			}
			key := fmt.Sprintf("%s %s %s", mode, tool, [2]string{"text", "structuredContent"}[i])
			if got > by[key].tokens {
				by[key] = size{len(part), got, what}
			}
			if got > answerTokens {
				t.Errorf("%s answers %d tokens, over %d:\n%.600s…", what, got, answerTokens, part)
			}
		}
	}
	defer func() {
		for _, key := range slices.Sorted(maps.Keys(by)) {
			t.Logf("%-55s %6d chars %5d tokens (%s)", key, by[key].chars, by[key].tokens, by[key].what)
		}
	}()
	for _, mode = range []expose.Mode{expose.Search, expose.Groups} {
		e, err := expose.Build(space, &expose.Options{Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		d := meta.NewDiscovery(n, e, nil)
		v := space.New()
		if mode == expose.Search {
			// describe_tools of five tools at a time, as an agent asks.
			var names []string
			for _, tl := range cat.Tools() {
				names = append(names, e.FlatWire(tl).Name)
			}
			for i := 0; i+5 <= len(names); i += 5 {
				check(fmt.Sprintf("describe_tools %v", names[i:i+5]), d.Describe(meta.DescribeArgs{Names: names[i : i+5]}))
			}
		}
		if mode == expose.Search {
			for _, topic := range []string{"overview", "groups"} {
				res, err := d.Guidance(meta.GuidanceArgs{Topic: topic}, v.Snapshot())
				if err != nil {
					t.Fatal(err)
				}
				check("guidance "+topic, res)
			}
			for _, g := range cat.Groups() {
				res, err := d.Guidance(meta.GuidanceArgs{Topic: string(g.ID)}, v.Snapshot())
				if err != nil {
					t.Fatal(err)
				}
				check("guidance "+string(g.ID), res)
			}
		}
		for i, tl := range cat.Tools() {
			name := e.FlatWire(tl).Name
			res, err := d.Find(meta.FindArgs{Query: tl.Name, Limit: 10}, v.Snapshot())
			if err != nil {
				t.Fatal(err)
			}
			check(fmt.Sprintf("%v find_tools %q", mode, tl.Name), res)
			if mode == expose.Search && i%3 == 0 {
				desc := d.Describe(meta.DescribeArgs{Names: []string{name}})
				check("describe_tools "+name, desc)
				// One tool, however big its schema, is always described.
				if text := desc.Text(); strings.Contains(text, "Not shown") || !strings.Contains(text, "## "+name) {
					t.Errorf("describe_tools %s does not describe it:\n%.300s", name, text)
				}
				res, err := d.Guidance(meta.GuidanceArgs{Topic: "tool", ToolName: name}, v.Snapshot())
				if err != nil {
					t.Fatal(err)
				}
				check("guidance tool "+name, res)
			}
		}
		if mode == expose.Groups {
			for _, g := range cat.Groups() {
				var path []string
				for cur := g; cur != nil; cur = cur.Parent {
					path = append([]string{string(cur.ID)}, path...)
				}
				res, _ := meta.DoEnable(n, space.New(), e, meta.GroupsArgs{Groups: path})
				check("enable_tools "+string(g.ID), res)
				desc, _ := meta.DoDescribeGroups(n, space.New(), e, meta.GroupsArgs{Groups: []string{string(g.ID)}})
				check("stateless enable_tools "+string(g.ID), desc)
			}
		}
	}
	t.Logf("largest answer: %d tokens (%s)", largest, largestWhat)
}

// TestGeneratedDescriptionsKeepRecall: find_tools over the shared catalogs
// as served (server summaries and derived groups' descriptions) ranks the
// search evaluation sets at least as well as over the same tools whose
// groups say nothing but their names, which is how internal/search's
// TestRecallGoals measures them: the words toolfold writes about groups
// must not cost any set recall.
func TestGeneratedDescriptionsKeepRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("ranks four evaluation sets twice")
	}
	served := sharedDerived(t)
	spec := catalog.Spec{}
	for _, tl := range served.Tools() {
		cp := *tl
		spec.Tools = append(spec.Tools, &cp)
	}
	for _, g := range served.Groups() {
		gs := catalog.GroupSpec{ID: g.ID, Derived: g.Derived}
		if g.Parent != nil {
			gs.Parent = g.Parent.ID
		}
		for _, tl := range g.Tools {
			gs.Members.Tools = append(gs.Members.Tools, tl.ID)
		}
		spec.Groups = append(spec.Groups, gs)
	}
	plain := catalogtest.Build(t, spec)
	recall := func(cat *catalog.Catalog, file string) (r1, r5 float64) {
		space, err := view.NewSpace(cat, nil)
		if err != nil {
			t.Fatal(err)
		}
		e, err := expose.Build(space, &expose.Options{Mode: expose.Search})
		if err != nil {
			t.Fatal(err)
		}
		d := meta.NewDiscovery(meta.DefaultNames(), e, nil)
		raw, err := os.ReadFile(filepath.Join("..", "search", "testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		var set []struct {
			Query  string   `json:"query"`
			Expect []string `json:"expect"`
		}
		if err := json.Unmarshal(raw, &set); err != nil {
			t.Fatal(err)
		}
		var at1, at5 int
		for _, c := range set {
			res, err := d.Find(meta.FindArgs{Query: c.Query}, space.New().Snapshot())
			if err != nil {
				t.Fatal(err)
			}
			for i, f := range res.Tools {
				if slices.Contains(c.Expect, f.Name) {
					if i == 0 {
						at1++
					}
					at5++
					break
				}
			}
		}
		return float64(at1) / float64(len(set)), float64(at5) / float64(len(set))
	}
	for _, file := range []string{"eval.json", "eval_holdout.json", "eval_holdout2.json", "eval_holdout3.json"} {
		p1, p5 := recall(plain, file)
		s1, s5 := recall(served, file)
		t.Logf("%s: recall@1 %.3f → %.3f, recall@5 %.3f → %.3f (group names only → as served)", file, p1, s1, p5, s5)
		if s1 < p1 || s5 < p5 {
			t.Errorf("%s: the served descriptions lose recall: @1 %.3f < %.3f or @5 %.3f < %.3f", file, s1, p1, s5, p5)
		}
	}
}

// TestGuidanceHidesNoDerivedMember: a derived group's description names its
// tools; wherever guidance shows a group's description cut short, each
// tool it names is either shown or the line gives the call that names it.
func TestGuidanceHidesNoDerivedMember(t *testing.T) {
	if testing.Short() {
		t.Skip("guidance for every group of the shared catalogs")
	}
	cat := sharedDerived(t)
	space, err := view.NewSpace(cat, nil)
	if err != nil {
		t.Fatal(err)
	}
	e, err := expose.Build(space, &expose.Options{Mode: expose.Search})
	if err != nil {
		t.Fatal(err)
	}
	d := meta.NewDiscovery(meta.DefaultNames(), e, nil)
	snap := space.New().Snapshot()
	checked := 0
	for _, parent := range cat.Groups() {
		page, err := d.Guidance(meta.GuidanceArgs{Topic: string(parent.ID)}, snap)
		if err != nil {
			t.Fatal(err)
		}
		text := page.Text()
		for _, child := range parent.Children {
			if !child.Derived {
				continue
			}
			checked++
			hint := fmt.Sprintf(`guidance {"topic": %q}`, child.ID)
			for _, tl := range child.Tools {
				name := e.FlatWire(tl).Name
				if strings.Contains(child.Description, name) && !strings.Contains(text, name+",") && !strings.Contains(text, name+" ") && !strings.Contains(text, name+"\n") && !strings.Contains(text, hint) {
					t.Errorf("guidance %s: %s is named in %s's description but neither shown nor pointed to", parent.ID, name, child.ID)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no derived group checked: the shared catalogs changed")
	}
}

// TestDescribingManyToolsKeepsToTheBudget: describe_tools of five tools at
// a time, over every big server of the shared catalogs, gives whole
// definitions while they fit AnswerBudget and names the rest with the
// exact call that describes them; nothing asked for is lost.
func TestDescribingManyToolsKeepsToTheBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("describes every tool of the shared catalogs")
	}
	cat := sharedDerived(t)
	space, err := view.NewSpace(cat, nil)
	if err != nil {
		t.Fatal(err)
	}
	e, err := expose.Build(space, &expose.Options{Mode: expose.Search})
	if err != nil {
		t.Fatal(err)
	}
	d := meta.NewDiscovery(meta.DefaultNames(), e, nil)
	var names []string
	for _, tl := range cat.Tools() {
		names = append(names, e.FlatWire(tl).Name)
	}
	cut := 0
	for i := 0; i+5 <= len(names); i += 5 {
		asked := names[i : i+5]
		desc := d.Describe(meta.DescribeArgs{Names: asked})
		r := meta.Result(desc, false)
		text := r.Content[0].(*mcp.TextContent).Text
		data, _ := json.Marshal(r.StructuredContent)
		for what, part := range map[string]string{"text": text, "data": string(data)} {
			// One tool is always described whole, however big.
			if len(desc.Tools) > 1 && len(part) > meta.AnswerBudget {
				t.Errorf("describe_tools %v: %s is %d bytes, over %d", asked, what, len(part), meta.AnswerBudget)
			}
		}
		got := map[string]bool{}
		for _, dt := range desc.Tools {
			got[dt.Name] = true
		}
		for _, n := range desc.NotShown {
			got[n] = true
		}
		for _, n := range asked {
			if !got[n] {
				t.Errorf("describe_tools %v lost %s", asked, n)
			}
		}
		if len(desc.NotShown) > 0 {
			cut++
			call, _ := json.Marshal(map[string][]string{"names": desc.NotShown})
			if want := "describe_tools " + string(call); desc.Next != want || !strings.Contains(text, want) {
				t.Errorf("describe_tools %v: next %q, want %q in the data and the text:\n%s", asked, desc.Next, want, text)
			}
		}
	}
	if cut == 0 {
		t.Fatal("no answer had to be cut: the test no longer tests the budget")
	}
}

// TestEnablingASplitServerGivesTheNextCalls: enable_tools of a server whose
// tools all sit in groups inside it (twilio: 197 tools in 20 groups) gives
// no tools, so it names every group inside with its size and the exact
// call that enables it, for a client with a view and for one without
// (stateless, which enables nothing and describes).
func TestEnablingASplitServerGivesTheNextCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("enables every split server of the shared catalogs")
	}
	cat := sharedDerived(t)
	space, err := view.NewSpace(cat, nil)
	if err != nil {
		t.Fatal(err)
	}
	e, err := expose.Build(space, &expose.Options{Mode: expose.Groups})
	if err != nil {
		t.Fatal(err)
	}
	n := meta.DefaultNames()
	enable := map[string]func(meta.GroupsArgs) *meta.EnableResult{
		"enable_tools": func(a meta.GroupsArgs) *meta.EnableResult {
			res, _ := meta.DoEnable(n, space.New(), e, a)
			return res
		},
		"stateless enable_tools": func(a meta.GroupsArgs) *meta.EnableResult {
			res, _ := meta.DoDescribeGroups(n, space.New(), e, a)
			return res
		},
	}
	split := 0
	for _, g := range cat.Roots() {
		if len(g.Tools) > 0 || len(g.Children) == 0 {
			continue
		}
		split++
		for what, do := range enable {
			text := do(meta.GroupsArgs{Groups: []string{string(g.ID)}}).Text()
			for _, c := range g.Children {
				tools := 0
				c.Walk(func(x *catalog.Group) { tools += len(x.Tools) })
				want := fmt.Sprintf(`- %s (%d): enable_tools {"groups":[%q]}`, c.ID, tools, c.ID)
				if !strings.Contains(text, want) {
					t.Errorf("%s %s does not give %q:\n%s", what, g.ID, want, text)
				}
			}
		}
	}
	if split == 0 {
		t.Fatal("no split server in the shared catalogs: the test tests nothing")
	}
}
