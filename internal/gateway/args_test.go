package gateway_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/view"
)

// TestMetaToolArgumentErrorsAreWorded: a meta-tool called with arguments
// of the wrong shape answers in words (which parameter, what it must be)
// with a correct call, never a Go decoding error; a single string where a
// list is expected is read as a list of one, and the result says so.
func TestMetaToolArgumentErrorsAreWorded(t *testing.T) {
	space, err := view.NewSpace(catalogtest.Tree(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := gateway.New(space, &gateway.Options{Mode: expose.Groups})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tool    string
		args    any
		isError bool
		want    []string
	}{
		{"enable_tools", map[string]any{"groups": 7}, true, []string{`"groups" must be a list of group names, not a number`, `A correct call: enable_tools {"groups": ["code"]}`}},
		{"enable_tools", map[string]any{"groups": []any{1}}, true, []string{`every item of "groups" must be a group name, not a number`}},
		{"enable_tools", map[string]any{"groups": "docs"}, false, []string{`"enabled":["docs"]`, `"groups" takes a list of group names; the single value "docs" was read as ["docs"]`}},
		{"disable_tools", map[string]any{"groups": true}, true, []string{`"groups" must be a list of group names, not true or false`}},
		{"find_tools", map[string]any{"query": "x", "limit": "five"}, true, []string{`"limit" must be a whole number, not a string`, `A correct call: find_tools {"query"`}},
		{"find_tools", map[string]any{"query": []string{"a"}}, true, []string{`"query" must be a string saying what you want to do, not a list`}},
		{"call_tool", map[string]any{"name": 3}, true, []string{`"name" must be a tool name, not a number`, `A correct call: call_tool {"name"`}},
		{"call_tool", map[string]any{"arguments": map[string]any{}}, true, []string{`"name" is missing`}},
		{"call_tool", map[string]any{"name": "u", "arguments": `{"x": "1"}`}, false, []string{`"arguments" takes a JSON object; the string given held one`}},
		{"call_tool", map[string]any{"name": "u", "arguments": "x=1"}, true, []string{`"arguments" must be a JSON object of u's parameters, not a string`}},
	}
	c := connect(t, g, "args-test")
	for _, tt := range tests {
		res, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
		if err != nil {
			t.Fatalf("%s %v: %v", tt.tool, tt.args, err)
		}
		all := answer(res)
		if res.IsError != tt.isError {
			t.Errorf("%s %v: isError = %v, want %v: %s", tt.tool, tt.args, res.IsError, tt.isError, all)
		}
		for _, w := range tt.want {
			if !strings.Contains(all, w) {
				t.Errorf("%s %v: the answer does not say %q:\n%s", tt.tool, tt.args, w, all)
			}
		}
		if strings.Contains(all, "Go struct") || strings.Contains(all, "json:") || strings.Contains(all, "[]string") {
			t.Errorf("%s %v: a Go error reached the model: %s", tt.tool, tt.args, all)
		}
	}
	// The same for describe_tools, in the search mode.
	gs, err := gateway.New(space, &gateway.Options{Mode: expose.Search})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, gs, "args-test")
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "describe_tools", Arguments: map[string]any{"names": map[string]any{}}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"names" must be a list of tool names, not an object`) {
		t.Errorf("describe_tools with an object: %v %+v", err, res)
	}
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "guidance", Arguments: map[string]any{"topic": 1}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"topic" must be "overview", "groups", a group name or "tool", not a number`) {
		t.Errorf("guidance with a number: %v %+v", err, res)
	}
}
