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
	"github.com/toolfold/toolfold/internal/httpapi"
)

// The rows of `toolfold tools --json` and `toolfold groups --json` are the
// admin API's (/api/tools, /api/groups), so the two never drift apart.

func runTools(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "tools", "[--config F] [--group G] [--json]")
	var d deployment
	d.register(fs)
	group := fs.String("group", "", "only the tools of this group and the groups inside it")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if err := parse(fs, args); err != nil {
		return err
	}
	cat, m, err := inspectSetup(ctx, e, d)
	if err != nil {
		return err
	}
	tools := cat.Tools()
	if *group != "" {
		g, ok := cat.Group(catalog.GroupID(*group))
		if !ok {
			return fmt.Errorf("there is no group %q%s; 'toolfold groups' lists them", *group, nearest(*group, cat.GroupIDs()))
		}
		tools = httpapi.ToolsUnder(cat, g)
	}
	rows := httpapi.BuildToolRows(tools, m, httpapi.Access{})
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

func runGroups(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "groups", "[--config F] [--json]")
	var d deployment
	d.register(fs)
	asJSON := fs.Bool("json", false, "print JSON instead of a tree")
	if err := parse(fs, args); err != nil {
		return err
	}
	cat, m, err := inspectSetup(ctx, e, d)
	if err != nil {
		return err
	}
	tree := httpapi.BuildGroupTree(cat, m, httpapi.Access{})
	if *asJSON {
		return writeJSON(e.stdout, tree)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tTOOLS\tTOKENS\tDEFAULT\tEXTENSION NAME\tDESCRIPTION")
	for _, r := range tree.Groups {
		description := firstLine(r.Description)
		if r.Derived {
			description = "[derived] " + description
		}
		fmt.Fprintf(tw, "%s%s\t%d\t%d\t%s\t%s\t%s\n", indent(r.Depth), r.Name, r.Tools, r.Tokens, r.Default, r.ExtensionName, description)
	}
	if tree.Ungrouped > 0 {
		fmt.Fprintf(tw, "(ungrouped)\t%d\t%d\talways\t-\tvisible in every view\n", tree.Ungrouped, tree.UngroupedTokens)
	}
	for _, x := range cat.Excluded() {
		fmt.Fprintf(tw, "%s\t%d\t-\texcluded\t-\t%s\n", x.ID, x.Tools, firstLine(x.Description))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err = fmt.Fprintln(e.stdout, "\nEXTENSION NAME is the group's name for clients of the grouping extension (groups/list) and as a skill.")
	return err
}

// inspectSetup builds the catalog and measures it flat, which is what the
// inspection commands report.
func inspectSetup(ctx context.Context, e env, d deployment) (*catalog.Catalog, *httpapi.Measurement, error) {
	d.inspecting = true
	p, b, err := build(ctx, e, d, nil, inspectWait)
	if err != nil {
		return nil, nil, err
	}
	p.Upstreams.Close()
	m, err := httpapi.MeasureFlat(b.Catalog)
	if err != nil {
		return nil, nil, fmt.Errorf("measuring context cost: %w", err)
	}
	return b.Catalog, m, nil
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
