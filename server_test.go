package toolfold_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold"
	"github.com/toolfold/toolfold/internal/libspec"
)

type addIn struct {
	A int `json:"a" jsonschema:"the first addend"`
	B int `json:"b" jsonschema:"the second addend"`
}

type addOut struct {
	Sum int `json:"sum"`
}

func add(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
	return nil, addOut{Sum: in.A + in.B}, nil
}

// connect serves srv to one in-memory client named name.
func connect(t testing.TB, srv *toolfold.Server, name string) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestTypedToolsInferSchemasAndStructureResults(t *testing.T) {
	srv := toolfold.NewServer(&toolfold.Options{Mode: toolfold.ModeFlat})
	math := srv.Group("math", &toolfold.GroupOptions{Description: "Arithmetic"})
	toolfold.AddTool(math, &mcp.Tool{Name: "add", Description: "Add two integers."}, add)
	toolfold.AddTool(srv, &mcp.Tool{Name: "fail", Description: "Always fails."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return nil, nil, errFailed
		})
	cs := connect(t, srv, "test")
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var addTool *mcp.Tool
	for _, tl := range list.Tools {
		if tl.Name == "add" {
			addTool = tl
		}
	}
	if addTool == nil {
		t.Fatalf("add is not listed: %v", list.Tools)
	}
	in, _ := json.Marshal(addTool.InputSchema)
	for _, want := range []string{`"a":{"description":"the first addend","type":"integer"}`, `"required":["a","b"]`} {
		if !strings.Contains(string(in), want) {
			t.Errorf("input schema lacks %s: %s", want, in)
		}
	}
	if out, _ := json.Marshal(addTool.OutputSchema); !strings.Contains(string(out), `"sum"`) {
		t.Errorf("output schema = %s", out)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 2, "b": 40}})
	if err != nil || res.IsError {
		t.Fatalf("add: %v %v", err, res)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != `{"sum":42}` {
		t.Errorf("text = %s", got)
	}
	if sc, _ := json.Marshal(res.StructuredContent); string(sc) != `{"sum":42}` {
		t.Errorf("structuredContent = %s", sc)
	}
	res, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": "two"}})
	if !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "argument a") {
		t.Errorf("bad arguments were not refused: %+v", res.Content[0])
	}
	res, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fail"})
	if !res.IsError || res.Content[0].(*mcp.TextContent).Text != errFailed.Error() {
		t.Errorf("a handler's error must become a tool error: %+v", res.Content[0])
	}
}

type failure string

func (f failure) Error() string { return string(f) }

const errFailed = failure("the backend is down; try again later")

func TestGroupsNestIncludeAndExclude(t *testing.T) {
	srv := toolfold.NewServer(&toolfold.Options{ExcludeGroups: []string{"admin"}})
	repos := srv.Group("repos", &toolfold.GroupOptions{Description: "Repositories"})
	branches := repos.Group("branches", &toolfold.GroupOptions{Description: "Branches"})
	if branches.Name() != "repos.branches" {
		t.Errorf("child name = %q", branches.Name())
	}
	toolfold.AddTool(repos, &mcp.Tool{Name: "add"}, add)
	branches.Include("add")
	admin := srv.Group("admin", &toolfold.GroupOptions{Description: "Dangerous"})
	toolfold.AddTool(admin, &mcp.Tool{Name: "wipe"}, add)
	spec, err := libspec.Of(srv)
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.Groups) != 3 || spec.Groups[1].Parent != "repos" || len(spec.Groups[1].Members.Tools) != 1 {
		t.Errorf("spec groups = %+v", spec.Groups)
	}
	cs := connect(t, srv, "x")
	res, _ := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "wipe"}})
	if !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `there is no tool "wipe"`) {
		t.Errorf("an excluded tool must not exist: %+v", res.Content[0])
	}

	bad := toolfold.NewServer(&toolfold.Options{ExcludeGroups: []string{"repo"}})
	bad.Group("repos", nil)
	if _, err := bad.Handler(nil); err == nil || !strings.Contains(err.Error(), `cannot exclude group "repo": there is no such group (did you mean "repos"?)`) {
		t.Errorf("err = %v", err)
	}
}

// TestNonObjectResultsAreWrapped: MCP needs object output schemas, so a
// string, list or pointer-to-struct result must still advertise one.
func TestNonObjectResultsAreWrapped(t *testing.T) {
	srv := toolfold.NewServer(&toolfold.Options{Mode: toolfold.ModeFlat})
	toolfold.AddTool(srv, &mcp.Tool{Name: "hello"}, toolfold.Func(func(context.Context, struct{}) (string, error) { return "hi", nil }))
	toolfold.AddTool(srv, &mcp.Tool{Name: "list"}, toolfold.Func(func(context.Context, struct{}) ([]int, error) { return []int{1, 2}, nil }))
	toolfold.AddTool(srv, &mcp.Tool{Name: "sum"}, toolfold.Func(func(context.Context, struct{}) (*addOut, error) { return &addOut{Sum: 3}, nil }))
	cs := connect(t, srv, "test")
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range list.Tools {
		var s struct {
			Type any `json:"type"`
		}
		b, _ := json.Marshal(tl.OutputSchema)
		if err := json.Unmarshal(b, &s); err != nil || s.Type != "object" {
			t.Errorf("%s: outputSchema %s is not of type object", tl.Name, b)
		}
	}
	want := map[string]string{"hello": `{"result":"hi"}`, "list": `{"result":[1,2]}`, "sum": `{"sum":3}`}
	for name, w := range want {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %v", name, err, res)
		}
		got, _ := json.Marshal(res.StructuredContent)
		if string(got) != w {
			t.Errorf("%s: structuredContent = %s, want %s", name, got, w)
		}
	}
}

// TestDuplicateToolNameIsWordedForTheLibrary: a library has no prefixes to
// change, so the advice must be the library's: rename, or Group.Include.
func TestDuplicateToolNameIsWordedForTheLibrary(t *testing.T) {
	srv := toolfold.NewServer(nil)
	toolfold.AddTool(srv.Group("a", nil), &mcp.Tool{Name: "add"}, add)
	var msg string
	func() {
		defer func() { msg = fmt.Sprint(recover()) }()
		toolfold.AddTool(srv.Group("b", nil), &mcp.Tool{Name: "add"}, add)
	}()
	for _, want := range []string{`AddTool "add"`, "unique across the whole server", "Include"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the message %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "prefix") {
		t.Errorf("the message gives the gateway's advice about prefixes: %q", msg)
	}
}
