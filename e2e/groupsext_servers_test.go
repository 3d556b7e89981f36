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
	"github.com/toolfold/toolfold/internal/groupsext"
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

// groupWalk is what a client of the groups extension reaches through
// groups/list and groups/get alone.
type groupWalk struct {
	tools     map[string]*mcp.Tool
	prompts   map[string]string // prompt name → the group that carried it
	resources map[string]string // resource URI → the group that carried it
	groups    []string          // every group fetched, in order
}

// walkGroups fetches every top-level group and, recursively, every child
// group, and collects what their contents define. A definition met twice
// fails the test: a primitive has one place.
func walkGroups(t *testing.T, s *session) *groupWalk {
	t.Helper()
	w := &groupWalk{tools: map[string]*mcp.Tool{}, prompts: map[string]string{}, resources: map[string]string{}}
	var queue []string
	cursor := ""
	for {
		page, err := mcp.CallCustomMethod[*groupsext.ListParams, *groupsext.ListResult](context.Background(), s.ClientSession, groupsext.MethodList, &groupsext.ListParams{Cursor: cursor})
		if err != nil {
			t.Fatalf("groups/list: %v", err)
		}
		for _, g := range page.Groups {
			queue = append(queue, g.Name)
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		w.groups = append(w.groups, name)
		res, err := goGetGroup(s, name)
		if err != nil {
			t.Fatalf("groups/get %s: %v", name, err)
		}
		if res.Contents == nil {
			continue
		}
		for _, tl := range res.Contents.Tools {
			if _, dup := w.tools[tl.Name]; dup {
				t.Errorf("tool %s is in more than one group", tl.Name)
			}
			if tl.InputSchema == nil || tl.Description == "" {
				t.Errorf("groups/get %s: %s is not a complete definition", name, tl.Name)
			}
			w.tools[tl.Name] = tl
		}
		for _, p := range res.Contents.Prompts {
			if prev, dup := w.prompts[p.Name]; dup {
				t.Errorf("prompt %s is in %s and %s", p.Name, prev, name)
			}
			w.prompts[p.Name] = name
		}
		for _, r := range res.Contents.Resources {
			if prev, dup := w.resources[r.URI]; dup {
				t.Errorf("resource %s is in %s and %s", r.URI, prev, name)
			}
			w.resources[r.URI] = name
		}
		for _, c := range res.Contents.Groups {
			queue = append(queue, c.Name)
		}
	}
	return w
}

// TestGroupsExtensionReachesEveryToolOfRealServers is the groups
// extension's "done when": a 2026-07-28 client that speaks the extension
// discovers every tool of a real multi-server config through groups/list
// and groups/get alone (nested and derived groups included), and calls a
// read-only tool of each server by tools/call; over stdio and HTTP.
func TestGroupsExtensionReachesEveryToolOfRealServers(t *testing.T) {
	path, files, catalog := referenceCatalog(t)
	base := startHTTP(t, "--config", path)
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			b := ""
			if transport == "http" {
				b = base
			}
			s := extGoSession(t, b, "2026-07-28", "some-agent", true, "--config", path)
			if got := s.names(); got != "" {
				t.Errorf("tools/list = %q: every tool of the config is in a group", got)
			}
			w := walkGroups(t, s)
			t.Logf("groups fetched: %v; tools reached: %d", w.groups, len(w.tools))
			reached := slices.Sorted(func(yield func(string) bool) {
				for name := range w.tools {
					if !yield(name) {
						return
					}
				}
			})
			if !slices.Equal(reached, catalog) {
				t.Errorf("reached %d tools through the groups, the catalog has %d:\nreached %v\ncatalog %v", len(reached), len(catalog), reached, catalog)
			}
			// The filesystem server's tools sit in derived sub-groups,
			// reached only through their parent.
			if !slices.Contains(w.groups, "files-file") || !slices.Contains(w.groups, "files-directory") {
				t.Errorf("the derived groups were not reached: %v", w.groups)
			}
			calls := []struct {
				tool string
				args map[string]any
				want string
			}{
				{"everything__echo", map[string]any{"message": "folded"}, "folded"},
				{"memory__read_graph", map[string]any{}, "entities"},
				{"files__list_allowed_directories", map[string]any{}, files},
			}
			for _, c := range calls {
				def, ok := w.tools[c.tool]
				if !ok {
					t.Errorf("%s was not disclosed by any group", c.tool)
					continue
				}
				if def.Annotations == nil || !def.Annotations.ReadOnlyHint {
					t.Errorf("%s is not read-only: %+v", c.tool, def.Annotations)
				}
				if text := s.mustCall(c.tool, c.args); !strings.Contains(text, c.want) {
					t.Errorf("%s = %s, want it to mention %q", c.tool, text, c.want)
				}
			}
		})
	}
}

