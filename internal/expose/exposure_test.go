package expose_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/view"
)

func build(t testing.TB, cat *catalog.Catalog, opts expose.Options) (*expose.Exposure, *view.Space) {
	t.Helper()
	space, err := view.NewSpace(cat, nil)
	if err != nil {
		t.Fatal(err)
	}
	e, err := expose.Build(space, &opts)
	if err != nil {
		t.Fatal(err)
	}
	return e, space
}

func names(ws []*expose.Wire) string {
	var out []string
	for _, w := range ws {
		out = append(out, w.Name)
	}
	return strings.Join(out, ",")
}

func TestListedPerMode(t *testing.T) {
	cat := catalogtest.Tree(t)
	tests := []struct {
		mode    expose.Mode
		exp     catalog.Exposition
		enable  []string
		listed  string
		reaches map[string]bool
	}{
		{mode: expose.Flat, listed: "a,b,c,d,e,f,u", reaches: map[string]bool{"e": true}},
		{mode: expose.Groups, listed: "u", reaches: map[string]bool{"a": false, "u": true}},
		{mode: expose.Groups, enable: []string{"code", "docs"}, listed: "a,b,f,u", reaches: map[string]bool{"a": true, "c": false}},
		{mode: expose.Groups, exp: catalog.Grouped, enable: []string{"code", "code.repos"}, listed: "code,code_repos,u", reaches: map[string]bool{"code": true, "code_repos": true, "docs": false, "c": true, "f": false}},
		{mode: expose.Grouped, listed: "code,docs,u", reaches: map[string]bool{"code": true, "docs": true, "e": true}},
		{mode: expose.Search, listed: "u", reaches: map[string]bool{"e": true}},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode)+"/"+strings.Join(tt.enable, "+")+"/"+tt.exp.String(), func(t *testing.T) {
			e, space := build(t, cat, expose.Options{Mode: tt.mode, Exposition: tt.exp})
			v := space.New()
			v.Enable(tt.enable)
			s := v.Snapshot()
			if got := names(e.Listed(s)); got != tt.listed {
				t.Errorf("listed = %q, want %q", got, tt.listed)
			}
			for name, want := range tt.reaches {
				w, ok := e.Route(name)
				if !ok {
					t.Errorf("no route for %q", name)
					continue
				}
				if got := e.Reachable(s, w); got != want {
					t.Errorf("Reachable(%q) = %v, want %v", name, got, want)
				}
			}
		})
	}
}

func TestGroupedModeFoldsSubtrees(t *testing.T) {
	e, _ := build(t, catalogtest.Tree(t), expose.Options{Mode: expose.Grouped})
	w, ok := e.Route("code")
	if !ok {
		t.Fatal("no grouped tool for code")
	}
	if got := strings.Join(w.ActionNames(), ","); got != "a,b,repos.c,repos.d,repos.br.e" {
		t.Errorf("actions = %q", got)
	}
	var schema struct {
		Properties map[string]struct {
			Enum        []string `json:"enum"`
			Description string   `json:"description"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(w.InputSchema(), &schema); err != nil {
		t.Fatal(err)
	}
	if len(schema.Required) != 1 || schema.Required[0] != "action" {
		t.Errorf("required = %v", schema.Required)
	}
	if got := len(schema.Properties["action"].Enum); got != 5 {
		t.Errorf("enum has %d entries", got)
	}
	if d := schema.Properties["x"].Description; d != "All actions." {
		t.Errorf("x description = %q", d)
	}
}

// api builds a catalog whose tools have distinct schemas and annotations.
func api(t testing.TB) *catalog.Catalog {
	mk := func(id, schema string, ann *mcp.ToolAnnotations) *catalog.Tool {
		tl := catalogtest.Tool(id)
		tl.Def.InputSchema = json.RawMessage(schema)
		tl.Def.Annotations = ann
		tl.Def.Description = "Does " + id + ". More words here."
		return tl
	}
	yes, no := true, false
	return catalogtest.Build(t, catalog.Spec{
		Tools: []*catalog.Tool{
			mk("get_issue", `{"type":"object","properties":{"repo":{"type":"string","description":"Repository"},"number":{"type":"integer"}},"required":["repo","number"]}`, &mcp.ToolAnnotations{ReadOnlyHint: true}),
			mk("create_issue", `{"type":"object","properties":{"repo":{"type":"string"},"title":{"type":"string","minLength":1},"number":{"type":"string"}},"required":["repo","title"],"additionalProperties":false}`, &mcp.ToolAnnotations{DestructiveHint: &no}),
			mk("delete_issue", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"repo":{"type":"string"},"number":{"type":"integer"}},"required":["repo","number"]}`, &mcp.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &yes}),
		},
		Groups: []catalog.GroupSpec{{ID: "issues", Description: "Issue tracking", Exposition: catalog.Grouped, Members: catalog.Members{Globs: []string{"*"}}}},
	})
}

