package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/httpapi"
	"github.com/toolfold/toolfold/internal/tokens"
)

// modeCost is one row of `toolfold tokens`.
type modeCost struct {
	Mode   string  `json:"mode"`
	Tools  int     `json:"tools"`
	Tokens int     `json:"tokens"`
	OfFlat float64 `json:"of_flat"` // share of the flat baseline, 0..1
}

// contextReport is `toolfold tokens --json`.
type contextReport struct {
	Tokenizer string             `json:"tokenizer"`
	Modes     []modeCost         `json:"modes"`
	Groups    []httpapi.GroupRow `json:"groups"`
	Ungrouped int                `json:"ungrouped_tokens"`
	// Extension is what a client of the grouping extension pays.
	Extension extensionCost `json:"grouping_extension"`
}

// extensionCost is the context cost for a client of the grouping
// extension: its tools/list (every tool, with its groups in _meta) and
// groups/list, before it filters them itself.
type extensionCost struct {
	Tools       int `json:"tools"`
	ToolsTokens int `json:"tools_list_tokens"`
	ListTokens  int `json:"groups_list_tokens"`
	// SkillsTokens is skills/list, the index of the skills the groups are.
	SkillsTokens int `json:"skills_list_tokens"`
}

func runTokens(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "tokens", "[--config F] [--json]")
	var d deployment
	d.register(fs)
	asJSON := fs.Bool("json", false, "print JSON instead of tables")
	if err := parse(fs, args); err != nil {
		return err
	}
	d.inspecting = true
	p, b, err := build(ctx, e, d, nil, inspectWait)
	if err != nil {
		return err
	}
	defer p.Upstreams.Close()
	cat, gw := b.Catalog, b.Gateway
	rep := contextReport{Tokenizer: "o200k_base, on the compact JSON of the tools array"}
	var flat int
	for _, m := range []expose.Mode{expose.Flat, expose.Groups, expose.Grouped, expose.Search} {
		tools, err := gw.InitialTools(m)
		if err != nil {
			return fmt.Errorf("rendering the %s mode: %w", m, err)
		}
		n, err := tokens.ToolsCost(tools)
		if err != nil {
			return fmt.Errorf("measuring the %s mode: %w", m, err)
		}
		if m == expose.Flat {
			flat = n
		}
		rep.Modes = append(rep.Modes, modeCost{Mode: string(m), Tools: len(tools), Tokens: n, OfFlat: float64(n) / float64(max(flat, 1))})
	}
	if err := measureExtension(gw, &rep); err != nil {
		return err
	}
	first := rep.Extension.ToolsTokens + rep.Extension.ListTokens
	rep.Modes = append(rep.Modes, modeCost{Mode: "grouping extension", Tools: rep.Extension.Tools, Tokens: first, OfFlat: float64(first) / float64(max(flat, 1))})
	m, err := httpapi.MeasureFlat(cat)
	if err != nil {
		return fmt.Errorf("measuring context cost: %w", err)
	}
	tree := httpapi.BuildGroupTree(cat, m, httpapi.Access{})
	rep.Groups, rep.Ungrouped = tree.Groups, tree.UngroupedTokens
	if *asJSON {
		return writeJSON(e.stdout, rep)
	}
	fmt.Fprintf(e.stdout, "Context cost of the first tools/list for %s (%s):\n\n", p.Origin, rep.Tokenizer)
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MODE\tTOOLS\tTOKENS\tOF FLAT\tSAVED\t")
	for _, m := range rep.Modes {
		saved := "-"
		if m.Mode != string(expose.Flat) {
			saved = fmt.Sprintf("%d", flat-m.Tokens)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f%%\t%s\t\n", m.Mode, m.Tools, m.Tokens, 100*m.OfFlat, saved)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "\n\"grouping extension\" is a client that declared io.modelcontextprotocol/grouping: its tools/list, every tool with its groups (%d tokens), and groups/list (%d tokens),\n", rep.Extension.ToolsTokens, rep.Extension.ListTokens)
	fmt.Fprintf(e.stdout, "before it filters them by the groups it chose; skills/list, the index of the skills the groups are served as, costs %d tokens.\n", rep.Extension.SkillsTokens)
	fmt.Fprintln(e.stdout, "auto serves the grouping extension to clients that declare it,")
	fmt.Fprintln(e.stdout, "flat to clients that search their tools themselves, groups to 2025-11-25 clients known to refresh their tool list,")
	fmt.Fprintln(e.stdout, "and search to the others (README, \"What the agent sees\").")
	fmt.Fprintln(e.stdout, "\nWhat enabling each group adds:")
	fmt.Fprintln(e.stdout)
	tw = tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tTOOLS\tTOKENS")
	for _, r := range rep.Groups {
		fmt.Fprintf(tw, "%s%s\t%d\t%d\n", indent(r.Depth), r.Name, r.Tools, r.Tokens)
	}
	if n := len(cat.Ungrouped()); n > 0 {
		fmt.Fprintf(tw, "(ungrouped, always listed)\t%d\t%d\n", n, rep.Ungrouped)
	}
	return tw.Flush()
}

func indent(depth int) string {
	out := ""
	for range depth {
		out += "  "
	}
	return out
}

// measureExtension fills in what a client of the grouping extension pays:
// the compact JSON of its tools array and of groups/list's groups.
func measureExtension(gw *gateway.Gateway, rep *contextReport) error {
	x := &rep.Extension
	tools := gw.ExtensionTools()
	x.Tools = len(tools)
	var err error
	if x.ToolsTokens, err = tokens.ToolsCost(tools); err != nil {
		return fmt.Errorf("measuring the grouping extension's tools/list: %w", err)
	}
	if x.ListTokens, err = tokens.JSONCost(gw.GroupsList()); err != nil {
		return fmt.Errorf("measuring groups/list: %w", err)
	}
	if x.SkillsTokens, err = tokens.JSONCost(gw.SkillsIndex()); err != nil {
		return fmt.Errorf("measuring skills/list: %w", err)
	}
	return nil
}
