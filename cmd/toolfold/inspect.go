package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/tokens"
)

// toolRow is one tool in `toolfold tools --json`.
type toolRow struct {
	Name        string               `json:"name"`
	Groups      []string             `json:"groups"`
	Source      string               `json:"source"`
	Description string               `json:"description"`
	Annotations *mcp.ToolAnnotations `json:"annotations,omitempty"`
	Tokens      int                  `json:"tokens"`
}

func runTools(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "tools", "[--config F] [--group G] [--json]")
	var d deployment
	d.register(fs)
	group := fs.String("group", "", "only the tools of this group and the groups inside it")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if err := parse(fs, args); err != nil {
		return err
	}
	cat, expo, err := inspectSetup(ctx, e, d)
	if err != nil {
		return err
	}
	tools := cat.Tools()
	if *group != "" {
		g, ok := cat.Group(catalog.GroupID(*group))
		if !ok {
			return fmt.Errorf("there is no group %q%s; 'toolfold groups' lists them", *group, nearest(*group, cat.GroupIDs()))
		}
		in := map[catalog.ToolID]bool{}
		g.Walk(func(sub *catalog.Group) {
			for _, t := range sub.Tools {
				in[t.ID] = true
			}
		})
		tools = nil
		for _, t := range cat.Tools() {
			if in[t.ID] {
				tools = append(tools, t)
			}
		}
	}
	rows := make([]toolRow, 0, len(tools))
	for _, t := range tools {
		w := expo.FlatWire(t)
		cost, err := tokens.ToolsCost([]*mcp.Tool{w.Tool})
		if err != nil {
			return fmt.Errorf("measuring %s: %w", t.ID, err)
		}
		groups := []string{}
		for _, g := range t.Groups {
			groups = append(groups, string(g.ID))
		}
		rows = append(rows, toolRow{Name: w.Name, Groups: groups, Source: t.Source,
			Description: t.Def.Description, Annotations: t.Def.Annotations, Tokens: cost})
	}
	if *asJSON {
		return writeJSON(e.stdout, rows)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tGROUPS\tSOURCE\tTOKENS\tANNOTATIONS")
	for _, r := range rows {
		groups := strings.Join(r.Groups, ",")
		if groups == "" {
			groups = "(ungrouped)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", r.Name, groups, r.Source, r.Tokens, annotationWords(r.Annotations))
	}
	return tw.Flush()
}

// groupRow is one group in `toolfold groups --json`.
type groupRow struct {
	Name        string `json:"name"`
	Parent      string `json:"parent,omitempty"`
	Description string `json:"description"`
	Tools       int    `json:"tools"`
	Tokens      int    `json:"tokens"`
	Default     string `json:"default"`
	Exposition  string `json:"exposition,omitempty"`
}

func runGroups(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "groups", "[--config F] [--json]")
	var d deployment
	d.register(fs)
	asJSON := fs.Bool("json", false, "print JSON instead of a tree")
	if err := parse(fs, args); err != nil {
		return err
	}
	cat, expo, err := inspectSetup(ctx, e, d)
	if err != nil {
		return err
	}
	var rows []groupRow
	for _, g := range cat.Groups() {
		cost, err := groupCost(expo, g)
		if err != nil {
			return err
		}
		r := groupRow{Name: string(g.ID), Description: g.Description, Tools: len(g.Tools), Tokens: cost, Default: g.Default.String()}
		if g.Parent != nil {
			r.Parent = string(g.Parent.ID)
		}
		if g.Exposition != catalog.Inherit {
			r.Exposition = g.Exposition.String()
		}
		rows = append(rows, r)
	}
	ungroupedCost, err := toolsCost(expo, cat.Ungrouped())
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(e.stdout, struct {
			Groups          []groupRow `json:"groups"`
			Ungrouped       int        `json:"ungrouped"`
			UngroupedTokens int        `json:"ungrouped_tokens"`
			Excluded        []string   `json:"excluded"`
		}{rows, len(cat.Ungrouped()), ungroupedCost, excludedNames(cat)})
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tTOOLS\tTOKENS\tDEFAULT\tDESCRIPTION")
	for i, r := range rows {
		fmt.Fprintf(tw, "%s%s\t%d\t%d\t%s\t%s\n", indent(cat.Groups()[i].Depth), r.Name, r.Tools, r.Tokens, r.Default, firstLine(r.Description))
	}
	if n := len(cat.Ungrouped()); n > 0 {
		fmt.Fprintf(tw, "(ungrouped)\t%d\t%d\talways\tvisible in every view\n", n, ungroupedCost)
	}
	for _, x := range cat.Excluded() {
		fmt.Fprintf(tw, "%s\t%d\t-\texcluded\t%s\n", x.ID, x.Tools, firstLine(x.Description))
	}
	return tw.Flush()
}

// inspectSetup builds the catalog and renders it flat, which is what the
// inspection commands measure.
func inspectSetup(ctx context.Context, e env, d deployment) (*catalog.Catalog, *expose.Exposure, error) {
	p, b, err := build(ctx, e, d, nil, inspectWait)
	if err != nil {
		return nil, nil, err
	}
	p.Upstreams.Close()
	expo, err := flatExposure(b.Catalog)
	if err != nil {
		return nil, nil, err
	}
	return b.Catalog, expo, nil
}

// groupCost is what enabling the group adds to the context: its own tools
// as flat wire tools.
func groupCost(expo *expose.Exposure, g *catalog.Group) (int, error) {
	return toolsCost(expo, g.Tools)
}

func toolsCost(expo *expose.Exposure, tools []*catalog.Tool) (int, error) {
	defs := make([]*mcp.Tool, len(tools))
	for i, t := range tools {
		defs[i] = expo.FlatWire(t).Tool
	}
	n, err := tokens.ToolsCost(defs)
	if err != nil {
		return 0, fmt.Errorf("measuring context cost: %w", err)
	}
	return n, nil
}

func excludedNames(cat *catalog.Catalog) []string {
	out := []string{}
	for _, x := range cat.Excluded() {
		out = append(out, string(x.ID))
	}
	return out
}

func annotationWords(a *mcp.ToolAnnotations) string {
	if a == nil {
		return "-"
	}
	var w []string
	if a.ReadOnlyHint {
		w = append(w, "read-only")
	}
	if !a.ReadOnlyHint && a.DestructiveHint != nil && *a.DestructiveHint {
		w = append(w, "destructive")
	}
	if a.IdempotentHint {
		w = append(w, "idempotent")
	}
	if a.OpenWorldHint != nil && *a.OpenWorldHint {
		w = append(w, "open-world")
	}
	if len(w) == 0 {
		return "-"
	}
	return strings.Join(w, ",")
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func nearest(name string, candidates []string) string {
	if near := catalog.Nearest(name, candidates, 1); len(near) > 0 {
		return fmt.Sprintf(" (did you mean %q?)", near[0])
	}
	return ""
}
