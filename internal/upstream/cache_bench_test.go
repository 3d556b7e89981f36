package upstream

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// writeCatalogCaches writes one cache file per recorded catalog in
// testdata/catalogs, as a run that listed those servers would have, and
// returns the cache and each file's server name and key.
func writeCatalogCaches(tb testing.TB) (diskCache, [][2]string) {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "catalogs", "*.json"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no recorded catalogs: %v", err)
	}
	c := diskCache{dir: tb.TempDir()}
	var files [][2]string
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		var list mcp.ListToolsResult
		if err := json.Unmarshal(data, &list); err != nil {
			tb.Fatalf("%s: %v", p, err)
		}
		rawSchemas(list.Tools)
		name := strings.TrimSuffix(filepath.Base(p), ".json")
		key := strings.Repeat("k", 32)
		e := &cacheEntry{Format: cacheFormat, Server: name, Key: key, SavedAt: time.Unix(0, 0).UTC(), Tools: list.Tools}
		if err := c.save(e); err != nil {
			tb.Fatal(err)
		}
		files = append(files, [2]string{name, key})
	}
	return c, files
}

// BenchmarkCacheLoad reads the cache files of the 36 recorded catalogs, as
// a cached start does.
func BenchmarkCacheLoad(b *testing.B) {
	c, files := writeCatalogCaches(b)
	b.ReportAllocs()
	for b.Loop() {
		for _, f := range files {
			if _, err := c.load(f[0], f[1]); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestCacheLoadReadsWhatWasSaved: every recorded catalog read back from
// its cache file is the list that was saved, schemas byte for byte.
func TestCacheLoadReadsWhatWasSaved(t *testing.T) {
	c, files := writeCatalogCaches(t)
	for _, f := range files {
		t.Run(f[0], func(t *testing.T) {
			data, err := os.ReadFile(c.path(f[0], f[1]))
			if err != nil {
				t.Fatal(err)
			}
			var want struct {
				Tools []*mcp.Tool `json:"tools"`
			}
			if err := json.Unmarshal(data, &want); err != nil {
				t.Fatal(err)
			}
			rawSchemas(want.Tools) // compacted by encoding/json
			got, err := c.load(f[0], f[1])
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Tools) != len(want.Tools) || len(got.Tools) == 0 {
				t.Fatalf("read %d tools, saved %d", len(got.Tools), len(want.Tools))
			}
			for i, g := range got.Tools {
				w := want.Tools[i]
				gj, _ := json.Marshal(g)
				wj, _ := json.Marshal(w)
				if string(gj) != string(wj) {
					t.Fatalf("tool %s read back as\n%s\nsaved as\n%s", w.Name, gj, wj)
				}
				if string(g.InputSchema.(json.RawMessage)) != string(w.InputSchema.(json.RawMessage)) {
					t.Fatalf("tool %s: schema text %s, want %s", w.Name, g.InputSchema, w.InputSchema)
				}
			}
		})
	}
}

// TestCacheLoadRejectsABrokenSchema: the one decode is also the check; a
// schema that is not JSON makes the file corrupt, not a tool.
func TestCacheLoadRejectsABrokenSchema(t *testing.T) {
	c := diskCache{dir: t.TempDir()}
	key := strings.Repeat("k", 32)
	deep := strings.Repeat("[", 3_000_000) // would overflow the decoder's stack
	for _, schema := range []string{`{"type": "object",}`, `{"type": "obj`, `{"a": [1, 2}`, `nul`, deep} {
		file := `{"format": 2, "server": "s", "key": "` + key + `", "tools": [{"name": "t", "inputSchema": ` + schema + `}]}`
		if err := os.WriteFile(c.path("s", key), []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
		if e, err := c.load("s", key); err == nil || !strings.Contains(err.Error(), "corrupt") {
			t.Errorf("schema %.40s: load gave %v, %v; want the file reported corrupt", schema, e, err)
		}
	}
}
