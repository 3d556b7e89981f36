package toolfold_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold"
)

// A server with two groups, one nested. In the groups mode a client first
// sees only the meta-tools, then enables what it needs.
func ExampleNewServer() {
	srv := toolfold.NewServer(&toolfold.Options{Name: "acme", Version: "1.0.0", Mode: toolfold.ModeGroups})
	issues := srv.Group("issues", &toolfold.GroupOptions{Description: "Issue tracking"})
	toolfold.AddTool(issues, &mcp.Tool{Name: "add", Description: "Add two integers."}, add)
	repos := srv.Group("repos", &toolfold.GroupOptions{Description: "Repositories"})
	repos.Group("branches", &toolfold.GroupOptions{Description: "Branches"})

	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st, "example"); err != nil {
		log.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	printTools := func() {
		res, _ := cs.ListTools(ctx, nil)
		var names []string
		for _, t := range res.Tools {
			names = append(names, t.Name)
		}
		fmt.Println(strings.Join(names, " "))
	}
	printTools()
	cs.CallTool(ctx, &mcp.CallToolParams{Name: "enable_tools", Arguments: map[string]any{"groups": []string{"issues"}}})
	printTools()
	// Output:
	// call_tool disable_tools enable_tools find_tools
	// add call_tool disable_tools enable_tools find_tools
}

// Typed handlers get their input and output schemas from Go types, and
// their output arrives as structured content and as JSON text.
func ExampleAddTool() {
	type in struct {
		Name string `json:"name" jsonschema:"who to greet"`
	}
	type out struct {
		Greeting string `json:"greeting"`
	}
	srv := toolfold.NewServer(&toolfold.Options{Mode: toolfold.ModeFlat})
	toolfold.AddTool(srv, &mcp.Tool{Name: "greet", Description: "Greet someone."},
		func(_ context.Context, _ *mcp.CallToolRequest, args in) (*mcp.CallToolResult, out, error) {
			return nil, out{Greeting: "Hello, " + args.Name}, nil
		})

	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st, "example"); err != nil {
		log.Fatal(err)
	}
	cs, _ := mcp.NewClient(&mcp.Implementation{Name: "example"}, nil).Connect(ctx, ct, nil)
	defer cs.Close()
	res, _ := cs.CallTool(ctx, &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "Ada"}})
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output: {"greeting":"Hello, Ada"}
}

// Func keeps tools that need neither the request nor a hand-built result
// short.
func ExampleFunc() {
	type in struct {
		Words []string `json:"words" jsonschema:"the words to count"`
	}
	type out struct {
		Count int `json:"count"`
	}
	srv := toolfold.NewServer(&toolfold.Options{Mode: toolfold.ModeFlat})
	toolfold.AddTool(srv, &mcp.Tool{Name: "count", Description: "Count words."},
		toolfold.Func(func(_ context.Context, args in) (out, error) {
			return out{Count: len(args.Words)}, nil
		}))

	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st, "example"); err != nil {
		log.Fatal(err)
	}
	cs, _ := mcp.NewClient(&mcp.Implementation{Name: "example"}, nil).Connect(ctx, ct, nil)
	defer cs.Close()
	res, _ := cs.CallTool(ctx, &mcp.CallToolParams{Name: "count", Arguments: map[string]any{"words": []string{"a", "b", "c"}}})
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output: {"count":3}
}
