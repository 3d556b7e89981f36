package e2e

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
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

// TestGoldenGroupingExtension snapshots the demo's groups/list, and the
// groups each tool names in tools/list, as a client of the grouping
// extension receives them.
func TestGoldenGroupingExtension(t *testing.T) {
	s := extLibrarySession(t, demo.New(&demo.Options{SandboxDir: goldenSandbox}), "2026-07-28")
	list, err := mcp.CallCustomMethod[*groupsext.ListParams, *groupsext.ListResult](context.Background(), s.ClientSession, groupsext.MethodList, &groupsext.ListParams{})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "groups/list.json", indentJSON(t, list))
	tools, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	members := map[string][]string{}
	for _, tool := range tools.Tools {
		members[tool.Name] = groupsext.MetaGroups(tool.Meta)
	}
	golden(t, "groups/tools-membership.json", indentJSON(t, members))
}

// TestLibraryServesNestedGroups: a server written with the Go library
// serves the extension, its nested groups naming their parents.
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
		list, err := mcp.CallCustomMethod[*groupsext.ListParams, *groupsext.ListResult](context.Background(), s.ClientSession, groupsext.MethodList, &groupsext.ListParams{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, g := range list.Groups {
			got = append(got, g.Name+"<"+strings.Join(g.Parents(), "+"))
		}
		if strings.Join(got, ",") != "repos<,repos-branches<repos" {
			t.Errorf("%s: groups/list = %q", protocol, got)
		}
		tools, err := s.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var members []string
		for _, tool := range tools.Tools {
			members = append(members, tool.Name+"["+strings.Join(groupsext.MetaGroups(tool.Meta), "+")+"]")
		}
		if strings.Join(members, ",") != "create_branch[repos-branches],list_repos[repos]" {
			t.Errorf("%s: tools/list = %q", protocol, members)
		}
		if text := s.mustCall("create_branch", map[string]any{"name": "dev"}); text != "create_branch dev" {
			t.Errorf("%s: create_branch = %q", protocol, text)
		}
	}
}
