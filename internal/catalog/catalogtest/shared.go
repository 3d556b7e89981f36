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

// SharedDir finds the real tool catalogs of public MCP servers that live
// beside the repository (../shared/catalogs), or in $TOOLFOLD_CATALOGS. It
// skips the test when they are absent, unless TOOLFOLD_REQUIRE_CATALOGS=1
// says they must be there (as in CI), in which case it fails.
func SharedDir(t testing.TB) string {
	t.Helper()
	if dir := os.Getenv("TOOLFOLD_CATALOGS"); dir != "" {
		return dir
	}
	wd, err := os.Getwd()
	if err == nil {
		for dir := wd; dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				cand := filepath.Join(filepath.Dir(dir), "shared", "catalogs")
				if _, err := os.Stat(cand); err == nil {
					return cand
				}
				break
			}
		}
	}
	if os.Getenv("TOOLFOLD_REQUIRE_CATALOGS") == "1" {
		t.Fatal("the shared catalogs are required here but were not found: set TOOLFOLD_CATALOGS or put them at ../shared/catalogs")
	}
	t.Skip("skipping: the shared catalogs are not beside the repository (../shared/catalogs); set TOOLFOLD_CATALOGS to run this test")
	return ""
}

// Shared builds a catalog of every shared server's tools (azure-all is left
// out: it repeats azure), named "<server>__<tool>", with a group per server
// as the gateway makes by default.
func Shared(t testing.TB) *catalog.Catalog {
	t.Helper()
	dir := SharedDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no catalogs in %s", dir)
	}
	slices.Sort(files)
	var spec catalog.Spec
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
			Tools []*mcp.Tool `json:"tools"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, tl := range doc.Tools {
			// Keep schemas exactly as the server sent them.
			if b, err := json.Marshal(tl.InputSchema); err == nil {
				tl.InputSchema = json.RawMessage(b)
			}
			spec.Tools = append(spec.Tools, &catalog.Tool{ID: catalog.ToolID(server + "__" + tl.Name), Name: tl.Name, Source: server, Def: tl, Handler: Echo})
		}
		spec.Groups = append(spec.Groups, catalog.GroupSpec{
			ID: catalog.GroupID(server), Description: fmt.Sprintf("Tools of the %s MCP server", server),
			Members: catalog.Members{Sources: []string{server}},
		})
	}
	return Build(t, spec)
}
