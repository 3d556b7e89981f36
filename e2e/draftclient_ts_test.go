package e2e

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tsDraftReport is what node/draftclient.mjs prints.
type tsDraftReport struct {
	Declared  map[string]any      `json:"declared"`
	Groups    int                 `json:"groups"`
	Roots     []string            `json:"roots"`
	Children  map[string][]string `json:"children"`
	Problems  []string            `json:"problems"`
	Tools     int                 `json:"tools"`
	Ungrouped []string            `json:"ungrouped"`
	Calls     []struct {
		Group, Tool, Text string
		Chosen            []string
		IsError, Missing  bool
	} `json:"calls"`
	ChangeCall *struct{ Text string } `json:"changeCall"`
	After      *struct {
		Groups []string `json:"groups"`
	} `json:"after"`
	Heard int    `json:"heard"`
	Error string `json:"error"`
}

// TestTSDraftClientMultiServer: a client of the grouping draft written
// from its text on the TypeScript SDK (node/draftclient.mjs) against a real
// multi-server config (memory, filesystem, everything, and the groups
// fixture serving the draft itself), over stdio and HTTP, on 2025-11-25 and
// 2026-07-28: it lists the groups page by page, rebuilds the tree from
// _meta, finds every tool's groups in groups/list, keeps the tools of the
// group it chose and the groups below, and calls a tool of each server
// from there. The extension's listChanged is declared on stdio 2025-11-25
// and over HTTP, where toolfold sends notifications/groups/list_changed,
// and on stdio the client hears it when the fixture adds a group.
func TestTSDraftClientMultiServer(t *testing.T) {
	node := requireNode(t)
	fx, err := groupsFixtureBinary()
	if err != nil {
		t.Fatal(err)
	}
	cacheDir := t.TempDir()
	t.Setenv("TOOLFOLD_CACHE_DIR", cacheDir)
	cfg := writeConfig(t, map[string]any{"mcpServers": map[string]any{
		"memory":     map[string]any{"command": nodeServer(t, "mcp-server-memory"), "env": map[string]string{"MEMORY_FILE_PATH": t.TempDir() + "/memory.jsonl"}},
		"filesystem": map[string]any{"command": nodeServer(t, "mcp-server-filesystem"), "args": []string{t.TempDir()}},
		"everything": map[string]any{"command": nodeServer(t, "mcp-server-everything")},
		"fx":         map[string]any{"command": fx, "env": map[string]string{"GROUPS_FIXTURE_MODE": "grouping"}},
	},
		// The fixture adds a group mid-session on purpose, and this test is
		// about hearing it: the trust gate accepts it (under the default it
		// is held, as TestTrustHoldsAGroupAddedMidSession shows).
		"trust": map[string]any{"onNew": "accept", "onChange": "accept"}})
	calls := []map[string]any{
		{"group": "memory", "tool": "memory__read_graph"},
		{"group": "filesystem", "tool": "filesystem__list_allowed_directories"},
		{"group": "everything", "tool": "everything__echo", "arguments": map[string]any{"message": "hello from the draft"}},
		{"group": "fx", "tool": "fx__add_label", "arguments": map[string]any{"issue": 9, "label": "ts"}},
	}
	base := startHTTP(t, "--config", cfg)
	// Each stdio subtest starts its own toolfold. A grouping client is
	// answered at once, without the tools of servers still starting (it
	// hears list_changed when they come, which this client does not wait
	// for), so the stdio gateways must find every server's tools in the
	// cache: wait until the HTTP gateway has started and cached them all.
	servers := []string{"everything", "filesystem", "fx", "memory"}
	waitFor(t, "every server to start and be cached", func() bool {
		for _, name := range servers {
			if sourceStatus(t, base, name).State != "ready" || !cachedCatalog(t, cacheDir, name) {
				return false
			}
		}
		return true
	})
	// The warm cache as it is now: each stdio gateway starts from a copy
	// of it, so that the group the fixture adds in one subtest, which
	// its gateway caches, is not what the next one starts from and then
	// sees go when its own fixture starts.
	warm := snapshotDir(t, cacheDir)
	for _, transport := range []string{"stdio", "http"} {
		for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
			t.Run(transport+"/"+protocol, func(t *testing.T) {
				plan := map[string]any{"command": binary, "args": []string{"serve", "--config", cfg}, "calls": calls,
					"env": map[string]string{"TOOLFOLD_CACHE_DIR": snapshotDir(t, warm)}}
				if transport == "http" {
					plan = map[string]any{"url": base + "/mcp", "calls": calls}
				}
				if protocol == "2026-07-28" {
					plan["protocol"] = protocol
				}
				sends := transport == "stdio" && protocol == "2025-11-25"
				if sends {
					plan["change"] = map[string]any{"tool": "fx__open_wiki", "timeoutMs": 20000}
				}
				raw, _ := json.Marshal(plan)
				cmd := exec.Command(node, "node/draftclient.mjs", string(raw))
				var stderr bytes.Buffer // the client's, and a stdio toolfold's (inherited)
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				t.Cleanup(func() {
					if t.Failed() {
						t.Logf("the draft client's report:\n%s\nits stderr (a stdio toolfold's included):\n%s", out, stderr.String())
					}
				})
				if err != nil {
					t.Fatalf("node draft client: %v\n%s", err, out)
				}
				var rep tsDraftReport
				if err := json.Unmarshal(out, &rep); err != nil {
					t.Fatalf("node draft client printed %q: %v", out, err)
				}
				if rep.Error != "" {
					t.Fatalf("node draft client failed: %s", rep.Error)
				}
				// Over HTTP, clients hear it on their subscriptions/listen
				// stream (2026-07-28) or standalone stream (2025-11-25):
				// internal/gateway/groupstream.go.
				declares := sends || transport == "http"
				if got, _ := rep.Declared["listChanged"].(bool); got != declares {
					t.Errorf("declared %v: listChanged must be true exactly where toolfold sends groups/list_changed (stdio 2025-11-25, HTTP)", rep.Declared)
				}
				for _, p := range rep.Problems {
					t.Error(p)
				}
				for _, root := range []string{"everything", "filesystem", "fx", "memory"} {
					if !slices.Contains(rep.Roots, root) {
						t.Errorf("roots %v lack the server group %s", rep.Roots, root)
					}
				}
				if got := strings.Join(rep.Children["fx-issues"], ","); got != "fx-issues-labels" {
					t.Errorf("fx-issues' children = %q, want the fixture's nested group", got)
				}
				if len(rep.Ungrouped) != 0 {
					t.Errorf("tools in no group: %v (every tool of a server is in its group)", rep.Ungrouped)
				}
				if len(rep.Calls) != len(calls) {
					t.Fatalf("%d calls reported, want %d", len(rep.Calls), len(calls))
				}
				for _, c := range rep.Calls {
					if c.Missing || c.IsError || c.Text == "" {
						t.Errorf("%s in %s: missing=%v isError=%v text=%q (chose %v)", c.Tool, c.Group, c.Missing, c.IsError, c.Text, c.Chosen)
					}
					if slices.ContainsFunc(c.Chosen, func(n string) bool { return !strings.HasPrefix(n, c.Group+"__") }) {
						t.Errorf("choosing %s kept %v, tools of other servers among them", c.Group, c.Chosen)
					}
				}
				if got := rep.Calls[3].Text; got != `add_label {"issue":9,"label":"ts"}` {
					t.Errorf("fx__add_label = %q", got)
				}
				if sends {
					if rep.Heard == 0 {
						t.Error("no notifications/groups/list_changed after the fixture added a group")
					}
					if rep.After == nil || !slices.Contains(rep.After.Groups, "fx-wiki") {
						t.Errorf("groups/list after the change lacks fx-wiki: %+v", rep.After)
					}
				}
			})
		}
	}
}

// cachedCatalog reports whether the catalog cache under dir holds a file
// of server's tools.
// snapshotDir copies dir into a new temporary directory and returns it. A
// gateway may be writing dir (a temporary file renamed while the copy
// walks), so a copy that fails is made again.
func snapshotDir(t *testing.T, dir string) string {
	t.Helper()
	for try := 1; ; try++ {
		dst := t.TempDir()
		err := os.CopyFS(dst, os.DirFS(dir))
		if err == nil {
			return dst
		}
		if try == 5 {
			t.Fatalf("copying %s: %v", dir, err)
		}
	}
}

func cachedCatalog(t *testing.T, dir, server string) bool {
	t.Helper()
	found := false
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasPrefix(d.Name(), server+"-") && strings.HasSuffix(d.Name(), ".json") {
			found = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}
