package catalogtest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
)

// SharedDir returns the folder of real tool catalogs of public MCP servers
// that the repository keeps as test data (testdata/catalogs at the module
// root; its README says where each came from). They are part of the
// repository, so a missing folder is a broken checkout: the test fails.
func SharedDir(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for dir := wd; dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			cand := filepath.Join(dir, "testdata", "catalogs")
			if _, err := os.Stat(filepath.Join(cand, "README.md")); err != nil {
				t.Fatalf("the catalogs the tests read are missing from the repository (%v); restore testdata/catalogs from git", err)
			}
			return cand
		}
	}
	t.Fatalf("no go.mod above %s: run the tests inside the repository", wd)
	return ""
}

// SharedServer is one catalog of the shared set: a server's name and its
// tools, each exactly as the server listed it, for the reader to decode into
// whatever part of a tool it needs.
type SharedServer struct {
	Name  string
	Tools []json.RawMessage
}

// SharedServers reads every shared catalog in name order; azure-all is
// left out, as it repeats azure in another mode.
func SharedServers(t testing.TB) []SharedServer {
	t.Helper()
	dir := SharedDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no catalogs in %s", dir)
	}
	slices.Sort(files)
	var out []SharedServer
	for _, f := range files {
		server := strings.TrimSuffix(filepath.Base(f), ".json")
		if server == "azure-all" {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Tools []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, SharedServer{Name: server, Tools: doc.Tools})
	}
	return out
}

// Shared builds a catalog of every shared server's tools (azure-all is left
// out: it repeats azure), named "<server>__<tool>", with a group per server
// as the gateway makes by default.
func Shared(t testing.TB) *catalog.Catalog {
	t.Helper()
	var spec catalog.Spec
	for _, s := range SharedServers(t) {
		for _, raw := range s.Tools {
			var tl mcp.Tool
			if err := json.Unmarshal(raw, &tl); err != nil {
				t.Fatalf("%s: %v", s.Name, err)
			}
			// Keep the schema exactly as the server sent it.
			if b, err := json.Marshal(tl.InputSchema); err == nil {
				tl.InputSchema = json.RawMessage(b)
			}
			spec.Tools = append(spec.Tools, &catalog.Tool{ID: catalog.ToolID(s.Name + "__" + tl.Name), Name: tl.Name, Source: s.Name, Def: &tl, Handler: Echo})
		}
		spec.Groups = append(spec.Groups, catalog.GroupSpec{
			ID: catalog.GroupID(s.Name), Description: fmt.Sprintf("Tools of the %s MCP server", s.Name),
			Members: catalog.Members{Sources: []string{s.Name}},
		})
	}
	return Build(t, spec)
}

// Scaled is a spec of n tools made by repeating the shared servers under new
// names ("github", "github-2", "github-3", …) until there are n, the last
// copy cut short, each copy with its group as the gateway makes by default.
// Every tool is decoded on its own, schema into generic values as an MCP
// client decodes a tools/list, so that a catalog of the spec holds what a
// gateway in front of that many servers would. The catalogs are read once per
// call; decoding is the caller's cost, outside any benchmark timer it stops.
func Scaled(t testing.TB, n int) catalog.Spec {
	t.Helper()
	servers := SharedServers(t)
	var spec catalog.Spec
	for copyNo := 1; len(spec.Tools) < n; copyNo++ {
		for _, s := range servers {
			if len(spec.Tools) >= n {
				break
			}
			name := s.Name
			if copyNo > 1 {
				name = fmt.Sprintf("%s-%d", s.Name, copyNo)
			}
			for _, raw := range s.Tools {
				if len(spec.Tools) >= n {
					break
				}
				tl := new(mcp.Tool)
				if err := json.Unmarshal(raw, tl); err != nil {
					t.Fatalf("%s: %v", s.Name, err)
				}
				spec.Tools = append(spec.Tools, &catalog.Tool{ID: catalog.ToolID(name + "__" + tl.Name), Name: tl.Name, Source: name, Def: tl, Handler: Echo})
			}
			spec.Groups = append(spec.Groups, catalog.GroupSpec{
				ID: catalog.GroupID(name), Description: fmt.Sprintf("Tools of the %s MCP server", name),
				Members: catalog.Members{Sources: []string{name}},
			})
		}
	}
	return spec
}
