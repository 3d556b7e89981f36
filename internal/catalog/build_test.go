package catalog_test

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
)

func tools(ids ...string) []*catalog.Tool {
	var out []*catalog.Tool
	for _, id := range ids {
		out = append(out, catalogtest.Tool(id))
	}
	return out
}

func TestBuildRefusesBrokenSpecs(t *testing.T) {
	tests := []struct {
		name string
		spec catalog.Spec
		want []string // every phrase must appear in the error
	}{
		{
			name: "unknown parent with suggestion",
			spec: catalog.Spec{Tools: tools("a"), Groups: []catalog.GroupSpec{{ID: "github"}, {ID: "issues", Parent: "gihub"}}},
			want: []string{`group "issues" names parent "gihub", which does not exist (did you mean "github"?)`},
		},
		{
			name: "cycle",
			spec: catalog.Spec{Groups: []catalog.GroupSpec{{ID: "a", Parent: "c"}, {ID: "b", Parent: "a"}, {ID: "c", Parent: "b"}, {ID: "d"}}},
			want: []string{"cycle", "a → c → b → a"},
		},
		{
			name: "duplicate tool",
			spec: catalog.Spec{Tools: append(tools("x"), &catalog.Tool{ID: "x", Source: "other", Def: &mcp.Tool{Name: "x"}, Handler: catalogtest.Echo})},
			want: []string{`tool "x" is offered twice`},
		},
		{
			name: "duplicate group and empty names, all reported",
			spec: catalog.Spec{Tools: append(tools("a"), &catalog.Tool{Def: &mcp.Tool{Name: "nameless"}, Handler: catalogtest.Echo}), Groups: []catalog.GroupSpec{{ID: "g"}, {ID: "g"}, {ID: ""}}},
			want: []string{`group "g" is defined twice`, "group #3 has an empty name", `tool #2 ("nameless") has an empty ID`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := catalog.Build(tt.spec)
			if err == nil {
				t.Fatal("Build succeeded, want an error")
			}
			for _, phrase := range tt.want {
				if !strings.Contains(err.Error(), phrase) {
					t.Errorf("error %q lacks %q", err, phrase)
				}
			}
		})
	}
}

