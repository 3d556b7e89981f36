package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// foundTools is the tools of a find_tools result, by name, best first,
// with the group each is in.
func foundTools(t *testing.T, text string) (names, groups []string) {
	t.Helper()
	var found struct {
		Tools []struct{ Name, Group string }
	}
	if err := json.Unmarshal([]byte(text), &found); err != nil {
		t.Fatalf("find_tools result %q: %v", text, err)
	}
	for _, f := range found.Tools {
		names = append(names, f.Name)
		groups = append(groups, f.Group)
	}
	return names, groups
}

// TestFindSeveralPhrasings sends find_tools several phrasings of one need
// through the built binary: fused in one call, within a group and the
// group inside it, and refused with the fix when malformed.
func TestFindSeveralPhrasings(t *testing.T) {
	s := stdioSession(t, "some-agent", "--mode", "search")

	names, _ := foundTools(t, s.mustData("find_tools", map[string]any{"query": "store note", "queries": []string{"remember a fact"}}))
	if len(names) == 0 || names[0] != "put_note" {
		t.Errorf("two phrasings found %v, want put_note first", names)
	}

	// Within files: the files tools and those of files.search inside it.
	names, groups := foundTools(t, s.mustData("find_tools", map[string]any{
		"query": "find files by content", "queries": []string{"grep text in files", "delete note"}, "group": "files", "limit": 10}))
	inChild := false
	for i, g := range groups {
		if g != "files" && !strings.HasPrefix(g, "files.") {
			t.Errorf("group files let %s (group %s) through", names[i], g)
		}
		inChild = inChild || g == "files.search"
	}
	if !inChild {
		t.Errorf("group files with two phrasings found %v in %v, want a tool of files.search among them", names, groups)
	}

	// One string for queries is read as a list of one, and the result says so.
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "find_tools", Arguments: map[string]any{"query": "store note", "queries": "remember a fact"}})
	if err != nil || res.IsError || len(res.Content) != 2 {
		t.Fatalf("queries as one string: %v %+v", err, res)
	}
	data, _ := json.Marshal(res.StructuredContent)
	if names, _ = foundTools(t, string(data)); len(names) == 0 || names[0] != "put_note" {
		t.Errorf("queries as one string found %v, want put_note first", names)
	}
	if note := res.Content[1].(*mcp.TextContent).Text; !strings.Contains(note, `"queries" takes a list of phrasings; the single value "remember a fact" was read as ["remember a fact"]`) {
		t.Errorf("queries as one string is not noted: %q", note)
	}

	for _, tt := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"query": "a", "queries": []string{"b", "c", "d"}}, "up to 3 phrasings"},
		{map[string]any{"query": "a", "queries": []int{1}}, `A correct call: find_tools {"query": "merge pull request github", "queries": ["land PR"], "limit": 5}`},
	} {
		isErr, text := s.call("find_tools", tt.args)
		if !isErr || !strings.Contains(text, tt.want) {
			t.Errorf("find_tools %v = %v %q, want an error containing %q", tt.args, isErr, text, tt.want)
		}
	}
}

// TestTokensSearchWithSeveralPhrasings checks that a token limited to some
// groups or to read-only tools finds, with several phrasings, only what it
// may reach.
func TestTokensSearchWithSeveralPhrasings(t *testing.T) {
	config := tokensConfig(t)
	base := startHTTP(t, "--config", config, "--mode", "search")
	find := func(token string) []string {
		t.Helper()
		transport := &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e"}, nil).Connect(context.Background(), transport, nil)
		if err != nil {
			t.Fatalf("token %s: %v", token, err)
		}
		defer cs.Close()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "find_tools", Arguments: map[string]any{
			"query": "format text", "queries": []string{"say words", "shout"}, "limit": 10}})
		if err != nil || res.IsError {
			t.Fatalf("token %s: find_tools: %v %+v", token, err, res)
		}
		data, _ := json.Marshal(res.StructuredContent)
		names, _ := foundTools(t, string(data))
		return names
	}
	tests := []struct {
		token     string
		want, not []string
	}{
		{"full-secret", []string{"printf__format", "echo__say", "echo__shout"}, nil},
		{"echo-secret", []string{"echo__say", "echo__shout"}, []string{"printf__format"}},
		{"ro-secret", []string{"printf__format", "echo__say"}, []string{"echo__shout"}},
	}
	for _, tt := range tests {
		got := find(tt.token)
		for _, w := range tt.want {
			if !slices.Contains(got, w) {
				t.Errorf("token %s found %v, want %s among them", tt.token, got, w)
			}
		}
		for _, n := range tt.not {
			if slices.Contains(got, n) {
				t.Errorf("token %s found %s, which it may not reach", tt.token, n)
			}
		}
	}
}
