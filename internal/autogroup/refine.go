package autogroup

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toolfold/toolfold/internal/catalog"
)

// Settings say where derivation runs and how derived groups start.
type Settings struct {
	// Size is the target size (Options.Size).
	Size int
	// Derive reports whether a group's tools may be split into derived
	// groups; nil means every group.
	Derive func(g *catalog.Group) bool
	// State gives a derived group its starting state from its parent's
	// (a deployment switch such as MCP_GROUP_<NAME> may override it); nil
	// keeps the inherited state.
	State func(id catalog.GroupID, inherited catalog.State) catalog.State
	// Named are derived group names the command line switched; one that
	// no derivation produces is reported.
	Named []string
	// Merge maps a declared group to the derived groups whose tools it
	// takes over, which then disappear: a rename (one) or a merge (more).
	Merge map[catalog.GroupID][]catalog.GroupID
	// Memo, if set, reuses the derivations of groups whose tools and
	// options are unchanged.
	Memo *Memo
}

// Refine returns spec with derived groups for every group of cat (the
// catalog built from spec) that Settings.Derive allows and that holds
// more than Size tools no child group holds. A group spec already
// declared under a derived group's name with no member rules of its own
// takes that group's tools and keeps its own description, instructions
// and state: that is how a config renames nothing but describes a
// derived group. The warnings name merges that found nothing to merge.
func Refine(spec catalog.Spec, cat *catalog.Catalog, s Settings) (catalog.Spec, []string) {
	size := s.Size
	if size <= 0 {
		size = DefaultSize
	}
	out := spec
	out.Groups = slices.Clone(spec.Groups)
	at := map[catalog.GroupID]int{}
	for i, g := range out.Groups {
		at[g.ID] = i
	}
	derived := map[catalog.GroupID]bool{}
	derive := Derive
	if s.Memo != nil {
		derive = s.Memo.Derive
	}
	for _, g := range cat.Groups() {
		if g.Derived || (s.Derive != nil && !s.Derive(g)) {
			continue
		}
		held := map[catalog.ToolID]bool{}
		for _, c := range g.Children {
			c.Walk(func(d *catalog.Group) {
				for _, t := range d.Tools {
					held[t.ID] = true
				}
			})
		}
		var tools []Tool
		for _, t := range g.Tools {
			if !held[t.ID] {
				tools = append(tools, Tool{ID: string(t.ID), Name: t.Name, Description: t.Def.Description, ReadOnly: t.ReadOnly()})
			}
		}
		if len(tools) == 0 {
			continue
		}
		taken := func(local string) bool {
			id := catalog.GroupID(string(g.ID) + "." + local)
			i, ok := at[id]
			return ok && !(emptyRules(out.Groups[i].Members) && groupEmpty(cat, id))
		}
		root := derive(tools, Options{Size: size, Taken: taken, Ignore: []string{g.LocalName()}, Instructions: g.Instructions})
		if i, ok := at[g.ID]; ok && isPlaceholder(out.Groups[i].Description) && len(g.Children) == 0 {
			// The server's group said only whose tools they are: say
			// what they do (a server with groups of its own is left to
			// them: its summary would cover only the tools they leave).
			out.Groups[i].Description = root.Description
		}
		states := map[catalog.GroupID]catalog.State{g.ID: g.Default}
		// Each derived group's ID extends its parent's, as assigned: a name
		// a declared group with rules already holds gets a suffix.
		assigned := map[string]catalog.GroupID{"": g.ID}
		root.Walk(func(path []string, n *Node) {
			if len(path) == 0 {
				return
			}
			parent := assigned[strings.Join(path[:len(path)-1], ".")]
			id := catalog.GroupID(string(parent) + "." + n.Name)
			for i := 2; ; i++ {
				j, ok := at[id]
				if !ok || derived[id] || (emptyRules(out.Groups[j].Members) && groupEmpty(cat, id)) {
					break
				}
				id = catalog.GroupID(fmt.Sprintf("%s.%s_%d", parent, n.Name, i))
			}
			assigned[strings.Join(path, ".")] = id
			state := catalog.Available
			if states[parent] == catalog.Enabled {
				// A group switched on in every view keeps all its tools
				// visible, now that they sit in its derived groups.
				state = catalog.Enabled
			}
			if s.State != nil {
				state = s.State(id, state)
			}
			gs := catalog.GroupSpec{ID: id, Parent: parent, Description: n.Description, Default: state, Derived: true}
			for _, t := range n.Tools {
				gs.Members.Tools = append(gs.Members.Tools, catalog.ToolID(t))
			}
			if i, ok := at[id]; ok {
				// Declared under this name without rules: it describes the
				// derived group.
				decl := out.Groups[i]
				gs.Instructions, gs.Tags, gs.Exposition = decl.Instructions, decl.Tags, decl.Exposition
				if decl.Description != "" {
					gs.Description = decl.Description
				}
				gs.Default = decl.Default
				if decl.Default == catalog.Available {
					gs.Default = state
				}
				out.Groups[i] = gs
			} else {
				at[id] = len(out.Groups)
				out.Groups = append(out.Groups, gs)
			}
			states[id] = gs.Default
			derived[id] = true
		})
	}
	warnings := merge(&out, at, derived, s.Merge)
	if len(spec.PendingSources) > 0 {
		// Some servers' tools are not known yet, so their derived groups
		// cannot exist yet either: a name that finds none says nothing.
		return out, nil
	}
	for _, n := range s.Named {
		if !derived[catalog.GroupID(n)] {
			names := make([]string, 0, len(derived))
			for id := range derived {
				names = append(names, string(id))
			}
			slices.Sort(names)
			hint := ""
			if near := catalog.Nearest(n, names, 1); len(near) > 0 {
				hint = fmt.Sprintf(" (did you mean %q?)", near[0])
			}
			warnings = append(warnings, fmt.Sprintf("the command line switches group %q, which was not derived from the tools known now%s; 'toolfold groups' lists the groups", n, hint))
		}
	}
	return out, warnings
}

