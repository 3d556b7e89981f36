package catalog

import "fmt"

// Subtree returns a catalog of one group and the groups inside it, with
// their tools and nothing else: what an endpoint serving that group alone
// offers. The group becomes top-level; the states and rules of the groups
// are kept. With readOnly, only tools that declare readOnlyHint remain.
func (c *Catalog) Subtree(id GroupID, readOnly bool) (*Catalog, error) {
	root, ok := c.Group(id)
	if !ok {
		return nil, fmt.Errorf("there is no group %q%s", id, didYouMean(string(id), c.GroupIDs()))
	}
	spec := Spec{ReadOnly: readOnly}
	seen := map[ToolID]bool{}
	root.Walk(func(g *Group) {
		gs := GroupSpec{ID: g.ID, Description: g.Description, Instructions: g.Instructions, Tags: g.Tags, Default: g.Default, Exposition: g.Exposition}
		if g != root && g.Parent != nil {
			gs.Parent = g.Parent.ID
		}
		for _, t := range g.Tools {
			gs.Members.Tools = append(gs.Members.Tools, t.ID)
			if !seen[t.ID] {
				seen[t.ID] = true
				cp := *t
				cp.Groups, cp.Index = nil, 0
				spec.Tools = append(spec.Tools, &cp)
			}
		}
		spec.Groups = append(spec.Groups, gs)
	})
	res, err := Build(spec)
	if err != nil {
		return nil, err
	}
	return res.Catalog, nil
}
