package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// groupsFixtureBinary is the groups fixture (internal/upstream/groupsfixture),
// a Go SDK server that serves the groups extension, built once beside the
// toolfold binary.
var groupsFixtureBinary = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(filepath.Dir(binary), "groups-fixture")
	out, err := exec.Command("go", "build", "-o", bin, "../internal/upstream/groupsfixture/groups-fixture").CombinedOutput()
	if err != nil {
		return "", &buildError{err: err, out: string(out)}
	}
	return bin, nil
})

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string {
	return "building the groups fixture: " + e.err.Error() + "\n" + e.out
}

// groupsFixtureConfig is a config that folds the groups fixture as "fx".
func groupsFixtureConfig(t *testing.T) string {
	t.Helper()
	bin, err := groupsFixtureBinary()
	if err != nil {
		t.Fatal(err)
	}
	return writeConfig(t, map[string]any{"mcpServers": map[string]any{"fx": map[string]any{"command": bin}}})
}

// stdioSession2025 is stdioSessionEnv on protocol 2025-11-25, the session
// era, where groups mode keeps a per-session view.
func stdioSession2025(t *testing.T, name string, environ []string, args ...string) *session {
	t.Helper()
	c, s := newClient(t, name)
	cmd := exec.Command(binary, append([]string{"serve"}, args...)...)
	cmd.Env = append(cmd.Environ(), environ...)
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connecting to toolfold over stdio: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	s.ClientSession = cs
	return s
}

