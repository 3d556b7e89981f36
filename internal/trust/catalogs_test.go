package trust

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var update = flag.Bool("update", false, "rewrite testdata/catalog-findings.txt")

// catalogItems reads the recorded real catalogs as servers of items. azure-all
// is a superset of azure (the same server in another mode), so it is left out
// as the catalog tests elsewhere do.
func catalogItems(t testing.TB) map[string][]Item {
	t.Helper()
	out := map[string][]Item{}
	for name, tools := range catalogTools(t) {
		for _, tool := range tools {
			it, err := ToolItem(tool)
			if err != nil {
				t.Fatal(err)
			}
			out[name] = append(out[name], it)
		}
	}
	return out
}

// catalogTools are the recorded catalogs' tools by server.
func catalogTools(t testing.TB) map[string][]*mcp.Tool {
	t.Helper()
	files, err := filepath.Glob("../../testdata/catalogs/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded catalogs: %v", err)
	}
	out := map[string][]*mcp.Tool{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		if name == "azure-all" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cat struct{ Tools []*mcp.Tool }
		if err := json.Unmarshal(b, &cat); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[name] = cat.Tools
	}
	return out
}

// TestCatalogsNoHold starts every recorded real server on an empty lock
// under the default policy, then again on the lock it wrote: nothing is held
// either time.
func TestCatalogsNoHold(t *testing.T) {
	servers := catalogItems(t)
	if len(servers) != 35 {
		t.Fatalf("read %d catalogs, want the 35 recorded", len(servers))
	}
	findings := Scan(servers)
	lock := NewLock()
	for round := range 2 {
		for name, items := range servers {
			v := Decide(lock, name, items, Policy{}, findings)
			if len(v.Held) != 0 {
				t.Errorf("round %d: %s: %d items held under the default policy, e.g. %v", round, name, len(v.Held), v.Held)
			}
			if round == 1 && v.LockChanged {
				t.Errorf("round %d: %s: the lock changed on a second start with the same definitions", round, name)
			}
		}
	}
}

// TestCatalogsFindings lists what the scan finds in the recorded catalogs,
// against testdata/catalog-findings.txt (go test -run CatalogsFindings
// -update rewrites it). The list is reviewed by hand: none of it is poison.
func TestCatalogsFindings(t *testing.T) {
	var lines []string
	for _, f := range Scan(catalogItems(t)) {
		lines = append(lines, f.String())
	}
	got := strings.Join(lines, "\n") + "\n"
	const golden = "testdata/catalog-findings.txt"
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run CatalogsFindings -update)", err)
	}
	if got != string(want) {
		t.Errorf("the scan's findings on the recorded catalogs changed:\n got:\n%s\nwant:\n%s", got, want)
	}
}

// TestToolItemKeepsItsDigests: ToolItem takes a tool's fields directly;
// every recorded tool, and the edge cases of an empty or null schema, keep
// the digest of the whole tool encoded and picked, which every lock
// already written holds.
func TestToolItemKeepsItsDigests(t *testing.T) {
	var tools []*mcp.Tool
	for _, ts := range catalogTools(t) {
		tools = append(tools, ts...)
	}
	tools = append(tools,
		&mcp.Tool{Name: "bare"},
		&mcp.Tool{Name: "null", InputSchema: json.RawMessage(`null`), Title: "T"},
		&mcp.Tool{Name: "map", InputSchema: map[string]any{"type": "object", "b": 1, "a": "<&>"}, Annotations: &mcp.ToolAnnotations{Title: "x"}},
	)
	for _, tool := range tools {
		got, err := ToolItem(tool)
		if err != nil {
			t.Fatal(err)
		}
		want, err := pick(KindTool, tool.Name, tool, toolFields)
		if err != nil {
			t.Fatal(err)
		}
		if got.Digest() != want.Digest() {
			t.Fatalf("tool %s: digest %s, the whole tool's %s\n%s\n%s", tool.Name, got.Digest(), want.Digest(), got.Def, want.Def)
		}
	}
}

// TestDigestsAreStable: the digests of the recorded catalogs' tools are
// those an earlier toolfold pinned (testdata/catalog-digests.txt, taken
// from a lock it wrote). A change of the canonical form would hold every
// tool of every committed lock.
func TestDigestsAreStable(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "catalog-digests.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(line)
		want[f[0]+" "+f[1]] = f[2]
	}
	n := 0
	for server, items := range catalogItems(t) {
		for _, it := range items {
			d, ok := want[server+" "+it.Key()]
			if !ok {
				continue
			}
			n++
			if it.Digest() != d {
				t.Errorf("%s %s: digest %s, pinned %s", server, it.Key(), it.Digest(), d)
			}
		}
	}
	if n != len(want) {
		t.Errorf("compared %d digests of %d", n, len(want))
	}
}
