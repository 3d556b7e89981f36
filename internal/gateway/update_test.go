package gateway_test

import (
	"testing"

	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/view"
)

// TestUpdateKeepsViewsAndNotifiesOnlyChangedLists replaces the catalog
// under connected clients, as an upstream finishing its start does.
func TestUpdateKeepsViewsAndNotifiesOnlyChangedLists(t *testing.T) {
	g := newGateway(t, gateway.Options{Mode: expose.Auto, RefreshingClients: []string{"refresher"}}, nil)
	coder := connect(t, g, "refresher")
	idle := connect(t, g, "refresher")
	searcher := connect(t, g, "other")
	coder.call(t, "enable_tools", map[string]any{"groups": []string{"code", "code.repos"}})
	coder.waitChanged(t)

	// The new catalog adds a tool to code, and a new group nobody enabled.
	var tools []*catalog.Tool
	for _, id := range []string{"a", "b", "c", "d", "e", "f", "u", "new_code_tool", "ops_tool"} {
		tools = append(tools, catalogtest.Tool(id))
	}
	cat := catalogtest.Build(t, catalog.Spec{Tools: tools, Groups: []catalog.GroupSpec{
		{ID: "code", Description: "Code", Members: catalog.Members{Tools: []catalog.ToolID{"a", "b", "new_code_tool"}}},
		{ID: "code.repos", Parent: "code", Description: "Repositories", Members: catalog.Members{Tools: []catalog.ToolID{"c", "d"}}},
		{ID: "code.repos.br", Parent: "code.repos", Members: catalog.Members{Tools: []catalog.ToolID{"e"}}},
		{ID: "docs", Members: catalog.Members{Tools: []catalog.ToolID{"a", "f"}}},
		{ID: "ops", Description: "Operations", Members: catalog.Members{Tools: []catalog.ToolID{"ops_tool"}}},
	}})
	space, err := view.NewSpace(cat, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(space); err != nil {
		t.Fatal(err)
	}
	coder.waitChanged(t)
	if got := coder.names(t); got != "a,b,c,call_tool,d,disable_tools,enable_tools,find_tools,new_code_tool,u" {
		t.Errorf("the enabled groups were not kept, or the new tool is missing: %q", got)
	}
	// enable_tools' description now offers ops, so the idle client's list
	// changed too; the search client's fixed list did not.
	idle.waitChanged(t)
	searcher.quiet(t)
	if got := searcher.names(t); got != "call_tool,describe_tools,find_tools,guidance,u" {
		t.Errorf("search list = %q", got)
	}
	_, text := searcher.call(t, "call_tool", map[string]any{"name": "ops_tool", "arguments": map[string]any{}})
	if text != "ops_tool {}" {
		t.Errorf("the search client cannot reach the new tool: %q", text)
	}
	if g.Catalog() != cat {
		t.Error("Catalog() does not return the new catalog")
	}
}