func TestMembershipRules(t *testing.T) {
	src := func(id, source string) *catalog.Tool {
		tl := catalogtest.Tool(id)
		tl.Source = source
		return tl
	}
	meta := catalogtest.Tool("gh__labels")
	meta.Source = "gh"
	meta.Def.Meta = mcp.Meta{catalog.MetaGroupsKey: []any{"labels"}, "tags": []any{"triage"}}
	res, err := catalog.Build(catalog.Spec{
		Tools: []*catalog.Tool{src("gh__create_issue", "gh"), src("gh__list_issues", "gh"), src("gh__get_repo", "gh"), src("fs__read", "fs"), meta, catalogtest.Tool("loose")},
		Groups: []catalog.GroupSpec{
			{ID: "issues", Members: catalog.Members{Globs: []string{"gh__*issue*"}}},
			{ID: "repos", Members: catalog.Members{Prefixes: []string{"gh__get_"}}},
			{ID: "fs", Members: catalog.Members{Sources: []string{"fs"}}},
			{ID: "triage", Members: catalog.Members{Tags: []string{"triage"}}},
			{ID: "nothing", Members: catalog.Members{Globs: []string{"zz*"}, Prefixes: []string{"qq"}}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	cat := res.Catalog
	want := map[catalog.GroupID]string{
		"issues": "gh__create_issue,gh__list_issues", "repos": "gh__get_repo", "fs": "fs__read",
		"triage": "gh__labels", "labels": "gh__labels", "nothing": "",
	}
	for id, members := range want {
		g, ok := cat.Group(id)
		if !ok {
			t.Errorf("group %q missing", id)
			continue
		}
		var ids []string
		for _, tl := range g.Tools {
			ids = append(ids, string(tl.ID))
		}
		if got := strings.Join(ids, ","); got != members {
			t.Errorf("group %q = %q, want %q", id, got, members)
		}
	}
	if u := cat.Ungrouped(); len(u) != 1 || u[0].ID != "loose" {
		t.Errorf("ungrouped = %v", u)
	}
	joined := strings.Join(res.Warnings, "\n")
	for _, phrase := range []string{`tool pattern "zz*" matches no tool`, `prefix "qq" matches no tool`, `group "nothing" has no tools`} {
		if !strings.Contains(joined, phrase) {
			t.Errorf("warnings %q lack %q", joined, phrase)
		}
	}
}

func TestExcludedGroupsDropTheirTools(t *testing.T) {
	cat := catalogtest.Build(t, catalog.Spec{
		Tools: tools("a", "b", "c", "d"),
		Groups: []catalog.GroupSpec{
			{ID: "admin", Default: catalog.Excluded, Members: catalog.Members{Tools: []catalog.ToolID{"a"}}},
			{ID: "admin.deep", Parent: "admin", Members: catalog.Members{Tools: []catalog.ToolID{"b"}}},
			{ID: "users", Members: catalog.Members{Tools: []catalog.ToolID{"a", "c"}}},
		},
	})
	if got := strings.Join(cat.ToolIDs(), ","); got != "c,d" {
		t.Errorf("tools = %q, want c,d: an excluded tool is gone even from other groups", got)
	}
	if got := strings.Join(cat.GroupIDs(), ","); got != "users" {
		t.Errorf("groups = %q", got)
	}
	if ex := cat.Excluded(); len(ex) != 2 || ex[0].ID != "admin" || ex[0].Tools != 1 {
		t.Errorf("excluded = %+v", ex)
	}
}

func TestReadOnlyKeepsOnlyReadOnlyTools(t *testing.T) {
	ro := catalogtest.Tool("ro")
	ro.Def.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true}
	cat := catalogtest.Build(t, catalog.Spec{Tools: append(tools("rw"), ro), ReadOnly: true})
	if got := strings.Join(cat.ToolIDs(), ","); got != "ro" {
		t.Errorf("tools = %q, want ro", got)
	}
}

func TestTreeOrderAndNames(t *testing.T) {
	cat := catalogtest.Tree(t)
	if got := strings.Join(cat.GroupIDs(), ","); got != "code,code.repos,code.repos.br,docs" {
		t.Errorf("order = %q", got)
	}
	br, _ := cat.Group("code.repos.br")
	if br.LocalName() != "br" || br.Depth != 2 || len(br.Ancestors()) != 2 {
		t.Errorf("br: local %q depth %d", br.LocalName(), br.Depth)
	}
	a, _ := cat.Tool("a")
	if len(a.Groups) != 2 {
		t.Errorf("a is in %d groups, want 2", len(a.Groups))
	}
	for i, tl := range cat.Tools() {
		if tl.Index != i {
			t.Fatalf("tool %q has index %d at %d", tl.ID, tl.Index, i)
		}
	}
}

func TestNearest(t *testing.T) {
	cands := []string{"github", "gitlab", "docs", "filesystem", "code.repos"}
	tests := []struct{ in, want string }{
		{"gihub", "github"},
		{"DOCS", "docs"},
		{"repos", "code.repos"},
		{"zzzzzz", ""},
	}
	for _, tt := range tests {
		got := catalog.Nearest(tt.in, cands, 1)
		if strings.Join(got, "") != tt.want {
			t.Errorf("Nearest(%q) = %v, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSubtree(t *testing.T) {
	cat := catalogtest.Tree(t)
	sub, err := cat.Subtree("code.repos", false)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(sub.ToolIDs(), ","); got != "c,d,e" {
		t.Errorf("tools = %q", got)
	}
	if got := strings.Join(sub.GroupIDs(), ","); got != "code.repos,code.repos.br" {
		t.Errorf("groups = %q", got)
	}
	if g, _ := sub.Group("code.repos"); g.Parent != nil {
		t.Error("the subtree's root must be top-level")
	}
	if len(sub.Ungrouped()) != 0 {
		t.Error("a subtree has no ungrouped tools")
	}
	if _, err := cat.Subtree("cod", false); err == nil || !strings.Contains(err.Error(), `did you mean "code"`) {
		t.Errorf("err = %v", err)
	}
}

func TestPendingSourcesAreNotReportedEmpty(t *testing.T) {
	res, err := catalog.Build(catalog.Spec{
		Tools:          tools("a"),
		Groups:         []catalog.GroupSpec{{ID: "slow", Members: catalog.Members{Sources: []string{"slow"}}}, {ID: "gone", Members: catalog.Members{Sources: []string{"gone"}}}},
		PendingSources: []string{"slow"},
	})
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(res.Warnings, "\n")
	if strings.Contains(joined, `"slow"`) {
		t.Errorf("a pending server was reported: %s", joined)
	}
	if !strings.Contains(joined, `server "gone" offers no tool`) || !strings.Contains(joined, `group "gone" has no tools`) {
		t.Errorf("a server that offers nothing must still be reported: %s", joined)
	}
}

func TestLimit(t *testing.T) {
	cat := catalogtest.Tree(t)
	tests := []struct {
		ids           []catalog.GroupID
		tools, groups string
	}{
		{[]catalog.GroupID{"docs"}, "a,f,u", "docs"},
		{[]catalog.GroupID{"code.repos", "docs"}, "a,c,d,e,f,u", "code.repos,code.repos.br,docs"},
		// A group inside another named one stays inside it, once.
		{[]catalog.GroupID{"code.repos", "code"}, "a,b,c,d,e,u", "code,code.repos,code.repos.br"},
		{[]catalog.GroupID{"docs", "docs"}, "a,f,u", "docs"},
	}
	for _, tt := range tests {
		sub, err := cat.Limit(tt.ids, false)
		if err != nil {
			t.Fatalf("%v: %v", tt.ids, err)
		}
		tools := sub.ToolIDs()
		slices.Sort(tools)
		if got := strings.Join(tools, ","); got != tt.tools {
			t.Errorf("%v: tools = %q, want %q", tt.ids, got, tt.tools)
		}
		groups := sub.GroupIDs()
		slices.Sort(groups)
		if got := strings.Join(groups, ","); got != tt.groups {
			t.Errorf("%v: groups = %q, want %q", tt.ids, got, tt.groups)
		}
	}
	if g, _ := mustLimit(t, cat, "code.repos", "code").Group("code.repos"); g.Parent == nil || g.Parent.ID != "code" {
		t.Error("code.repos lost its parent code, which was named too")
	}
	if a, _ := mustLimit(t, cat, "docs").Tool("a"); len(a.Groups) != 1 || a.Groups[0].ID != "docs" {
		t.Error("a tool keeps only the groups the limit names")
	}
	if _, err := cat.Limit([]catalog.GroupID{"docs", "cod"}, false); err == nil || !strings.Contains(err.Error(), `did you mean "code"`) {
		t.Errorf("unknown group: err = %v", err)
	}
}

func mustLimit(t *testing.T, cat *catalog.Catalog, ids ...catalog.GroupID) *catalog.Catalog {
	t.Helper()
	sub, err := cat.Limit(ids, false)
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

// A catalog knows which sources are still starting, which groups wait for
// them, whether they may bring ungrouped tools, and why failed ones failed.
func TestPendingSources(t *testing.T) {
	tool := func(id, src string) *catalog.Tool {
		return &catalog.Tool{ID: catalog.ToolID(id), Source: src, Def: &mcp.Tool{Name: id, InputSchema: map[string]any{"type": "object"}}, Handler: catalogtest.Echo}
	}
	tests := []struct {
		name             string
		spec             catalog.Spec
		pending          []string
		groupPending     map[catalog.GroupID]bool
		pendingUngrouped bool
		// awaits are names the catalog lacks: whether they may still come.
		awaits map[catalog.GroupID]bool
	}{
		{name: "nothing pending", spec: catalog.Spec{Tools: []*catalog.Tool{tool("a__x", "a")}, Groups: []catalog.GroupSpec{{ID: "a", Members: catalog.Members{Sources: []string{"a"}}}}},
			groupPending: map[catalog.GroupID]bool{"a": false},
			// Nothing more comes: a name that is not here will not be.
			awaits: map[catalog.GroupID]bool{"a": false, "a.sub": false, "nope.sub": false}},
		{name: "a server's group waits, with its parent",
			spec: catalog.Spec{PendingSources: []string{"mem", "b"}, UnavailableSources: map[string]string{"gone": "exited"},
				Groups: []catalog.GroupSpec{{ID: "kb"}, {ID: "kb.mem", Parent: "kb", Members: catalog.Members{Sources: []string{"mem"}}}, {ID: "b", Members: catalog.Members{Sources: []string{"b"}}}, {ID: "gone", Members: catalog.Members{Sources: []string{"gone"}}}}},
			pending: []string{"b", "mem"}, groupPending: map[catalog.GroupID]bool{"kb": true, "kb.mem": true, "b": true, "gone": false},
			// Groups derived or declared under a pending server's group (or
			// one that failed, which may start later) may still come; a name
			// under no group here, or a top-level one, may not.
			awaits: map[catalog.GroupID]bool{"kb.mem.x": true, "kb.mem.x.y": true, "b.x": true, "gone.x": true, "kb": false, "other": false, "other.x": false}},
		{name: "a server no group takes whole may bring ungrouped tools",
			spec:    catalog.Spec{PendingSources: []string{"loose"}, Groups: []catalog.GroupSpec{{ID: "g", Members: catalog.Members{Globs: []string{"loose__*"}}}}},
			pending: []string{"loose"}, groupPending: map[catalog.GroupID]bool{"g": false}, pendingUngrouped: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := catalog.Build(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			c := res.Catalog
			if got := c.Pending(); !slices.Equal(got, tt.pending) {
				t.Errorf("Pending = %v, want %v", got, tt.pending)
			}
			for id, want := range tt.groupPending {
				if got := c.GroupPending(id); got != want {
					t.Errorf("GroupPending(%s) = %v, want %v", id, got, want)
				}
			}
			for id, want := range tt.awaits {
				if got := c.Awaits(id); got != want {
					t.Errorf("Awaits(%s) = %v, want %v", id, got, want)
				}
			}
			if got := c.PendingUngrouped(); got != tt.pendingUngrouped {
				t.Errorf("PendingUngrouped = %v, want %v", got, tt.pendingUngrouped)
			}
			if got := c.Unavailable(); !maps.Equal(got, tt.spec.UnavailableSources) {
				t.Errorf("Unavailable = %v", got)
			}
			for _, g := range c.Groups() {
				var want []string
				if g.ID == "gone" {
					want = []string{"gone"}
				}
				if got := c.GroupUnavailable(g.ID); !slices.Equal(got, want) {
					t.Errorf("GroupUnavailable(%s) = %v, want %v", g.ID, got, want)
				}
			}
			for _, w := range res.Warnings {
				// (A group that takes a pending server's tools by glob is
				// still warned about; only server rules know their source.)
				if strings.Contains(w, `"kb.mem"`) || strings.Contains(w, `"gone"`) || strings.Contains(w, `"b"`) {
					t.Errorf("a group of a source whose tools are not known is reported empty: %s", w)
				}
			}
		})
	}
}

// TestExcludedGroupsWarnNothing: an excluded group's server is never
// started, so its having no tools is expected, not a warning.
func TestExcludedGroupsWarnNothing(t *testing.T) {
	res, err := catalog.Build(catalog.Spec{
		Tools: tools("a"),
		Groups: []catalog.GroupSpec{
			{ID: "everything", Default: catalog.Excluded, Members: catalog.Members{Sources: []string{"everything"}}},
			{ID: "everything.sub", Parent: "everything", Members: catalog.Members{Sources: []string{"everything"}}},
			{ID: "live", Members: catalog.Members{Sources: []string{"gone"}}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(res.Warnings, "\n")
	if strings.Contains(joined, `"everything"`) {
		t.Errorf("an excluded group warns: %s", joined)
	}
	if !strings.Contains(joined, `server "gone" offers no tool`) {
		t.Errorf("a live group with an empty server must still warn: %s", joined)
	}
}

// A derived group's tools leave the direct members of the groups above it,
// also when a part of the catalog is served alone.
func TestDerivedGroupsTakeTheirToolsFromAbove(t *testing.T) {
	spec := catalog.Spec{
		Tools: tools("s__a", "s__b", "s__c"),
		Groups: []catalog.GroupSpec{
			{ID: "s", Members: catalog.Members{Prefixes: []string{"s__"}}},
			{ID: "s.x", Parent: "s", Derived: true},
			{ID: "s.x.y", Parent: "s.x", Derived: true, Members: catalog.Members{Tools: []catalog.ToolID{"s__a", "s__b"}}},
			{ID: "s.z", Parent: "s", Members: catalog.Members{Tools: []catalog.ToolID{"s__c"}}},
		},
	}
	cat := catalogtest.Build(t, spec)
	direct := func(c *catalog.Catalog, id catalog.GroupID) string {
		g, ok := c.Group(id)
		if !ok {
			t.Fatalf("no group %s", id)
		}
		var out []string
		for _, tl := range g.Tools {
			out = append(out, string(tl.ID))
		}
		return strings.Join(out, ",")
	}
	if got := direct(cat, "s"); got != "s__c" {
		t.Errorf("s holds %q directly, want only s__c (a declared child takes nothing from it)", got)
	}
	if got := direct(cat, "s.x.y"); got != "s__a,s__b" {
		t.Errorf("s.x.y holds %q", got)
	}
	if g, _ := cat.Group("s.x.y"); !g.Derived {
		t.Error("s.x.y lost its derived mark")
	}
	sub, err := cat.Subtree("s", false)
	if err != nil {
		t.Fatal(err)
	}
	if got := direct(sub, "s"); got != "s__c" {
		t.Errorf("served alone, s holds %q directly", got)
	}
	if g, _ := sub.Group("s.x.y"); g == nil || !g.Derived || len(g.Tools) != 2 {
		t.Errorf("served alone, s.x.y is %+v", g)
	}
}

// TestMetaGroupsResolveToDeclaredGroups checks that a tool's _meta group
// names go to the groups its source declared, when the source says what they
// mean, and to namesakes of their own otherwise.
func TestMetaGroupsResolveToDeclaredGroups(t *testing.T) {
	tool := catalogtest.Tool("fx__add_label")
	tool.Def.Meta = mcp.Meta{catalog.MetaGroupsKey: []any{"labels", "triage"}}
	tool.MetaGroups = map[string]catalog.GroupID{"labels": "fx.issues.labels"}
	res, err := catalog.Build(catalog.Spec{
		Tools: []*catalog.Tool{tool},
		Groups: []catalog.GroupSpec{
			{ID: "fx"}, {ID: "fx.issues", Parent: "fx"}, {ID: "fx.issues.labels", Parent: "fx.issues", DeclaredBy: "fx"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range res.Catalog.Tools()[0].Groups {
		got = append(got, string(g.ID))
	}
	if strings.Join(got, ",") != "fx.issues.labels,triage" {
		t.Errorf("the tool is in %v, want fx.issues.labels and triage", got)
	}
	if _, ok := res.Catalog.Group("labels"); ok {
		t.Error("a top-level namesake of the declared group was made")
	}
	if g, _ := res.Catalog.Group("fx.issues.labels"); g.DeclaredBy != "fx" {
		t.Errorf("DeclaredBy = %q, want fx", g.DeclaredBy)
	}
}

// SourceOf tells whose a name is: a tool's own source, else the source
// whose whole prefix (separator included) starts it, the longest first.
func TestSourceOf(t *testing.T) {
	renamed := catalogtest.Tool("gh__odd")
	renamed.Source = "git" // a tool's own source wins over any prefix
	c := catalogtest.Build(t, catalog.Spec{
		Tools:          []*catalog.Tool{catalogtest.Tool("u"), renamed},
		SourcePrefixes: map[string]string{"git": "git__", "github": "github__", "gh": "gh__", "gh2": "gh__v2__", "bare": ""},
	})
	tests := []struct {
		name, want string
		ok         bool
	}{
		{"github__create_issue", "github", true},
		{"git__log", "git", true},
		{"gh__v2__list", "gh2", true},
		{"gh__list", "gh", true},
		{"gh__odd", "git", true},
		{"gitx__log", "", false},
		{"list", "", false},
	}
	for _, tt := range tests {
		if got, ok := c.SourceOf(tt.name); got != tt.want || ok != tt.ok {
			t.Errorf("SourceOf(%q) = %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

// UnavailableNote says why a source failed and, as of the time asked,
// when toolfold tries it again.
func TestUnavailableNote(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	res, err := catalog.Build(catalog.Spec{Tools: tools("a"),
		UnavailableSources: map[string]string{"npx": `upstream "npx" exited at start (exit status 1): npm error 404.`, "once": "it refused"},
		UnavailableRetry:   map[string]time.Time{"npx": now.Add(12 * time.Second)}})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Catalog
	for _, tc := range []struct{ src, want string }{
		{"npx", `the MCP server "npx" failed to start: upstream "npx" exited at start (exit status 1): npm error 404; toolfold tries to start it again in 12s`},
		{"once", `the MCP server "once" failed to start: it refused`},
		{"a", ""},
	} {
		if got := c.UnavailableNote(tc.src, now); got != tc.want {
			t.Errorf("%s: got  %q\nwant %q", tc.src, got, tc.want)
		}
	}
	if got := c.UnavailableNote("npx", now.Add(12*time.Second)); !strings.HasSuffix(got, "; toolfold is trying to start it again now") {
		t.Errorf("at the retry: %q", got)
	}
}