func TestGroupedSchemaAndAnnotations(t *testing.T) {
	e, _ := build(t, api(t), expose.Options{Mode: expose.Grouped, AnnotateDescriptions: true})
	w, _ := e.Route("issues")
	schema := string(w.InputSchema())
	for _, want := range []string{
		`"action":{"description":"The action to run; the tool description says what each does.","enum":["create_issue","delete_issue","get_issue"]`,
		`"repo":{"description":"Repository (All actions; required by all)","type":"string"}`,
		`"number":{"anyOf":[{"type":"string"},{"type":"integer"}],"description":"All actions; required by delete_issue, get_issue."}`,
		`"title":{"description":"Used by create_issue; required by create_issue.","minLength":1,"type":"string"}`,
	} {
		if !strings.Contains(schema, want) {
			t.Errorf("schema lacks %s\nschema: %s", want, schema)
		}
	}
	a := w.Tool.Annotations
	if a.ReadOnlyHint || a.DestructiveHint == nil || !*a.DestructiveHint || a.OpenWorldHint == nil || !*a.OpenWorldHint {
		t.Errorf("annotations = %+v, want not read-only, destructive, open world", a)
	}
	for _, want := range []string{"Issue tracking", "- delete_issue: [DESTRUCTIVE] Does delete_issue.", "- get_issue: [READ-ONLY] Does get_issue."} {
		if !strings.Contains(w.Tool.Description, want) {
			t.Errorf("description lacks %q:\n%s", want, w.Tool.Description)
		}
	}
	flat, _ := e.Route("get_issue")
	if !strings.HasPrefix(flat.Tool.Description, "[READ-ONLY] ") || flat.Tool.Annotations != flat.Target.Def.Annotations {
		t.Errorf("flat tool: %q", flat.Tool.Description)
	}
}

func TestResolve(t *testing.T) {
	e, _ := build(t, api(t), expose.Options{Mode: expose.Grouped})
	w, _ := e.Route("issues")
	tests := []struct {
		name    string
		args    string
		tool    string
		rest    string
		problem []string
	}{
		{name: "ok", args: `{"action":"get_issue","repo":"r","number":3}`, tool: "get_issue", rest: `{"number":3,"repo":"r"}`},
		{name: "draft-07 schema", args: `{"action":"delete_issue","repo":"r","number":"x"}`, problem: []string{"argument number", "integer", "Parameters of \"delete_issue\": repo (string, required); number (integer, required)"}},
		{name: "missing action", args: `{"repo":"r"}`, problem: []string{`"action" is missing`, "Set \"action\" to one of: create_issue, delete_issue, get_issue", "get_issue: repo (string, required): Repository; number (integer, required)"}},
		{name: "unknown action", args: `{"action":"get_isue"}`, problem: []string{`there is no action "get_isue" (did you mean "get_issue"?)`}},
		{name: "action not a string", args: `{"action":1}`, problem: []string{`"action" must be a string`}},
		{name: "not an object", args: `[1]`, problem: []string{"must be a JSON object"}},
		{name: "missing required", args: `{"action":"create_issue","repo":"r"}`, problem: []string{"missing properties", "title"}},
		{name: "extra property refused by the action's schema", args: `{"action":"create_issue","repo":"r","title":"t","body":"b"}`, problem: []string{"body"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, rest, err := w.Resolve(json.RawMessage(tt.args))
			if tt.problem == nil {
				if err != nil {
					t.Fatal(err)
				}
				if string(tool.ID) != tt.tool || string(rest) != tt.rest {
					t.Errorf("got %s %s, want %s %s", tool.ID, rest, tt.tool, tt.rest)
				}
				return
			}
			if err == nil {
				t.Fatalf("Resolve succeeded, want an error")
			}
			if _, ok := err.(*expose.ArgumentError); !ok {
				t.Errorf("error is %T, want *ArgumentError", err)
			}
			for _, p := range tt.problem {
				if !strings.Contains(err.Error(), p) {
					t.Errorf("error lacks %q:\n%v", p, err)
				}
			}
		})
	}
}

