package search

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
)

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

// loadCatalogs reads the recorded catalogs into docs named
// "<server>__<tool>", each server its own group, the way a default toolfold
// config exposes them.
func loadCatalogs(tb testing.TB) []Doc {
	tb.Helper()
	var docs []Doc
	for _, server := range catalogtest.SharedServers(tb) {
		for _, raw := range server.Tools {
			var t catalogTool
			if err := json.Unmarshal(raw, &t); err != nil {
				tb.Fatalf("%s: %v", server.Name, err)
			}
			docs = append(docs, docFromTool(server.Name, server.Name, t))
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
