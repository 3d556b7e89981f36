package e2e

import (
	"context"
	"encoding/json"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
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

// groupsFixtureConfig is a config that folds the groups fixture as "fx",
// serving its groups in the shapes mode names ("grouping", "skills" or
// both, comma-separated; see groupsfixture.ParseMode).
func groupsFixtureConfig(t *testing.T, mode string) string {
	t.Helper()
	bin, err := groupsFixtureBinary()
	if err != nil {
		t.Fatal(err)
	}
	// The fixture changes its groups mid-session on purpose; these tests
	// are about serving them, so the trust gate accepts the change
	// (TestTrustHoldsAGroupAddedMidSession holds it under the default).
	return writeConfig(t, map[string]any{"mcpServers": map[string]any{"fx": map[string]any{
		"command": bin, "env": map[string]string{"GROUPS_FIXTURE_MODE": mode}}},
		"trust": map[string]any{"onNew": "accept", "onChange": "accept"}})
}

// stdioSession2025 is stdioSessionEnv on protocol 2025-11-25, the session
// era, where groups mode keeps a per-session view.
func stdioSession2025(t *testing.T, name string, environ []string, args ...string) *session {
	t.Helper()
	c, s := newClient(t, name)
	cmd := exec.Command(binary, serveArgs(args...)...)
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
// over an upstream that serves the grouping draft: its groups, nested
// ones included, are child groups of the server's group, declared by it.
func TestUpstreamGroupsShowAsToolfoldGroups(t *testing.T) {
	path := groupsFixtureConfig(t, "grouping")
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
// tools. The fixture serves the grouping draft and skills of the same
// names, whose bodies are the groups' instructions.
func TestUpstreamGroupsInGroupsMode(t *testing.T) {
	s := stdioSession2025(t, "e2e-go", []string{"TOOLFOLD_CACHE_DIR=" + t.TempDir()}, "--config", groupsFixtureConfig(t, "grouping,skills"), "--mode", "groups")
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

	// The fixture adds a group and a skill "wiki" holding read_page and
	// says so (groups/list_changed, tools/list_changed for read_page's new
	// _meta, resources/list_changed): toolfold reads the groups again,
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
	s := stdioSession2025(t, "e2e-go", []string{"TOOLFOLD_CACHE_DIR=" + t.TempDir()}, "--config", groupsFixtureConfig(t, "grouping"), "--mode", "search")
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
// toolfold's own grouping extension: the draft's client finds the
// fixture's groups nested under the server's group (names mapped), each
// tool naming its group, and calls a tool it chose by its group; on stdio
// 2025-11-25 it hears groups/list_changed when the fixture adds a group.
// The same client without the extension reaches the tool through search.
// Over stdio and streamable HTTP, on both protocols.
func TestUpstreamGroupsServedOn(t *testing.T) {
	t.Setenv("TOOLFOLD_CACHE_DIR", t.TempDir())
	cfg := groupsFixtureConfig(t, "grouping")
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
	s, notified := draftSession(t, base, protocol, "--config", cfg)
	tr, _ := draftGroups(t, s)
	var got []string
	for _, name := range slices.Sorted(maps.Keys(tr.groups)) {
		got = append(got, name+"<"+strings.Join(draftMembers(tr.groups[name].Meta), "+"))
	}
	// Other tests' calls may have opened the wiki on the shared HTTP server.
	want := "fx<,fx-issues<fx,fx-issues-labels<fx-issues,fx-repos<fx"
	if g := strings.Join(got, ","); g != want && g != "fx<,fx-issues<fx,fx-issues-labels<fx-issues,fx-repos<fx,fx-wiki<fx" {
		t.Errorf("groups/list = %q, want %q", g, want)
	}
	tools := draftTools(t, s, tr)
	members := map[string]string{}
	for _, tl := range tools {
		members[tl.Name] = strings.Join(draftMembers(tl.Meta), "+")
	}
	for tool, groups := range map[string]string{"fx__add_label": "fx-issues-labels", "fx__create_issue": "fx-issues", "fx__search": "fx-issues+fx-repos", "fx__echo": "fx"} {
		if members[tool] != groups {
			t.Errorf("%s names groups %q, want %q", tool, members[tool], groups)
		}
	}
	if got := draftFilter(tools, tr, "fx-issues"); strings.Join(got, ",") != "fx__add_label,fx__create_issue,fx__list_issues,fx__search" {
		t.Errorf("fx-issues chosen: %q", got)
	}
	if got := s.mustCall("fx__add_label", map[string]any{"issue": 3, "label": "docs"}); got != `add_label {"issue":3,"label":"docs"}` {
		t.Errorf("fx__add_label = %q", got)
	}
	if base == "" && protocol == "2025-11-25" {
		// This toolfold process is the client's own: the fixture adds the
		// wiki group, toolfold re-reads its groups and says so.
		s.mustCall("fx__open_wiki", map[string]any{})
		<-notified
		tr, _ = draftGroups(t, s)
		if _, ok := tr.groups["fx-wiki"]; !ok {
			t.Errorf("after groups/list_changed, groups/list lacks fx-wiki")
		}
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

// TestUpstreamSkillsServedOn folds the fixture serving skills only (no
// grouping draft) and serves it on, over stdio and HTTP, on both
// protocols: each upstream skill is a group under fx in groups/list and a
// skill of toolfold's, namespaced like the group (skill://issues becomes
// skill://fx-issues), whose frontmatter names the tools as this client
// lists them and whose SKILL.md holds the upstream skill's body; a
// supporting file of an upstream skill is read through toolfold at its
// own URI.
func TestUpstreamSkillsServedOn(t *testing.T) {
	t.Setenv("TOOLFOLD_CACHE_DIR", t.TempDir())
	cfg := groupsFixtureConfig(t, "skills")
	httpBase := startHTTP(t, "--config", cfg)
	for _, transport := range []string{"stdio", "http"} {
		base := ""
		if transport == "http" {
			base = httpBase
		}
		for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
			t.Run(transport+"/"+protocol, func(t *testing.T) {
				s, _ := draftSession(t, base, protocol, "--config", cfg)
				tr, _ := draftGroups(t, s)
				var got []string
				for _, name := range slices.Sorted(maps.Keys(tr.groups)) {
					got = append(got, name+"<"+strings.Join(draftMembers(tr.groups[name].Meta), "+"))
				}
				if g := strings.Join(got, ","); g != "fx<,fx-issues<fx,fx-labels<fx,fx-repos<fx,fx-writing<fx" {
					t.Errorf("groups/list = %q", g)
				}
				listed := map[string]bool{}
				for _, tl := range draftTools(t, s, tr) {
					listed[tl.Name] = true
				}
				skills := map[string]sepSkill{}
				for cursor := ""; ; {
					page, err := mcp.CallCustomMethod[*sepListParams, *sepListResult](context.Background(), s.ClientSession, "skills/list", &sepListParams{Cursor: cursor})
					if err != nil {
						t.Fatalf("skills/list: %v", err)
					}
					for _, sk := range page.Skills {
						skills[sk.URI] = sk
					}
					if cursor = page.NextCursor; cursor == "" {
						break
					}
				}
				for uri, want := range map[string]struct{ tools, body string }{
					"skill://fx-issues/SKILL.md":  {"fx__create_issue fx__list_issues fx__search", "Search before creating an issue."},
					"skill://fx-labels/SKILL.md":  {"fx__add_label", "A label must exist before it is added."},
					"skill://fx-writing/SKILL.md": {"", "skill://writing/references/style.md"},
				} {
					sk, ok := skills[uri]
					if !ok {
						t.Errorf("skills/list lacks %s; it has %v", uri, slices.Sorted(maps.Keys(skills)))
						continue
					}
					meta, _ := sk.Frontmatter["metadata"].(map[string]any)
					tools, _ := meta["io.modelcontextprotocol/tools"].(string)
					if tools != want.tools {
						t.Errorf("%s names the tools %q, want %q", uri, tools, want.tools)
					}
					for _, name := range strings.Fields(tools) {
						if !listed[name] {
							t.Errorf("%s names %s, which tools/list lacks", uri, name)
						}
					}
					read, err := s.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
					if err != nil || len(read.Contents) != 1 || !strings.Contains(read.Contents[0].Text, want.body) {
						t.Errorf("resources/read %s = %v, %v; want it to hold %q", uri, read, err, want.body)
					}
				}
				read, err := s.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "skill://writing/references/style.md"})
				if err != nil || len(read.Contents) != 1 || read.Contents[0].Text != "Use the imperative mood.\n" {
					t.Errorf("reading the upstream skill's supporting file through toolfold = %v, %v", read, err)
				}
				if got := s.mustCall("fx__add_label", map[string]any{"issue": 5, "label": "ux"}); got != `add_label {"issue":5,"label":"ux"}` {
					t.Errorf("fx__add_label = %q", got)
				}
			})
		}
	}
}