// TestGroupsExtensionCarriesUpstreamPrompts: the everything server's
// prompts and resources are in its group's groups/get, not in the lists of
// a client of the extension, and still served by prompts/get and
// resources/read; a client without the extension lists them as before.
func TestGroupsExtensionCarriesUpstreamPrompts(t *testing.T) {
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
				s := extGoSession(t, b, protocol, "some-agent", true, "--config", path)
				w := walkGroups(t, s)
				t.Logf("prompts carried: %v; resources carried: %v", w.prompts, w.resources)
				if len(w.prompts) == 0 || len(w.resources) == 0 {
					t.Fatalf("no group carried prompts (%v) or resources (%v)", w.prompts, w.resources)
				}
				for name, group := range w.prompts {
					if group != "everything" || !strings.HasPrefix(name, "everything__") {
						t.Errorf("prompt %s is carried by %s", name, group)
					}
				}
				// A server's resources belong to its own group, never to
				// a group derived from part of its tools.
				fromEverything := 0
				for uri, group := range w.resources {
					if !slices.Contains([]string{"everything", "memory", "files"}, group) {
						t.Errorf("resource %s is carried by %s", uri, group)
					}
					if group == "everything" {
						fromEverything++
					}
				}
				if fromEverything == 0 {
					t.Errorf("the everything group carries none of its server's resources: %v", w.resources)
				}
				prompts, err := s.ListPrompts(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range prompts.Prompts {
					if _, scoped := w.prompts[p.Name]; scoped {
						t.Errorf("prompts/list still lists %s, which its group carries", p.Name)
					}
				}
				resources, err := s.ListResources(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range resources.Resources {
					if _, scoped := w.resources[r.URI]; scoped {
						t.Errorf("resources/list still lists %s, which its group carries", r.URI)
					}
				}
				// Still served: a prompt without required arguments, and a
				// resource.
				res, err := goGetGroup(s, "everything")
				if err != nil {
					t.Fatal(err)
				}
				var prompt string
				for _, p := range res.Contents.Prompts {
					if !slices.ContainsFunc(p.Arguments, func(a *mcp.PromptArgument) bool { return a.Required }) {
						prompt = p.Name
						break
					}
				}
				if prompt == "" {
					t.Fatalf("every prompt needs arguments: %+v", res.Contents.Prompts)
				}
				if got, err := s.GetPrompt(ctx, &mcp.GetPromptParams{Name: prompt}); err != nil || len(got.Messages) == 0 {
					t.Errorf("prompts/get %s: %v %+v", prompt, err, got)
				}
				uri := res.Contents.Resources[0].URI
				if read, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err != nil || len(read.Contents) == 0 || read.Contents[0].URI != uri {
					t.Errorf("resources/read %s: %v %+v", uri, err, read)
				}
				// Without the extension, the lists hold them all.
				plain := extGoSession(t, b, protocol, "some-agent", false, "--config", path)
				listed, err := plain.ListPrompts(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				for name := range w.prompts {
					if !slices.ContainsFunc(listed.Prompts, func(p *mcp.Prompt) bool { return p.Name == name }) {
						t.Errorf("without the extension, prompts/list lacks %s", name)
					}
				}
				listedResources, err := plain.ListResources(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				for uri := range w.resources {
					if !slices.ContainsFunc(listedResources.Resources, func(r *mcp.Resource) bool { return r.URI == uri }) {
						t.Errorf("without the extension, resources/list lacks %s", uri)
					}
				}
			})
		}
	}
}
