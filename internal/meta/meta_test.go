package meta_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/meta"
	"github.com/toolfold/toolfold/internal/view"
)

func setup(t *testing.T, mode expose.Mode) (*expose.Exposure, *view.View) {
	t.Helper()
	space, err := view.NewSpace(catalogtest.Tree(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	e, err := expose.Build(space, &expose.Options{Mode: mode})
	if err != nil {
		t.Fatal(err)
	}
	return e, space.New()
}

func TestHiddenToolMessage(t *testing.T) {
	e, v := setup(t, expose.Groups)
	n := meta.DefaultNames()
	w, _ := e.Route("a") // in code and docs
	msg := meta.HiddenToolMessage(n, w, v.Snapshot())
	for _, want := range []string{`a is in the groups "code", "docs", which is not enabled`, `Call enable_tools with {"groups":["code"]}`, `call_tool with {"name": "a"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	renamed := n
	renamed.Enable, renamed.Call = "unfold", "invoke"
	if msg := meta.HiddenToolMessage(renamed, w, v.Snapshot()); !strings.Contains(msg, "Call unfold with") || !strings.Contains(msg, "through invoke") {
		t.Errorf("renamed meta-tools are not used in the hint:\n%s", msg)
	}
}

func TestUnknownToolMessage(t *testing.T) {
	e, _ := setup(t, expose.Flat)
	if msg := meta.UnknownToolMessage(meta.DefaultNames(), e, "bb", nil); !strings.Contains(msg, `"b"`) || strings.Contains(msg, "find_tools") {
		t.Errorf("flat mode: %s (no find_tools to suggest there)", msg)
	}
	g, _ := setup(t, expose.Search)
	if msg := meta.UnknownToolMessage(meta.DefaultNames(), g, "zzzzzz", nil); !strings.Contains(msg, "find_tools searches every tool") {
		t.Errorf("search mode: %s", msg)
	}
}

func TestEnableWithoutGroupsExplainsTheCall(t *testing.T) {
	e, v := setup(t, expose.Groups)
	res, ch := meta.DoEnable(v, e, meta.GroupsArgs{})
	if ch.Changed() || !strings.Contains(res.Note, `{"groups": ["<name>"]}`) || len(res.AvailableGroups) != 2 {
		t.Errorf("result = %+v", res)
	}
}

func TestResultCarriesTheSameJSONTwice(t *testing.T) {
	r := meta.Result(map[string]int{"x": 1}, false)
	text := r.Content[0].(*mcp.TextContent).Text
	structured, ok := r.StructuredContent.(json.RawMessage)
	if !ok || string(structured) != `{"x":1}` || text != string(structured) || r.IsError {
		t.Errorf("text %q, structured %v", text, r.StructuredContent)
	}
}

// TestFindNextStep checks that find_tools always tells the model how to go
// on: how to call a hit, and how to recover when no hit fits (the ranking
// matches words, the model can match meaning by browsing groups).
func TestFindNextStep(t *testing.T) {
	e, v := setup(t, expose.Search)
	d := meta.NewDiscovery(meta.DefaultNames(), e)
	tests := []struct {
		query string
		want  []string
	}{
		{"Branches", []string{`describe_tools {"names": [...]}`, `call_tool {"name"`, `"group": "<group>"`, `guidance {"topic": "groups"}`}},
		{"zzzz qqqq", []string{"Nothing matched", `guidance {"topic": "groups"}`}},
	}
	for _, tt := range tests {
		res, err := d.Find(meta.FindArgs{Query: tt.query}, v.Snapshot())
		if err != nil {
			t.Fatalf("%q: %v", tt.query, err)
		}
		if (len(res.Tools) == 0) != strings.Contains(tt.query, "zzzz") {
			t.Errorf("%q found %d tools", tt.query, len(res.Tools))
		}
		for _, w := range tt.want {
			if !strings.Contains(res.Next, w) {
				t.Errorf("%q: next lacks %q:\n%s", tt.query, w, res.Next)
			}
		}
	}
}
