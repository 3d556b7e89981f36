package assemble

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/trust"
	"github.com/toolfold/toolfold/internal/upstream"
)

// declaredGroups is base (the plan's groups, left untouched) plus the groups
// the servers declared, through the grouping draft or as skills (see
// upstream.Group), known now (live or cached), as catalog groups:
//
//   - a server's top-level groups become children of the server's group
//     (<group>.<name>), nested groups children of theirs; the groups of a
//     server whose tools join no group are top-level, by their own names;
//   - each holds its member tools by their catalog IDs, with the server's
//     description and instructions (a skill's body), and is marked
//     DeclaredBy the server;
//   - a group the config (or another server) already defines under the same
//     ID is the same group: the config's description and instructions win,
//     the declared tools join it;
//   - a name in a tool's _meta["io.modelcontextprotocol/groups"] that the
//     server declared means the declared group;
//   - the server's own group keeps the server's other tools and no longer
//     the grouped ones, which its children now hold, as the server itself
//     discloses them, unless the config's group lists the server in its
//     "servers" on purpose.
//
// tools are the upstream tools of the catalog: a declared tool that is not
// among them (excluded, or left out as unservable) is not a member.
//
// A group or skill the trust view holds is left out with its children; its
// tools stay in the server's own group.
func (u *Upstreams) declaredGroups(base []catalog.GroupSpec, tools []*catalog.Tool, tv trustView) []catalog.GroupSpec {
	out := base
	cloned := false
	index := make(map[catalog.GroupID]int, len(base))
	for i, g := range base {
		index[g.ID] = i
	}
	offered := make(map[catalog.ToolID]bool, len(tools))
	for _, t := range tools {
		offered[t.ID] = true
	}
	for _, s := range u.serverList() {
		groups, _ := u.Manager.CachedGroups(s.key)
		if len(groups) == 0 {
			continue
		}
		if !cloned {
			// The plan's specs are rebuilt on every change: never write
			// into them.
			out, cloned = slices.Clone(base), true
		}
		scoped := map[catalog.ToolID]bool{}
		ids := map[string]catalog.GroupID{} // the server's group names → catalog IDs
		var add func(g *upstream.Group, parent catalog.GroupID, path string)
		add = func(g *upstream.Group, parent catalog.GroupID, path string) {
			if path != "" {
				path += "."
			}
			path += g.Name
			kind := trust.KindGroup
			if g.Skill != "" {
				kind = trust.KindSkill
			}
			if !tv.serves(s.key, kind, path) {
				return
			}
			g = sanitizedGroup(g)
			id := catalog.GroupID(g.Name)
			if parent != "" {
				id = parent + "." + id
			}
			ids[g.Name] = id
			var members []catalog.ToolID
			for _, name := range g.Tools {
				if tid := s.toolID(name); offered[tid] {
					members = append(members, tid)
					scoped[tid] = true
				}
			}
			if i, ok := index[id]; ok {
				gs := &out[i]
				gs.Members.Tools = append(slices.Clone(gs.Members.Tools), members...)
				if gs.Description == "" {
					gs.Description = describe(g, s.key)
				}
				if gs.Instructions == "" {
					gs.Instructions = g.Instructions
				}
				if gs.DeclaredBy == "" {
					gs.DeclaredBy = s.key
				}
			} else {
				index[id] = len(out)
				out = append(out, catalog.GroupSpec{
					ID: id, Parent: parent, Description: describe(g, s.key), Instructions: g.Instructions,
					Members: catalog.Members{Tools: members}, DeclaredBy: s.key,
				})
			}
			for _, c := range g.Groups {
				add(c, id, path)
			}
		}
		var parent catalog.GroupID
		if s.grouped {
			parent = catalog.GroupID(s.group)
		}
		for _, g := range groups {
			add(g, parent, "")
		}
		// A tool that names its groups in _meta (the draft's membership)
		// means the declared ones, not top-level namesakes.
		for _, t := range tools {
			if t.Source == s.key {
				t.MetaGroups = ids
			}
		}
		if i, ok := index[parent]; ok && s.grouped && !s.listed {
			gs := &out[i]
			gs.Members.Sources = slices.DeleteFunc(slices.Clone(gs.Members.Sources), func(src string) bool { return src == s.key })
			own := slices.Clone(gs.Members.Tools)
			for _, t := range tools {
				if t.Source == s.key && !scoped[t.ID] {
					own = append(own, t.ID)
				}
			}
			gs.Members.Tools = own
		}
	}
	return out
}

// describe is a declared group's description: the server's, else its
// title, else one that says where the group comes from.
func describe(g *upstream.Group, server string) string {
	switch {
	case g.Description != "":
		return g.Description
	case g.Title != "":
		return g.Title
	}
	return fmt.Sprintf("Group %q of the %s MCP server", g.Name, server)
}

// withServerInstructions gives each server's group the instructions the
// server sent at initialize (known now, live or cached), which a client
// connected to the server directly would show its model: through toolfold
// they reach enable_tools, guidance, the skills and the dashboard with the
// group. A group whose config has instructions keeps them; a group shared
// by several servers gets each one's, under its name. Instructions the trust
// view holds are left out; the others are sanitized.
func (u *Upstreams) withServerInstructions(specs []catalog.GroupSpec, tv trustView) []catalog.GroupSpec {
	type said struct{ server, text string }
	byGroup := map[catalog.GroupID][]said{}
	for _, s := range u.serverList() {
		if !s.grouped {
			continue
		}
		if text, ok := u.Manager.Instructions(s.key); ok && text != "" && tv.serves(s.key, trust.KindInstructions, "instructions") {
			text = trust.Sanitize(text)
			id := catalog.GroupID(s.group)
			byGroup[id] = append(byGroup[id], said{s.key, text})
		}
	}
	if len(byGroup) == 0 {
		return specs
	}
	out := slices.Clone(specs) // the plan's specs are rebuilt on every change
	for i := range out {
		gs := &out[i]
		all := byGroup[gs.ID]
		if len(all) == 0 || gs.Instructions != "" {
			continue
		}
		if len(all) == 1 {
			gs.Instructions = all[0].text
			continue
		}
		slices.SortFunc(all, func(a, b said) int { return strings.Compare(a.server, b.server) })
		var b strings.Builder
		for j, s := range all {
			if j > 0 {
				b.WriteString("\n\n")
			}
			fmt.Fprintf(&b, "From the %s MCP server:\n%s", s.server, s.text)
		}
		gs.Instructions = b.String()
	}
	return out
}