func TestFlatResolveValidates(t *testing.T) {
	e, _ := build(t, api(t), expose.Options{Mode: expose.Flat})
	w, _ := e.Route("get_issue")
	if _, _, err := w.Resolve(json.RawMessage(`{"repo":"r"}`)); err == nil || !strings.Contains(err.Error(), "number") {
		t.Errorf("err = %v", err)
	}
	if tool, args, err := w.Resolve(json.RawMessage(`{"repo":"r","number":1}`)); err != nil || tool.ID != "get_issue" || string(args) != `{"repo":"r","number":1}` {
		t.Errorf("got %v %s %v: flat calls must pass arguments through untouched", tool, args, err)
	}
}

// A source that checks its own arguments (an MCP server) is not checked
// twice when its tool is called by its own wire name; a grouped action is
// checked all the same, since only toolfold knows the action's schema.
func TestSelfCheckingSourceIsCheckedOnlyWhenGrouped(t *testing.T) {
	cat := api(t)
	for _, tool := range cat.Tools() {
		tool.ChecksArguments = true
	}
	flat, _ := build(t, cat, expose.Options{Mode: expose.Flat})
	w, _ := flat.Route("get_issue")
	if tool, args, err := w.Resolve(json.RawMessage(`{"repo":"r"}`)); err != nil || tool.ID != "get_issue" || string(args) != `{"repo":"r"}` {
		t.Errorf("flat call of a self-checking source: got %v %s %v, want it forwarded unchecked and untouched", tool, args, err)
	}
	grouped, _ := build(t, cat, expose.Options{Mode: expose.Grouped})
	g, _ := grouped.Route("issues")
	if _, _, err := g.Resolve(json.RawMessage(`{"action":"get_issue","repo":"r"}`)); err == nil || !strings.Contains(err.Error(), "number") {
		t.Errorf("grouped call of a self-checking source with a missing argument: err = %v, want the action's schema to refuse it", err)
	}
}

