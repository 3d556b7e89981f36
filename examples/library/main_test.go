package main

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestExampleServer(t *testing.T) {
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	srv := newServer()
	ss, err := srv.Connect(ctx, st, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	call := func(name string, args any) (bool, string) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		return res.IsError, res.Content[0].(*mcp.TextContent).Text
	}
	if isErr, text := call("call_tool", map[string]any{"name": "create_issue", "arguments": map[string]any{"title": "Crash on start"}}); isErr || !strings.Contains(text, `"number":1`) {
		t.Fatalf("create: %v %s", isErr, text)
	}
	if isErr, text := call("call_tool", map[string]any{"name": "list_issues"}); isErr || !strings.Contains(text, `"title":"Crash on start"`) {
		t.Fatalf("list: %v %s", isErr, text)
	}
	if isErr, text := call("call_tool", map[string]any{"name": "close_issue", "arguments": map[string]any{"number": 7}}); !isErr || !strings.Contains(text, "no issue #7") {
		t.Fatalf("close missing: %v %s", isErr, text)
	}
}