// merge moves the tools of derived groups (with their derived
// descendants) into the declared groups that name them.
func merge(spec *catalog.Spec, at map[catalog.GroupID]int, derived map[catalog.GroupID]bool, merges map[catalog.GroupID][]catalog.GroupID) []string {
	quiet := len(spec.PendingSources) > 0
	var warnings []string
	targets := make([]catalog.GroupID, 0, len(merges))
	for t := range merges {
		targets = append(targets, t)
	}
	slices.Sort(targets)
	drop := map[catalog.GroupID]bool{}
	for _, target := range targets {
		ti, ok := at[target]
		if !ok {
			continue // the config reports unknown groups itself
		}
		for _, src := range merges[target] {
			if !derived[src] {
				if quiet {
					continue
				}
				names := make([]string, 0, len(derived))
				for id := range derived {
					names = append(names, string(id))
				}
				slices.Sort(names)
				hint := ""
				if near := catalog.Nearest(string(src), names, 1); len(near) > 0 {
					hint = fmt.Sprintf(" (did you mean %q?)", near[0])
				}
				warnings = append(warnings, fmt.Sprintf("group %q merges %q, which is not a derived group%s; 'toolfold groups' lists the derived groups", target, src, hint))
				continue
			}
			for id := range derived {
				if id == src || strings.HasPrefix(string(id), string(src)+".") {
					drop[id] = true
					spec.Groups[ti].Members.Tools = append(spec.Groups[ti].Members.Tools, spec.Groups[at[id]].Members.Tools...)
				}
			}
			// The tools now reach the model through the merged group.
			spec.Groups[ti].Derived = true
		}
		slices.Sort(spec.Groups[ti].Members.Tools)
	}
	if len(drop) > 0 {
		spec.Groups = slices.DeleteFunc(spec.Groups, func(g catalog.GroupSpec) bool { return drop[g.ID] })
	}
	return warnings
}

// ServerDescription is the description a server's group gets when the
// config gives none; Refine replaces it with a summary of the tools.
func ServerDescription(server string) string {
	return fmt.Sprintf("Tools of the %s MCP server", server)
}

func isPlaceholder(desc string) bool {
	return strings.HasPrefix(desc, "Tools of the ") && strings.HasSuffix(desc, " MCP server")
}

func emptyRules(m catalog.Members) bool {
	return len(m.Tools)+len(m.Globs)+len(m.Prefixes)+len(m.Sources)+len(m.Tags) == 0
}

func groupEmpty(cat *catalog.Catalog, id catalog.GroupID) bool {
	g, ok := cat.Group(id)
	return !ok || (len(g.Tools) == 0 && len(g.Children) == 0)
}
