package httpapi

import (
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/groupsext"
	"github.com/toolfold/toolfold/internal/tokens"
	"github.com/toolfold/toolfold/internal/view"
)

// Measurement is the context cost of a catalog's tools, in o200k tokens of
// their flat wire definitions: what a client pays to see them in
// tools/list.
type Measurement struct {
	// WireNames are the tools' flat wire names ("github__create_issue").
	WireNames map[catalog.ToolID]string
	// Tools is each tool's own cost.
	Tools map[catalog.ToolID]int
	// Groups is what enabling a group adds: its own tools (not its
	// children's), listed together.
	Groups map[catalog.GroupID]int
	// Ungrouped is the cost of the tools in no group, listed together.
	Ungrouped int
}

// MeasureFlat measures a catalog rendered flat, with read-only and
// destructive markers in descriptions, as `toolfold groups` and `toolfold
// tools` do. It is the default Options.Measure.
func MeasureFlat(cat *catalog.Catalog) (*Measurement, error) {
	space, err := view.NewSpace(cat, nil)
	if err != nil {
		return nil, err
	}
	expo, err := expose.Build(space, &expose.Options{Mode: expose.Flat, AnnotateDescriptions: true})
	if err != nil {
		return nil, err
	}
	m := &Measurement{
		WireNames: make(map[catalog.ToolID]string, len(cat.Tools())),
		Tools:     make(map[catalog.ToolID]int, len(cat.Tools())),
		Groups:    make(map[catalog.GroupID]int, len(cat.Groups())),
	}
	listCost := func(tools []*catalog.Tool) (int, error) {
		defs := make([]*mcp.Tool, len(tools))
		for i, t := range tools {
			defs[i] = expo.FlatWire(t).Tool
		}
		return tokens.ToolsCost(defs)
	}
	for _, t := range cat.Tools() {
		w := expo.FlatWire(t)
		n, err := tokens.ToolsCost([]*mcp.Tool{w.Tool})
		if err != nil {
			return nil, fmt.Errorf("measuring the context cost of %s: %w", t.ID, err)
		}
		m.WireNames[t.ID] = w.Name
		m.Tools[t.ID] = n
	}
	for _, g := range cat.Groups() {
		n, err := listCost(g.Tools)
		if err != nil {
			return nil, fmt.Errorf("measuring the context cost of group %s: %w", g.ID, err)
		}
		m.Groups[g.ID] = n
	}
	if m.Ungrouped, err = listCost(cat.Ungrouped()); err != nil {
		return nil, fmt.Errorf("measuring the context cost of the ungrouped tools: %w", err)
	}
	return m, nil
}

// GroupRow is one group in /api/groups and `toolfold groups --json`.
type GroupRow struct {
	Name        string `json:"name"`
	Parent      string `json:"parent,omitempty"`
	Description string `json:"description"`
	// Tools counts the group's own tools, not its children's.
	Tools int `json:"tools"`
	// Tokens is what enabling the group adds to a client's context.
	Tokens int `json:"tokens"`
	// Default is the group's state in a new view: available, enabled or
	// excluded.
	Default string `json:"default"`
	// Exposition is set when the group chose its own (flat or grouped).
	Exposition string `json:"exposition,omitempty"`
	// Depth is 0 for a top-level group; it lets a reader indent the tree
	// without following parents.
	Depth int `json:"depth"`
	// Derived is true for a group toolfold split off a big group
	// (disclosure.autoGroups) rather than one that was declared.
	Derived bool `json:"derived,omitempty"`
	// ExtensionName is the group's name in the groups extension
	// (groups/list, groups/get): 1-64 of a-z, 0-9 and single hyphens.
	ExtensionName string `json:"extension_name"`
	// DeclaredBy names the upstream server that declared the group through
	// the groups extension.
	DeclaredBy string `json:"declared_by,omitempty"`
}

// GroupTree is the body of /api/groups and of `toolfold groups --json`:
// groups in tree order (each followed by its descendants).
type GroupTree struct {
	Groups          []GroupRow `json:"groups"`
	Ungrouped       int        `json:"ungrouped"`
	UngroupedTokens int        `json:"ungrouped_tokens"`
	// Excluded names the groups the deployment excluded; clients never
	// see them.
	Excluded []string `json:"excluded"`
}

// ToolRow is one tool in /api/tools and `toolfold tools --json`.
type ToolRow struct {
	// Name is the flat wire name, which clients call the tool by.
	Name        string               `json:"name"`
	Groups      []string             `json:"groups"`
	Source      string               `json:"source"`
	Description string               `json:"description"`
	Annotations *mcp.ToolAnnotations `json:"annotations,omitempty"`
	Tokens      int                  `json:"tokens"`
}

// BuildGroupTree lists the groups the access reaches, with their costs.
// A nil catalog (nothing discovered yet) gives an empty tree.
func BuildGroupTree(cat *catalog.Catalog, m *Measurement, access Access) GroupTree {
	tree := GroupTree{Groups: []GroupRow{}, Excluded: []string{}}
	if cat == nil {
		return tree
	}
	// The gateway maps the names of the whole catalog the same way.
	extNames, _ := groupsext.Names(cat.GroupIDs())
	for _, g := range cat.Groups() {
		if !access.AllowsGroup(g) {
			continue
		}
		r := GroupRow{Name: string(g.ID), Description: g.Description, Tools: len(g.Tools),
			Tokens: m.Groups[g.ID], Default: g.Default.String(), Depth: g.Depth, Derived: g.Derived,
			ExtensionName: extNames[string(g.ID)], DeclaredBy: g.DeclaredBy}
		if g.Parent != nil {
			r.Parent = string(g.Parent.ID)
		}
		if g.Exposition != catalog.Inherit {
			r.Exposition = g.Exposition.String()
		}
		tree.Groups = append(tree.Groups, r)
	}
	tree.Ungrouped = len(cat.Ungrouped())
	tree.UngroupedTokens = m.Ungrouped
	for _, x := range cat.Excluded() {
		if len(access.Groups) == 0 || slices.Contains(access.Groups, string(x.ID)) {
			tree.Excluded = append(tree.Excluded, string(x.ID))
		}
	}
	return tree
}

// BuildToolRows lists the given tools the access reaches, in the given
// order.
func BuildToolRows(tools []*catalog.Tool, m *Measurement, access Access) []ToolRow {
	rows := make([]ToolRow, 0, len(tools))
	for _, t := range tools {
		if !access.AllowsTool(t) {
			continue
		}
		groups := make([]string, 0, len(t.Groups))
		for _, g := range t.Groups {
			groups = append(groups, string(g.ID))
		}
		name := m.WireNames[t.ID]
		if name == "" {
			name = string(t.ID)
		}
		rows = append(rows, ToolRow{Name: name, Groups: groups, Source: t.Source,
			Description: t.Def.Description, Annotations: t.Def.Annotations, Tokens: m.Tools[t.ID]})
	}
	return rows
}

// ToolsUnder returns the tools of a group and of the groups inside it, in
// catalog order, as `toolfold tools --group` lists them.
func ToolsUnder(cat *catalog.Catalog, g *catalog.Group) []*catalog.Tool {
	in := map[catalog.ToolID]bool{}
	g.Walk(func(sub *catalog.Group) {
		for _, t := range sub.Tools {
			in[t.ID] = true
		}
	})
	var out []*catalog.Tool
	for _, t := range cat.Tools() {
		if in[t.ID] {
			out = append(out, t)
		}
	}
	return out
}