// TestUpstreamGroupsShowAsToolfoldGroups checks `toolfold groups --json`
// over an upstream that serves the groups extension: its groups, nested
// ones included, are child groups of the server's group, declared by it.
func TestUpstreamGroupsShowAsToolfoldGroups(t *testing.T) {
	path := groupsFixtureConfig(t)
	cmd := exec.Command(binary, "groups", "--json", "--config", path)
	cmd.Env = append(cmd.Environ(), "TOOLFOLD_CACHE_DIR="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("toolfold groups: %v", err)
	}
	var tree struct {
		Groups []struct {
			Name, Parent, Description string
			DeclaredBy                string `json:"declared_by"`
			ExtensionName             string `json:"extension_name"`
			Tools, Depth              int
		}
	}
	if err := json.Unmarshal(out, &tree); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var got []string
	for _, g := range tree.Groups {
		got = append(got, strings.Repeat("  ", g.Depth)+g.Name+" ("+g.ExtensionName+") parent="+g.Parent+" by="+g.DeclaredBy+" tools="+itoa(g.Tools)+" "+g.Description)
	}
	want := []string{
		"fx (fx) parent= by= tools=3 Tools of the fx MCP server",
		"  fx.issues (fx-issues) parent=fx by=fx tools=3 Issue tracking",
		"    fx.issues.labels (fx-issues-labels) parent=fx.issues by=fx tools=1 Issue labels",
		"  fx.repos (fx-repos) parent=fx by=fx tools=2 Repositories",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("toolfold groups --json:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestUpstreamGroupsInGroupsMode unfolds the fixture's groups through
// enable_tools (Go SDK client, 2025-11-25, groups mode) and calls their
// scoped tools, which the fixture leaves out of the tools/list it gives
// toolfold.
func TestUpstreamGroupsInGroupsMode(t *testing.T) {
	s := stdioSession2025(t, "e2e-go", []string{"TOOLFOLD_CACHE_DIR=" + t.TempDir()}, "--config", groupsFixtureConfig(t), "--mode", "groups")
	if got := s.names(); got != "call_tool,disable_tools,enable_tools,find_tools" {
		t.Fatalf("initial list = %q: nothing of the fixture should be listed before it is enabled", got)
	}
	text := s.mustCall("enable_tools", map[string]any{"groups": []string{"fx", "fx.issues"}})
	if !strings.Contains(text, "Search before creating an issue.") {
		t.Errorf("enable_tools did not return the upstream group's instructions: %s", text)
	}
	s.waitChanged()
	if got := s.names(); got != "call_tool,disable_tools,enable_tools,find_tools,fx__create_issue,fx__echo,fx__list_issues,fx__open_wiki,fx__read_page,fx__search" {
		t.Errorf("after enabling fx and fx.issues: %s", got)
	}
	if got := s.mustCall("fx__create_issue", map[string]any{"title": "Crash on start"}); got != `create_issue {"title":"Crash on start"}` {
		t.Errorf("fx__create_issue = %q", got)
	}
	s.mustCall("enable_tools", map[string]any{"groups": []string{"fx.issues.labels"}})
	s.waitChanged()
	if got := s.mustCall("fx__add_label", map[string]any{"issue": 1, "label": "bug"}); got != `add_label {"issue":1,"label":"bug"}` {
		t.Errorf("fx__add_label = %q", got)
	}

	// The fixture adds a group "wiki" holding read_page and sends
	// notifications/groups/list_changed: toolfold reads the groups again,
	// read_page leaves fx for fx.wiki, and this client's list changes.
	if got := s.mustCall("fx__open_wiki", map[string]any{}); got != "wiki opened" {
		t.Fatalf("fx__open_wiki = %q", got)
	}
	s.waitChanged()
	if got := s.names(); strings.Contains(got, "fx__read_page") {
		t.Errorf("read_page is still listed after it moved to fx.wiki: %s", got)
	}
	s.mustCall("enable_tools", map[string]any{"groups": []string{"fx.wiki"}})
	s.waitChanged()
	if got := s.mustCall("fx__read_page", map[string]any{"page": "Home"}); got != `read_page {"page":"Home"}` {
		t.Errorf("fx__read_page = %q", got)
	}
}

// TestUpstreamGroupsInSearchMode finds a tool of a nested upstream group
// with find_tools and calls it through call_tool.
func TestUpstreamGroupsInSearchMode(t *testing.T) {
	s := stdioSession2025(t, "e2e-go", []string{"TOOLFOLD_CACHE_DIR=" + t.TempDir()}, "--config", groupsFixtureConfig(t), "--mode", "search")
	text := s.mustData("find_tools", map[string]any{"query": "add a label to an issue"})
	var found struct {
		Tools []struct{ Name, Group string }
	}
	if err := json.Unmarshal([]byte(text), &found); err != nil {
		t.Fatalf("%v: %s", err, text)
	}
	if len(found.Tools) == 0 || found.Tools[0].Name != "fx__add_label" || found.Tools[0].Group != "fx.issues.labels" {
		t.Fatalf("find_tools did not rank fx__add_label (group fx.issues.labels) first: %s", text)
	}
	if got := s.mustCall("call_tool", map[string]any{"name": "fx__add_label", "arguments": map[string]any{"issue": 2, "label": "ui"}}); got != `add_label {"issue":2,"label":"ui"}` {
		t.Errorf("call_tool fx__add_label = %q", got)
	}
}

// TestUpstreamGroupsServedOn folds the fixture and serves it on through
// toolfold's own groups extension: a client that declares the extension
// finds the fixture's groups nested under the server's group (names mapped
// to the extension's rule), gets their
// instructions and tools, and calls a scoped tool that its tools/list leaves
// out; the same client without the extension reaches that tool through
// search. Over stdio and streamable HTTP, on both protocols.
func TestUpstreamGroupsServedOn(t *testing.T) {
	t.Setenv("TOOLFOLD_CACHE_DIR", t.TempDir())
	cfg := groupsFixtureConfig(t)
	httpBase := startHTTP(t, "--config", cfg)
	for _, transport := range []string{"stdio", "http"} {
		base := ""
		if transport == "http" {
			base = httpBase
		}
		for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
			t.Run(transport+"/"+protocol, func(t *testing.T) {
				servedOn(t, base, protocol, cfg)
			})
		}
	}
}

// servedOn is one client of the extension and one without, against the
// toolfold at base (stdio when empty) folding the fixture.
func servedOn(t *testing.T, base, protocol, cfg string) {
	s := extGoSession(t, base, protocol, "some-agent", true, "--config", cfg)
	if got := goListGroups(t, s); got != "fx" {
		t.Errorf("groups/list = %q, want the server's group alone", got)
	}
	for _, want := range []struct{ group, tools, groups, instructions string }{
		{"fx", "fx__echo,fx__open_wiki,fx__read_page", "fx-issues,fx-repos", ""},
		{"fx-issues", "fx__create_issue,fx__list_issues,fx__search", "fx-issues-labels", "Search before creating an issue."},
		{"fx-issues-labels", "fx__add_label", "", "A label must exist before it is added."},
		{"fx-repos", "fx__list_repos,fx__search", "", ""},
	} {
		res, err := goGetGroup(s, want.group)
		if err != nil {
			t.Fatalf("groups/get %s: %v", want.group, err)
		}
		tools, groups := contentNames(res)
		if tools != want.tools || groups != want.groups || !strings.Contains(res.Instructions, want.instructions) {
			t.Errorf("groups/get %s: tools %q, groups %q, instructions %q; want %q, %q, %q",
				want.group, tools, groups, res.Instructions, want.tools, want.groups, want.instructions)
		}
	}
	if got := s.names(); strings.Contains(got, "fx__") {
		t.Errorf("tools/list of a client of the extension holds scoped tools: %q", got)
	}
	if got := s.mustCall("fx__add_label", map[string]any{"issue": 3, "label": "docs"}); got != `add_label {"issue":3,"label":"docs"}` {
		t.Errorf("fx__add_label = %q", got)
	}

	plain := extGoSession(t, base, protocol, "some-agent", false, "--config", cfg)
	if got := plain.names(); strings.Contains(got, "fx__") || !strings.Contains(got, "find_tools") {
		t.Errorf("a client without the extension got %q, want the search list", got)
	}
	text := plain.mustData("find_tools", map[string]any{"query": "add a label to an issue"})
	if !strings.Contains(text, `"name":"fx__add_label"`) {
		t.Errorf("find_tools = %s", text)
	}
	if got := plain.mustCall("call_tool", map[string]any{"name": "fx__add_label", "arguments": map[string]any{"issue": 4, "label": "ui"}}); got != `add_label {"issue":4,"label":"ui"}` {
		t.Errorf("call_tool fx__add_label = %q", got)
	}
}
