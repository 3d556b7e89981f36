package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// referenceCatalog writes the reference servers' config, isolates the
// catalog cache, and returns the config's path and the tool names
// `toolfold tools --json` reports for it (which also fills the cache, so
// the servers behind toolfold are known from the start).
func referenceCatalog(t *testing.T) (path, files string, tools []string) {
	t.Helper()
	t.Setenv("TOOLFOLD_CACHE_DIR", t.TempDir())
	cfg, files := referenceServers(t)
	path = writeConfig(t, cfg)
	cmd := exec.Command(binary, "tools", "--json", "--config", path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("toolfold tools --json: %v\n%s", err, stderr.String())
	}
	var listed []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &listed); err != nil {
		t.Fatalf("toolfold tools --json: %v\n%s", err, stdout.String())
	}
	for _, tl := range listed {
		tools = append(tools, tl.Name)
	}
	slices.Sort(tools)
	return path, files, tools
}

// TestGroupingReachesEveryToolOfRealServers is the grouping extension's
// "done when": the draft's client (draftclient_test.go), on both protocols,
// finds every tool of a real multi-server config in tools/list, each
// naming only groups that groups/list has (derived sub-groups under their
// server's group), reaches each by choosing its group, and calls a
// read-only tool of each server; over stdio and HTTP.
func TestGroupingReachesEveryToolOfRealServers(t *testing.T) {
	path, files, catalog := referenceCatalog(t)
	base := startHTTP(t, "--config", path)
	for _, transport := range []string{"stdio", "http"} {
		for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
			t.Run(transport+"/"+protocol, func(t *testing.T) {
				b := ""
				if transport == "http" {
					b = base
				}
				s, _ := draftSession(t, b, protocol, "--config", path)
				tr, _ := draftGroups(t, s)
				tools := draftTools(t, s, tr)
				var names []string
				byName := map[string]*mcp.Tool{}
				for _, tl := range tools {
					names = append(names, tl.Name)
					byName[tl.Name] = tl
				}
				slices.Sort(names)
				if !slices.Equal(names, catalog) {
					t.Errorf("tools/list has %d tools, the catalog %d:\nlisted  %v\ncatalog %v", len(names), len(catalog), names, catalog)
				}
				// Choosing every root discloses every tool: nothing is out
				// of reach of the tree.
				if got := draftFilter(tools, tr, tr.roots...); !slices.Equal(got, names) {
					t.Errorf("the roots' subtrees disclose %d of %d tools", len(got), len(names))
				}
				// The filesystem server's tools sit in derived sub-groups.
				for _, g := range []string{"files-file", "files-directory"} {
					if !slices.Equal(draftMembers(tr.groups[g].Meta), []string{"files"}) {
						t.Errorf("derived group %s: %+v (roots %v)", g, tr.groups[g], tr.roots)
					}
				}
				calls := []struct {
					group, tool string
					args        map[string]any
					want        string
				}{
					{"everything", "everything__echo", map[string]any{"message": "folded"}, "folded"},
					{"memory", "memory__read_graph", map[string]any{}, "entities"},
					{"files", "files__list_allowed_directories", map[string]any{}, files},
				}
				for _, c := range calls {
					if !slices.Contains(draftFilter(tools, tr, c.group), c.tool) {
						t.Errorf("choosing %s does not disclose %s", c.group, c.tool)
						continue
					}
					if def := byName[c.tool]; def.Annotations == nil || !def.Annotations.ReadOnlyHint {
						t.Errorf("%s is not read-only: %+v", c.tool, def.Annotations)
					}
					if text := s.mustCall(c.tool, c.args); !strings.Contains(text, c.want) {
						t.Errorf("%s = %s, want it to mention %q", c.tool, text, c.want)
					}
				}
			})
		}
	}
}

// TestGroupingMembershipOfUpstreamPrompts: the everything server's prompts
// name its group, and its resources their server's group, in the lists of
// a client of the extension; they are served as before, and a client
// without the extension gets them without membership.
func TestGroupingMembershipOfUpstreamPrompts(t *testing.T) {
	path, _, _ := referenceCatalog(t)
	base := startHTTP(t, "--config", path)
	ctx := context.Background()
	for _, transport := range []string{"stdio", "http"} {
		for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
			t.Run(transport+"/"+protocol, func(t *testing.T) {
				b := ""
				if transport == "http" {
					b = base
				}
				s, _ := draftSession(t, b, protocol, "--config", path)
				prompts, err := s.ListPrompts(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				var prompt string
				for _, p := range prompts.Prompts {
					if got := draftMembers(p.Meta); !slices.Equal(got, []string{"everything"}) {
						t.Errorf("prompt %s names groups %q", p.Name, got)
					}
					if prompt == "" && !slices.ContainsFunc(p.Arguments, func(a *mcp.PromptArgument) bool { return a.Required }) {
						prompt = p.Name
					}
				}
				if prompt == "" {
					t.Fatalf("no prompt without required arguments: %+v", prompts.Prompts)
				}
				if got, err := s.GetPrompt(ctx, &mcp.GetPromptParams{Name: prompt}); err != nil || len(got.Messages) == 0 {
					t.Errorf("prompts/get %s: %v %+v", prompt, err, got)
				}
				resources, err := s.ListResources(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				fromEverything := ""
				for _, r := range resources.Resources {
					// A server's resources belong to its own group, never
					// to a group derived from part of its tools.
					got := draftMembers(r.Meta)
					if len(got) != 1 || !slices.Contains([]string{"everything", "memory", "files"}, got[0]) {
						t.Errorf("resource %s names groups %q", r.URI, got)
					}
					if len(got) == 1 && got[0] == "everything" && fromEverything == "" {
						fromEverything = r.URI
					}
				}
				if fromEverything == "" {
					t.Fatalf("no resource of the everything server: %+v", resources.Resources)
				}
				if read, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: fromEverything}); err != nil || len(read.Contents) == 0 {
					t.Errorf("resources/read %s: %v %+v", fromEverything, err, read)
				}
				plain := extGoSession(t, b, protocol, "some-agent", false, "--config", path)
				listed, err := plain.ListPrompts(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(listed.Prompts) != len(prompts.Prompts) {
					t.Errorf("without the extension: %d prompts, with it %d", len(listed.Prompts), len(prompts.Prompts))
				}
				for _, p := range listed.Prompts {
					if p.Meta[draftMembershipKey] != nil {
						t.Errorf("without the extension, prompt %s names groups", p.Name)
					}
				}
			})
		}
	}
}
