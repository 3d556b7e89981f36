package search

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// catalogsDir locates the shared real catalogs: $TOOLFOLD_CATALOGS, else the
// "shared" folder beside the repository. When they are absent the calling
// test skips, unless TOOLFOLD_REQUIRE_CATALOGS=1 (CI) makes it fail.
func catalogsDir(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv("TOOLFOLD_CATALOGS")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "catalogs")
	}
	if _, err := os.Stat(filepath.Join(dir, "memory.json")); err != nil {
		if os.Getenv("TOOLFOLD_REQUIRE_CATALOGS") == "1" {
			tb.Fatalf("real catalogs not found in %s (set TOOLFOLD_CATALOGS): %v", dir, err)
		}
		tb.Skipf("real catalogs not found in %s; set TOOLFOLD_CATALOGS to run this test", dir)
	}
	return dir
}

// catalogTool is the part of an MCP tool definition the index reads.
type catalogTool struct {
	Name        string `json:"name"`
	Title       string `json:"title"`
	Description string `json:"description"`
	InputSchema struct {
		Properties map[string]struct {
			Description string `json:"description"`
			Enum        []any  `json:"enum"`
		} `json:"properties"`
	} `json:"inputSchema"`
	Annotations struct {
		Title string `json:"title"`
	} `json:"annotations"`
}

// loadCatalogs reads every catalog (azure-all.json is skipped: it is the
// same server as azure.json in another mode) into docs named
// "<server>__<tool>", each server its own group, the way a default
// toolfold config exposes them.
func loadCatalogs(tb testing.TB, dir string) []Doc {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		tb.Fatal(err)
	}
	slices.Sort(files)
	var docs []Doc
	for _, path := range files {
		server := strings.TrimSuffix(filepath.Base(path), ".json")
		if server == "azure-all" {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		var result struct {
			Tools []catalogTool `json:"tools"`
		}
		if err := json.Unmarshal(data, &result); err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		for _, t := range result.Tools {
			docs = append(docs, docFromTool(server, server, t))
		}
	}
	return docs
}

func docFromTool(prefix, group string, t catalogTool) Doc {
	title := t.Title
	if title == "" {
		title = t.Annotations.Title
	}
	d := Doc{
		ID:          prefix + "__" + t.Name,
		Name:        t.Name,
		Prefix:      prefix,
		Title:       title,
		Description: t.Description,
		Groups:      []GroupInfo{{Name: group}},
	}
	names := make([]string, 0, len(t.InputSchema.Properties))
	for name := range t.InputSchema.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		prop := t.InputSchema.Properties[name]
		p := Param{Name: name, Description: prop.Description}
		for _, v := range prop.Enum {
			if s, ok := v.(string); ok {
				p.Values = append(p.Values, s)
			}
		}
		d.Params = append(d.Params, p)
	}
	return d
}
