package catalog

import (
	"fmt"
	"slices"
	"strings"
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
	// unknown are the sources whose tools the part may still get: pending
	// or failed sources that its groups draw on. The part waits for them
	// as the whole catalog does (Pending, GroupPending), so a client
	// limited to part of a catalog still starting is answered as one that
	// is not.
	unknown := map[string]bool{}
	for _, id := range ids {
		g, ok := c.Group(id)
		if !ok && ungrouped && c.Awaits(id) {
			// A group a source still starting may bring (one derived from
			// its tools, or declared by it): the part waits for the
			// sources of the group it will come under.
			for p := id; !ok; {
				p = p[:strings.LastIndexByte(string(p), '.')]
				var at *Group
				if at, ok = c.Group(p); ok {
					for _, src := range c.unknownFor[at.ID] {
						unknown[src] = true
					}
				}
			}
			continue
		}
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
			// Only sources whose tools are not known: they bring no tool
			// now, and mark the group as waiting (or failed) for them.
			gs.Members.Sources = slices.Clone(c.unknownFor[g.ID])
			for _, src := range gs.Members.Sources {
				unknown[src] = true
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
		for _, src := range c.ungroupedPending {
			unknown[src] = true
		}
	}
	for src := range unknown {
		if why, failed := c.unavailable[src]; failed {
			if spec.UnavailableSources == nil {
				spec.UnavailableSources = map[string]string{}
			}
			spec.UnavailableSources[src] = why
		} else if slices.Contains(c.pending, src) {
			spec.PendingSources = append(spec.PendingSources, src)
		}
	}
	// The prefixes of the part's sources only: a name of a source the
	// part does not reach is nobody's here.
	for _, t := range spec.Tools {
		unknown[t.Source] = true
	}
	for src, prefix := range c.sourcePrefixes {
		if unknown[src] {
			if spec.SourcePrefixes == nil {
				spec.SourcePrefixes = map[string]string{}
			}
			spec.SourcePrefixes[src] = prefix
		}
	}
	res, err := Build(spec)
	if err != nil {
		return nil, err
	}
	return res.Catalog, nil
}
