package assemble

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/config"
)

// bigCommand is a config with one command of 20 actions over four
// resources, too many for one group of the default size.
func bigCommand(extra string) string {
	var actions []string
	for _, res := range []string{"branch", "tag", "remote", "stash"} {
		for _, verb := range []string{"create", "delete", "list", "show", "rename"} {
			actions = append(actions, fmt.Sprintf(`%q: {"description": "%s a %s", "readOnly": %v}`, verb+"_"+res, verb, res, verb == "list" || verb == "show"))
		}
	}
	return `{"commands": {"vcs": {"command": "true", "description": "Version control", "actions": {` + strings.Join(actions, ",") + `}}}` + extra + `}`
}

func buildCatalog(t *testing.T, src string, env map[string]string) *Built {
	t.Helper()
	p, err := FromConfig(context.Background(), load(t, src), Switches{}, Options{LookupEnv: config.MapEnv(env)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Build()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// tree renders groups with their direct tools, to compare catalogs.
func tree(cat *catalog.Catalog) string {
	var b strings.Builder
	for _, g := range cat.Groups() {
		var tools []string
		for _, t := range g.Tools {
			tools = append(tools, string(t.ID))
		}
		fmt.Fprintf(&b, "%s derived=%v default=%s parent=%v: %s\n", g.ID, g.Derived, g.Default, g.Parent != nil, strings.Join(tools, " "))
	}
	return b.String()
}

func TestAutoGroupsSplitABigCommand(t *testing.T) {
	cat := buildCatalog(t, bigCommand(""), nil).Catalog
	vcs, _ := cat.Group("vcs")
	if len(vcs.Tools) != 0 || len(vcs.Children) != 4 {
		t.Fatalf("vcs should hand its 20 tools to four derived groups:\n%s", tree(cat))
	}
	for _, res := range []string{"branch", "tag", "remote", "stash"} {
		g, ok := cat.Group(catalog.GroupID("vcs." + res))
		if !ok || !g.Derived || len(g.Tools) != 5 || g.Default != catalog.Available {
			t.Fatalf("want derived group vcs.%s with 5 tools:\n%s", res, tree(cat))
		}
		if !strings.Contains(g.Description, "create_"+res) {
			t.Errorf("vcs.%s is described as %q, which does not name its tools", res, g.Description)
		}
	}
}

func TestAutoGroupsOffKeepsGroupsWhole(t *testing.T) {
	for _, extra := range []string{
		`, "disclosure": {"autoGroups": {"enabled": false}}`,
		`, "groups": {"vcs": {"autoGroups": false}}`,
		`, "disclosure": {"autoGroups": {"size": 20}}`,
	} {
		cat := buildCatalog(t, bigCommand(extra), nil).Catalog
		if len(cat.Groups()) != 1 || len(cat.Groups()[0].Tools) != 20 {
			t.Errorf("with %s the vcs group must stay whole:\n%s", extra, tree(cat))
		}
	}
}

// A config that declares its groups by hand gets exactly what it declared.
func TestAutoGroupsLeaveHandDeclaredGroupsAlone(t *testing.T) {
	declared := `, "groups": {
		"vcs.branches": {"tools": ["vcs__*_branch"]}, "vcs.tags": {"tools": ["vcs__*_tag"]},
		"vcs.remotes": {"tools": ["vcs__*_remote"]}, "vcs.stashes": {"tools": ["vcs__*_stash"]},
		"all": {"tools": ["vcs__*"]}}`
	on := tree(buildCatalog(t, bigCommand(declared), nil).Catalog)
	off := tree(buildCatalog(t, bigCommand(declared[:len(declared)-1]+`}, "disclosure": {"autoGroups": {"enabled": false}}`), nil).Catalog)
	if on != off {
		t.Errorf("derivation changed a hand-declared config:\n--- on:\n%s--- off:\n%s", on, off)
	}
	if strings.Contains(on, "derived=true") {
		t.Errorf("no group should be derived:\n%s", on)
	}
}

func TestAutoGroupsOverrides(t *testing.T) {
	src := bigCommand(`, "groups": {
		"vcs.branch": {"description": "Branches of the repository", "instructions": "Never delete main."},
		"vcs.refs": {"merge": ["vcs.tag", "vcs.remote"]}}`)
	b := buildCatalog(t, src, map[string]string{"MCP_GROUP_VCS_STASH": "false"})
	cat := b.Catalog
	br, ok := cat.Group("vcs.branch")
	if !ok || br.Description != "Branches of the repository" || br.Instructions != "Never delete main." || len(br.Tools) != 5 {
		t.Errorf("a declared group named like a derived one must describe it and take its tools:\n%s", tree(cat))
	}
	refs, ok := cat.Group("vcs.refs")
	if !ok || len(refs.Tools) != 10 {
		t.Errorf("vcs.refs must take the tools of vcs.tag and vcs.remote:\n%s", tree(cat))
	}
	for _, gone := range []catalog.GroupID{"vcs.tag", "vcs.remote", "vcs.stash"} {
		if _, ok := cat.Group(gone); ok {
			t.Errorf("%s should be gone (merged or excluded):\n%s", gone, tree(cat))
		}
	}
	if _, ok := cat.Tool("vcs__create_stash"); ok {
		t.Error("MCP_GROUP_VCS_STASH=false must exclude the derived group's tools")
	}
	vcs, _ := cat.Group("vcs")
	if len(vcs.Tools) != 0 {
		t.Errorf("every tool should sit in a child group:\n%s", tree(cat))
	}
	if slices.ContainsFunc(b.Warnings, func(w string) bool { return strings.Contains(w, "no tools") }) {
		t.Errorf("a declared group that describes a derived one must not be reported empty: %v", b.Warnings)
	}
}

func TestAutoGroupsMergeOfUnknownGroupWarns(t *testing.T) {
	b := buildCatalog(t, bigCommand(`, "groups": {"vcs.refs": {"merge": ["vcs.tags"]}}`), nil)
	if !slices.ContainsFunc(b.Warnings, func(w string) bool {
		return strings.Contains(w, `"vcs.tags"`) && strings.Contains(w, `did you mean "vcs.tag"`)
	}) {
		t.Errorf("want a warning naming vcs.tags and the nearest derived group: %v", b.Warnings)
	}
}

// A group switched on in every view keeps all its tools visible.
func TestAutoGroupsInheritEnabled(t *testing.T) {
	cat := buildCatalog(t, bigCommand(""), map[string]string{"MCP_GROUP_VCS": "true"}).Catalog
	for _, g := range cat.Groups() {
		if g.Default != catalog.Enabled {
			t.Errorf("%s is %s, want enabled like its parent", g.ID, g.Default)
		}
	}
}

// A group enabled in every view through initialGroups keeps all its tools
// visible once they sit in derived groups.
func TestAutoGroupsFollowInitialGroups(t *testing.T) {
	b := buildCatalog(t, bigCommand(`, "disclosure": {"initialGroups": ["vcs"]}`), nil)
	v := b.Space.New()
	if n := v.Snapshot().Tools.Len(); n != 20 {
		t.Errorf("a new view shows %d tools, want all 20 of vcs", n)
	}
}

// A declared group with rules of its own keeps its name and members; the
// derived group that wanted the name takes another.
func TestAutoGroupsAvoidDeclaredNames(t *testing.T) {
	src := bigCommand(`, "groups": {"vcs.branch": {"tools": ["vcs__show_tag"]}}`)
	cat := buildCatalog(t, src, nil).Catalog
	br, _ := cat.Group("vcs.branch")
	if br == nil || br.Derived || len(br.Tools) != 1 || br.Tools[0].ID != "vcs__show_tag" {
		t.Fatalf("the declared vcs.branch must keep its one tool:\n%s", tree(cat))
	}
	other, ok := cat.Group("vcs.branch_2")
	if !ok || !other.Derived || len(other.Tools) != 5 {
		t.Errorf("the derived branch group should be vcs.branch_2 with 5 tools:\n%s", tree(cat))
	}
}

// --groups and --exclude-groups may name derived groups; a name nothing
// derives is a warning once the tools are known.
func TestAutoGroupsFlags(t *testing.T) {
	sw := Switches{Enable: []string{"vcs.tag", "vcs.nope"}, Exclude: []string{"vcs.stash"}}
	p, err := FromConfig(context.Background(), load(t, bigCommand("")), sw, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Build()
	if err != nil {
		t.Fatal(err)
	}
	if n := b.Space.New().Snapshot().Tools.Len(); n != 5 {
		t.Errorf("--groups vcs.tag should show its 5 tools in a new view, got %d", n)
	}
	if _, ok := b.Catalog.Tool("vcs__list_stash"); ok {
		t.Error("--exclude-groups vcs.stash must drop its tools")
	}
	if !slices.ContainsFunc(b.Warnings, func(w string) bool { return strings.Contains(w, `"vcs.nope"`) }) {
		t.Errorf("want a warning about vcs.nope: %v", b.Warnings)
	}
	if _, err := FromConfig(context.Background(), load(t, bigCommand("")), Switches{Enable: []string{"nope.tag"}}, Options{}); err == nil {
		t.Error("a flag naming a group under no known group must still be refused")
	}
}

// The groups of a Go library server were written by hand: kept as given.
func TestAutoGroupsLeaveLibraryGroupsAlone(t *testing.T) {
	p, err := FromConfig(context.Background(), load(t, `{}`), Switches{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	spec := catalog.Spec{Groups: []catalog.GroupSpec{{ID: "lib", Members: catalog.Members{Sources: []string{"lib"}}}}}
	for _, res := range []string{"branch", "tag", "remote", "stash"} {
		for _, verb := range []string{"create", "delete", "list", "show"} {
			name := verb + "_" + res
			spec.Tools = append(spec.Tools, &catalog.Tool{ID: catalog.ToolID(name), Name: name, Source: "lib", Def: &mcp.Tool{Name: name}, Handler: catalogtest.Echo})
		}
	}
	p.AddSpec(spec)
	b, err := p.Build()
	if err != nil {
		t.Fatal(err)
	}
	if got := tree(b.Catalog); strings.Contains(got, "derived=true") {
		t.Errorf("a library server's group was split:\n%s", got)
	}
}
