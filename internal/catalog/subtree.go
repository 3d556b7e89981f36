package catalog

import (
	"fmt"
	"slices"
)

// Subtree returns a catalog of one group and the groups inside it, with
// their tools and nothing else: what an endpoint serving that group alone
// offers. The group becomes top-level; the states and rules of the groups
// are kept. With readOnly, only tools that declare readOnlyHint remain.
func (c *Catalog) Subtree(id GroupID, readOnly bool) (*Catalog, error) {
	return c.part([]GroupID{id}, readOnly, false)
}

// Limit returns what a client limited to some groups may reach: those
// groups and the groups inside them, their tools, and the tools in no
// group, as a token limited to groups reaches them. Each named group
// becomes top-level (one inside another named one stays inside it). With
// readOnly, only tools that declare readOnlyHint remain.
func (c *Catalog) Limit(ids []GroupID, readOnly bool) (*Catalog, error) {
	return c.part(ids, readOnly, true)
}

func (c *Catalog) part(ids []GroupID, readOnly, ungrouped bool) (*Catalog, error) {
	var roots []*Group
	for _, id := range ids {
		g, ok := c.Group(id)
		if !ok {
			return nil, fmt.Errorf("there is no group %q%s", id, didYouMean(string(id), c.GroupIDs()))
		}
		roots = append(roots, g)
	}
	// A group inside another named one is walked with it.
	roots = slices.DeleteFunc(roots, func(g *Group) bool {
		for at := g.Parent; at != nil; at = at.Parent {
			if slices.Contains(roots, at) {
				return true
			}
		}
		return false
	})
	spec := Spec{ReadOnly: readOnly}
	seenTool := map[ToolID]bool{}
	addTool := func(t *Tool) {
		if !seenTool[t.ID] {
			seenTool[t.ID] = true
			cp := *t
			cp.Groups, cp.Index = nil, 0
			spec.Tools = append(spec.Tools, &cp)
		}
	}
	seenGroup := map[GroupID]bool{}
	for _, root := range roots {
		if seenGroup[root.ID] {
			continue // named twice
		}
		root.Walk(func(g *Group) {
			seenGroup[g.ID] = true
			gs := GroupSpec{ID: g.ID, Description: g.Description, Instructions: g.Instructions, Tags: g.Tags, Default: g.Default, Exposition: g.Exposition, Derived: g.Derived}
			if g != root && g.Parent != nil {
				gs.Parent = g.Parent.ID
			}
			for _, t := range g.Tools {
				gs.Members.Tools = append(gs.Members.Tools, t.ID)
				addTool(t)
			}
			spec.Groups = append(spec.Groups, gs)
		})
	}
	if ungrouped {
		for _, t := range c.Tools() {
			if len(t.Groups) == 0 {
				addTool(t)
			}
		}
	}
	res, err := Build(spec)
	if err != nil {
		return nil, err
	}
	return res.Catalog, nil
}
