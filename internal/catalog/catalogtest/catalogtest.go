// Package catalogtest builds small catalogs for tests of the packages that
// read catalogs.
package catalogtest

import (
	"context"
	"encoding/json"
	"fmt"
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

// Synthetic builds a catalog of n tools spread evenly over g top-level
// groups, each tool with a small realistic schema, for benchmarks.
func Synthetic(t testing.TB, n, g int) *catalog.Catalog {
	t.Helper()
	tools := make([]*catalog.Tool, n)
	for i := range tools {
		id := fmt.Sprintf("server%02d__tool_%04d", i%g, i)
		tools[i] = &catalog.Tool{
			ID: catalog.ToolID(id), Name: fmt.Sprintf("tool_%04d", i), Source: fmt.Sprintf("server%02d", i%g),
			Def: &mcp.Tool{
				Name:        fmt.Sprintf("tool_%04d", i),
				Description: "Does one numbered thing with a repository, an issue or a file, and returns what happened.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"owner":{"type":"string","description":"Account that owns it"},"repo":{"type":"string","description":"Repository name"},"limit":{"type":"integer","minimum":1}},"required":["owner","repo"]}`),
			},
			Handler: Echo,
		}
	}
	groups := make([]catalog.GroupSpec, g)
	for i := range groups {
		src := fmt.Sprintf("server%02d", i)
		groups[i] = catalog.GroupSpec{ID: catalog.GroupID(src), Description: "Tools of " + src, Members: catalog.Members{Sources: []string{src}}}
	}
	return Build(t, catalog.Spec{Tools: tools, Groups: groups})
}
