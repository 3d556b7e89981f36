package search

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
)

// catalogsDir locates the shared real catalogs, or skips (fails in CI).
func catalogsDir(tb testing.TB) string { return catalogtest.SharedDir(tb) }

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
