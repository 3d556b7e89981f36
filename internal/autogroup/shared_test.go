package autogroup

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.tree from the current derivation")

// sharedServer is one catalog of the shared set, as derivation reads it.
type sharedServer struct {
	name  string
	tools []Tool
}

// loadShared reads the shared catalogs, naming tools "<server>__<tool>" as
// the gateway does by default.
func loadShared(tb testing.TB) []sharedServer {
	tb.Helper()
	var out []sharedServer
	for _, server := range catalogtest.SharedServers(tb) {
		s := sharedServer{name: server.Name}
		for _, raw := range server.Tools {
			var t struct {
				Name        string `json:"name"`
				Description string `json:"description"`
				Annotations *struct {
					ReadOnlyHint bool `json:"readOnlyHint"`
				} `json:"annotations"`
			}
			if err := json.Unmarshal(raw, &t); err != nil {
				tb.Fatalf("%s: %v", server.Name, err)
			}
			s.tools = append(s.tools, Tool{ID: server.Name + "__" + t.Name, Name: t.Name, Description: t.Description,
				ReadOnly: t.Annotations != nil && t.Annotations.ReadOnlyHint})
		}
		out = append(out, s)
	}
	return out
}

// renderTree writes a derived tree for review: each group with its size,
// basis and description, then its direct tools.
func renderTree(server string, root *Node) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%d tools, %d direct): %s\n", server, root.Size(), len(root.Tools), root.Description)
	root.Walk(func(path []string, n *Node) {
		indent := strings.Repeat("  ", len(path))
		if len(path) > 0 {
			fmt.Fprintf(&b, "%s%s.%s [%s] %d tools, %d direct: %s\n", indent, server, strings.Join(path, "."), n.Basis, n.Size(), len(n.Tools), n.Description)
		}
		for _, id := range n.Tools {
			fmt.Fprintf(&b, "%s  - %s\n", indent, strings.TrimPrefix(id, server+"__"))
		}
	})
	return b.String()
}

// TestSharedTreesGolden derives the tree of every shared catalog with the
// default size and compares it with testdata/<server>.tree, which is
// reviewed like code: a change of derivation shows as a diff of names,
// descriptions and places.
func TestSharedTreesGolden(t *testing.T) {
	for _, s := range loadShared(t) {
		root := Derive(s.tools, Options{Ignore: []string{s.name}})
		got := renderTree(s.name, root)
		path := filepath.Join("testdata", s.name+".tree")
		if *update {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./internal/autogroup -run Golden -update to write it)", err)
		}
		if got != string(want) {
			t.Errorf("%s: derived tree differs from %s (review, then -update):\n%s", s.name, path, got)
		}
	}
}

// TestDescriptionsNameWhatTheyHold: over the shared catalogs, a derived
// group's description spells every tool it holds by its callable name, or
// counts the ones it leaves out (never an ellipsis that hides names), and
// the whole server is summarized by what its tools act on.
func TestDescriptionsNameWhatTheyHold(t *testing.T) {
	for _, s := range loadShared(t) {
		root := Derive(s.tools, Options{Ignore: []string{s.name}})
		if !strings.Contains(root.Description, fmt.Sprintf("(%d tool", len(s.tools))) || len(root.Description) > summaryBudget+40 {
			t.Errorf("%s: summary %q", s.name, root.Description)
		}
		root.Walk(func(path []string, n *Node) {
			if len(path) == 0 {
				return
			}
			if strings.Contains(n.Description, "…") {
				t.Errorf("%s.%s hides names: %s", s.name, strings.Join(path, "."), n.Description)
			}
			missing := 0
			for _, id := range n.Tools {
				prefix := commonPrefix(n.Tools)
				if !strings.Contains(n.Description, id) && !strings.Contains(n.Description, strings.TrimPrefix(id, prefix)) {
					missing++
				}
			}
			if missing > 0 && !strings.Contains(n.Description, fmt.Sprintf("and %d more", missing)) {
				t.Errorf("%s.%s leaves out %d names without counting them: %s", s.name, strings.Join(path, "."), missing, n.Description)
			}
		})
	}
}
