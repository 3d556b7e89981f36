package meta_test

import (
	"encoding/json"
	"fmt"
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
	check := func(what string, v any) {
		t.Helper()
		r := meta.Result(v, false)
		text := r.Content[0].(*mcp.TextContent).Text
		data, _ := json.Marshal(r.StructuredContent)
		for _, part := range []string{text, string(data)} {
			got := tokens.Count(part)
			if got > largest {
				largest, largestWhat = got, what
			}
			if got > answerTokens {
				t.Errorf("%s answers %d tokens, over %d:\n%.600s…", what, got, answerTokens, part)
			}
		}
	}
	for _, mode := range []expose.Mode{expose.Search, expose.Groups} {
		e, err := expose.Build(space, &expose.Options{Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		d := meta.NewDiscovery(n, e, nil)
		v := space.New()
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
				res, _ := meta.DoEnable(space.New(), e, meta.GroupsArgs{Groups: path})
				check("enable_tools "+string(g.ID), res)
				desc, _ := meta.DoDescribeGroups(n, space.New(), e, meta.GroupsArgs{Groups: []string{string(g.ID)}})
				check("stateless enable_tools "+string(g.ID), desc)
			}
		}
	}
	t.Logf("largest answer: %d tokens (%s)", largest, largestWhat)
}