func TestCollisionsAreRefused(t *testing.T) {
	cat := catalogtest.Build(t, catalog.Spec{
		Tools:  []*catalog.Tool{catalogtest.Tool("docs"), catalogtest.Tool("a.b"), catalogtest.Tool("a_b"), catalogtest.Tool("enable_tools")},
		Groups: []catalog.GroupSpec{{ID: "docs", Members: catalog.Members{Tools: []catalog.ToolID{"a.b"}}}},
	})
	space, _ := view.NewSpace(cat, nil)
	_, err := expose.Build(space, &expose.Options{Mode: expose.Grouped, Reserved: []string{"enable_tools"}})
	if err == nil {
		t.Fatal("Build succeeded despite colliding names")
	}
	for _, want := range []string{`"a_b" is claimed by both the tool "a.b" and the tool "a_b"`, `"enable_tools" is claimed by both the meta-tool`, `"docs" is claimed by both the tool "docs" and the group "docs"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

func FuzzResolve(f *testing.F) {
	for _, s := range []string{`{}`, `{"action":"get_issue","repo":"r","number":1}`, `{"action":null}`, `[]`, `"x"`, `{"action":"create_issue","title":""}`, ``, `{"action":"delete_issue","number":1e400}`} {
		f.Add(s)
	}
	e, _ := build(f, api(f), expose.Options{Mode: expose.Grouped})
	w, _ := e.Route("issues")
	f.Fuzz(func(t *testing.T, args string) {
		tool, rest, err := w.Resolve(json.RawMessage(args))
		if err == nil {
			if tool == nil || !json.Valid(rest) {
				t.Fatalf("success without a tool or with invalid JSON %q", rest)
			}
			if strings.Contains(string(rest), `"action"`) {
				t.Fatalf("action leaked into the tool's arguments: %s", rest)
			}
		} else if err.Error() == "" {
			t.Fatal("empty error message")
		}
	})
}

func TestSchemasWithoutTypeBecomeObjects(t *testing.T) {
	tl := catalogtest.Tool("loose")
	tl.Def.InputSchema = json.RawMessage(`{"properties":{"q":{"type":"string"}}}`)
	bad := catalogtest.Tool("bad")
	bad.Def.InputSchema = json.RawMessage(`{"type":"string"}`)
	e, _ := build(t, catalogtest.Build(t, catalog.Spec{Tools: []*catalog.Tool{tl}}), expose.Options{Mode: expose.Flat})
	w, _ := e.Route("loose")
	if got := string(w.InputSchema()); got != `{"type":"object","properties":{"q":{"type":"string"}}}` {
		t.Errorf("schema = %s", got)
	}
	space, _ := view.NewSpace(catalogtest.Build(t, catalog.Spec{Tools: []*catalog.Tool{bad}}), nil)
	if _, err := expose.Build(space, &expose.Options{Mode: expose.Flat}); err == nil || !strings.Contains(err.Error(), `tool "bad": input schema has type string`) {
		t.Errorf("err = %v", err)
	}
}

// TestNoGroupedToolWithoutActions: a group whose tools all sit in groups
// inside it is never offered as a grouped tool (its "action" would admit
// nothing); the groups inside it are, once enabled, and in the grouped
// mode its subtree's tools are its actions.
func TestNoGroupedToolWithoutActions(t *testing.T) {
	cat := catalogtest.Build(t, catalog.Spec{
		Tools: []*catalog.Tool{catalogtest.Tool("a"), catalogtest.Tool("b"), catalogtest.Tool("c")},
		Groups: []catalog.GroupSpec{
			{ID: "srv", Description: "Server"},
			{ID: "srv.x", Parent: "srv", Members: catalog.Members{Tools: []catalog.ToolID{"a", "b"}}},
			{ID: "empty", Description: "Nothing at all"},
			{ID: "other", Members: catalog.Members{Tools: []catalog.ToolID{"c"}}},
		},
	})
	e, space := build(t, cat, expose.Options{Mode: expose.Groups, Exposition: catalog.Grouped})
	v := space.New()
	v.Enable([]string{"srv", "srv.x", "empty"})
	if got := names(e.Listed(v.Snapshot())); got != "srv_x" {
		t.Errorf("groups mode, grouped exposition lists %q, want only srv_x", got)
	}
	g, _ := build(t, cat, expose.Options{Mode: expose.Grouped})
	if got := names(g.Listed(space.New().Snapshot())); got != "other,srv" {
		t.Errorf("grouped mode lists %q, want other,srv", got)
	}
	for _, w := range g.Listed(space.New().Snapshot()) {
		if len(w.Actions) == 0 {
			t.Errorf("%s is offered without actions", w.Name)
		}
	}
}

// TestModesShareFlatWires: an exposure built with Share reuses the other
// mode's flat wire tools, unless they would differ (another space, other
// description markers); its own routes and listing stay its mode's.
func TestModesShareFlatWires(t *testing.T) {
	cat := catalogtest.Build(t, catalog.Spec{
		Tools:  []*catalog.Tool{catalogtest.Tool("a"), catalogtest.Tool("b")},
		Groups: []catalog.GroupSpec{{ID: "g", Members: catalog.Members{Tools: []catalog.ToolID{"a"}}}},
	})
	search, space := build(t, cat, expose.Options{Mode: expose.Search, AnnotateDescriptions: true})
	a, _ := cat.Tool("a")
	tests := []struct {
		name  string
		space *view.Space
		opts  expose.Options
		same  bool
	}{
		{"same space", space, expose.Options{Mode: expose.Groups, AnnotateDescriptions: true, Share: search}, true},
		{"other markers", space, expose.Options{Mode: expose.Groups, Share: search}, false},
		{"other space", viewSpace(t, cat), expose.Options{Mode: expose.Groups, AnnotateDescriptions: true, Share: search}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := expose.Build(tc.space, &tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := e.FlatWire(a) == search.FlatWire(a); got != tc.same {
				t.Errorf("shared = %v, want %v", got, tc.same)
			}
			if w, ok := e.Route("a"); !ok || w != e.FlatWire(a) {
				t.Errorf("Route(a) = %v, %v", w, ok)
			}
			if e.Mode() != expose.Groups {
				t.Errorf("mode %s", e.Mode())
			}
		})
	}
}
