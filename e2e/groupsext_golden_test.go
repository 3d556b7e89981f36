package e2e

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold"
	"github.com/toolfold/toolfold/internal/demo"
	"github.com/toolfold/toolfold/internal/groupsext"
)

// extLibrarySession serves srv over streamable HTTP, as a library server
// does, to a Go client on protocol that declares the groups extension.
func extLibrarySession(t *testing.T, srv *toolfold.Server, protocol string) *session {
	t.Helper()
	h, err := srv.Handler(nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return extGoSession(t, hs.URL, protocol, "golden", true)
}

func indentJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// TestGoldenGroupsExtension snapshots the demo's groups/list and the
// groups/get of every group, as a client of the extension receives them.
func TestGoldenGroupsExtension(t *testing.T) {
	s := extLibrarySession(t, demo.New(&demo.Options{SandboxDir: goldenSandbox}), "2026-07-28")
	list, err := mcp.CallCustomMethod[*groupsext.ListParams, *groupsext.ListResult](context.Background(), s.ClientSession, groupsext.MethodList, &groupsext.ListParams{})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "groups/list.json", indentJSON(t, list))
	// Every group, the nested ones reached through their parents.
	queue := make([]string, 0, len(list.Groups))
	for _, g := range list.Groups {
		queue = append(queue, g.Name)
	}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		res, err := goGetGroup(s, name)
		if err != nil {
			t.Fatalf("groups/get %s: %v", name, err)
		}
		golden(t, "groups/get-"+name+".json", indentJSON(t, res))
		for _, c := range res.Contents.Groups {
			queue = append(queue, c.Name)
		}
	}
}

// TestLibraryServesNestedGroups: a server written with the Go library
// serves the extension, and its nested groups are disclosed through their
// parents.
func TestLibraryServesNestedGroups(t *testing.T) {
	srv := toolfold.NewServer(&toolfold.Options{Name: "acme", Version: "1.0.0"})
	type in struct {
		Name string `json:"name"`
	}
	echo := func(_ context.Context, req *mcp.CallToolRequest, args in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: req.Params.Name + " " + args.Name}}}, nil, nil
	}
	repos := srv.Group("repos", &toolfold.GroupOptions{Description: "Repositories", Instructions: "Name repositories as owner/name."})
	toolfold.AddTool(repos, &mcp.Tool{Name: "list_repos", Description: "List repositories"}, echo)
	branches := repos.Group("branches", &toolfold.GroupOptions{Description: "Branches"})
	toolfold.AddTool(branches, &mcp.Tool{Name: "create_branch", Description: "Create a branch"}, echo)
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		s := extLibrarySession(t, srv, protocol)
		if got := goListGroups(t, s); got != "repos" {
			t.Errorf("%s: groups/list = %q", protocol, got)
		}
		res, err := goGetGroup(s, "repos")
		if err != nil {
			t.Fatal(err)
		}
		tools, groups := contentNames(res)
		if tools != "list_repos" || groups != "repos-branches" || res.Instructions != "Name repositories as owner/name." {
			t.Errorf("%s: repos = %q %q %q", protocol, tools, groups, res.Instructions)
		}
		res, err = goGetGroup(s, "repos-branches")
		if err != nil {
			t.Fatal(err)
		}
		if tools, _ := contentNames(res); tools != "create_branch" {
			t.Errorf("%s: repos-branches = %q", protocol, tools)
		}
		if text := s.mustCall("create_branch", map[string]any{"name": "dev"}); text != "create_branch dev" {
			t.Errorf("%s: create_branch = %q", protocol, text)
		}
	}
}
