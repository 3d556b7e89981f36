package autogroup

import (
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
)

// vcsSpec is one server group of 20 tools over four resources: more than
// a server stays whole with.
func vcsSpec() catalog.Spec {
	var spec catalog.Spec
	for _, res := range []string{"branch", "tag", "remote", "stash"} {
		for _, verb := range []string{"create", "delete", "list", "show", "rename"} {
			name := verb + "_" + res
			spec.Tools = append(spec.Tools, &catalog.Tool{ID: catalog.ToolID("vcs__" + name), Name: name, Source: "vcs",
				Def: &mcp.Tool{Name: name, Description: fmt.Sprintf("%s a %s", verb, res)}, Handler: catalogtest.Echo})
		}
	}
	spec.Groups = []catalog.GroupSpec{{ID: "vcs", Members: catalog.Members{Sources: []string{"vcs"}}}}
	return spec
}

func refine(t *testing.T, spec catalog.Spec, s Settings) (*catalog.Catalog, []string) {
	t.Helper()
	first := catalogtest.Build(t, spec)
	refined, warnings := Refine(spec, first, s)
	res, err := catalog.Build(refined)
	if err != nil {
		t.Fatal(err)
	}
	return res.Catalog, warnings
}

func TestRefineWarnsOnlyWhenAllToolsAreKnown(t *testing.T) {
	s := Settings{Merge: map[catalog.GroupID][]catalog.GroupID{"vcs.refs": {"vcs.tags"}}, Named: []string{"vcs.nope"}}
	spec := vcsSpec()
	spec.Groups = append(spec.Groups, catalog.GroupSpec{ID: "vcs.refs", Parent: "vcs"})
	_, warnings := refine(t, spec, s)
	if len(warnings) != 2 || !strings.Contains(warnings[0], `did you mean "vcs.tag"`) || !strings.Contains(warnings[1], `"vcs.nope"`) {
		t.Errorf("want warnings about vcs.tags and vcs.nope, got %q", warnings)
	}
	spec.PendingSources = []string{"other"}
	if _, warnings := refine(t, spec, s); len(warnings) != 0 {
		t.Errorf("with a server still starting, names that derive nothing yet must not warn: %q", warnings)
	}
}

func TestRefineStates(t *testing.T) {
	spec := vcsSpec()
	spec.Groups[0].Default = catalog.Enabled
	cat, _ := refine(t, spec, Settings{State: func(id catalog.GroupID, inherited catalog.State) catalog.State {
		if id == "vcs.tag" {
			return catalog.Excluded
		}
		return inherited
	}})
	if g, ok := cat.Group("vcs.branch"); !ok || g.Default != catalog.Enabled {
		t.Errorf("vcs.branch should inherit enabled from vcs: %+v", g)
	}
	if _, ok := cat.Group("vcs.tag"); ok {
		t.Error("vcs.tag was switched off")
	}
	if _, ok := cat.Tool("vcs__list_tag"); ok {
		t.Error("the tools of an excluded derived group must go with it")
	}
}

func TestRefineSkipsGroupsItMayNotSplit(t *testing.T) {
	cat, _ := refine(t, vcsSpec(), Settings{Derive: func(g *catalog.Group) bool { return g.ID != "vcs" }})
	if len(cat.Groups()) != 1 {
		t.Errorf("vcs may not be split, got %v", cat.GroupIDs())
	}
}
