package gateway_test

import (
	"context"
	"testing"

	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
)

// TestSearchingClientsGetSearchHints: in auto mode, a client that searches
// its own tools (Claude Code) gets the flat list with each tool's search
// hint (its group path and the first sentence of its description) and
// alwaysLoad on the tools of groups enabled by default and on ungrouped
// ones; a client served another mode gets neither.
func TestSearchingClientsGetSearchHints(t *testing.T) {
	open, fold, core := catalogtest.Tool("gh_issue"), catalogtest.Tool("gh_pr"), catalogtest.Tool("ping")
	open.Def.Description = "Create an issue. Needs a title."
	g := specGateway(t, catalog.Spec{Tools: []*catalog.Tool{open, fold, core}, Groups: []catalog.GroupSpec{
		{ID: "github", Description: "GitHub"},
		{ID: "github.issues", Parent: "github", Description: "Issues", Default: catalog.Enabled, Members: catalog.Members{Tools: []catalog.ToolID{"gh_issue"}}},
		{ID: "github.pulls", Parent: "github", Description: "Pull requests", Members: catalog.Members{Tools: []catalog.ToolID{"gh_pr"}}},
	}}, &gateway.Options{Mode: expose.Auto})

	res, err := connectAt(t, g, "claude-code", "2025-11-25", nil).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]any{}
	for _, tl := range res.Tools {
		got[tl.Name] = [2]any{tl.Meta["anthropic/searchHint"], tl.Meta["anthropic/alwaysLoad"]}
	}
	want := map[string][2]any{
		"gh_issue": {"github issues: Create an issue", true},
		"gh_pr":    {"github pulls: Tool gh_pr", nil},
		"ping":     {"Tool ping", true},
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: searchHint, alwaysLoad = %v, want %v", name, got[name], w)
		}
	}

	other, err := connectAt(t, g, "some-agent", "2025-11-25", nil).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range other.Tools {
		if tl.Meta["anthropic/searchHint"] != nil || tl.Meta["anthropic/alwaysLoad"] != nil {
			t.Errorf("%s carries search hints for a client that does not search: %v", tl.Name, tl.Meta)
		}
	}
}
