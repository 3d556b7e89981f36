// Package catalogtest builds small catalogs for tests of the packages that
// read catalogs.
package catalogtest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
)

// Tool returns a tool with an object schema whose only property is "x", and
// a handler that echoes its name and arguments as text.
func Tool(id string) *catalog.Tool {
	return &catalog.Tool{
		ID:   catalog.ToolID(id),
		Name: id,
		Def: &mcp.Tool{
			Name:        id,
			Description: "Tool " + id,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}}}`),
		},
		Handler: Echo,
	}
}

// Echo answers with the tool name and the arguments it received.
func Echo(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args, _ := json.Marshal(req.Params.Arguments)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: req.Params.Name + " " + string(args)}}}, nil
}

// Build builds a catalog and fails the test on error.
func Build(t testing.TB, spec catalog.Spec) *catalog.Catalog {
	t.Helper()
	res, err := catalog.Build(spec)
	if err != nil {
		t.Fatalf("catalog.Build: %v", err)
	}
	return res.Catalog
}

// Tree is a small catalog with nesting, a tool in two groups and an
// ungrouped tool:
//
//	code                 a, b
//	  code.repos         c, d
//	    code.repos.br    e
//	docs                 a, f
//	(ungrouped)          u
func Tree(t testing.TB) *catalog.Catalog {
	t.Helper()
	var tools []*catalog.Tool
	for _, id := range []string{"a", "b", "c", "d", "e", "f", "u"} {
		tools = append(tools, Tool(id))
	}
	return Build(t, catalog.Spec{
		Tools: tools,
		Groups: []catalog.GroupSpec{
			{ID: "code", Description: "Code", Members: catalog.Members{Tools: []catalog.ToolID{"a", "b"}}},
			{ID: "code.repos", Parent: "code", Description: "Repositories", Instructions: "Mind the default branch.", Members: catalog.Members{Tools: []catalog.ToolID{"c", "d"}}},
			{ID: "code.repos.br", Parent: "code.repos", Description: "Branches", Members: catalog.Members{Tools: []catalog.ToolID{"e"}}},
			{ID: "docs", Description: "Documents", Members: catalog.Members{Tools: []catalog.ToolID{"a", "f"}}},
		},
	})
}
