package upstream

import (
	"encoding/json"
	"log/slog"
	"maps"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/groupsext"
	"github.com/toolfold/toolfold/internal/redact"
)

// admit is the one step through which what an upstream says about its
// tools and groups enters toolfold, fresh from the server or from the disk
// cache: everything after it (the cache, the catalog, every list and page a
// client reads) sees only what it returns. Whatever the server says is
// untrusted, so each check that applies to its definitions belongs here,
// one function each, in order.
func (s *server) admit(tools []*mcp.Tool, groups []*Group) ([]*mcp.Tool, []*Group) {
	tools = dropUnbackedMemberships(tools, groups, s.log)
	tools, groups = maskDefinitions(s.secrets, tools, groups, s.log)
	return tools, groups
}

// dropUnbackedMemberships removes from each tool's _meta the group names
// the server's own groups do not declare. Without it a tool could join an
// operator's group (a token limited to "ops" would reach it) or create a
// top-level group of any name: the catalog takes a tool's _meta names as
// groups. One warning per group name; the tools it cost are listed.
func dropUnbackedMemberships(tools []*mcp.Tool, groups []*Group, log *slog.Logger) []*mcp.Tool {
	backed := map[string]bool{}
	var collect func([]*Group)
	collect = func(gs []*Group) {
		for _, g := range gs {
			backed[g.Name] = true
			collect(g.Groups)
		}
	}
	collect(groups)
	dropped := map[string][]string{} // group → tools that named it
	out, cloned := tools, false
	for i, t := range tools {
		if _, ok := t.Meta[groupsext.MetaKey]; !ok {
			continue
		}
		named := groupsext.MetaGroups(t.Meta)
		kept := slices.DeleteFunc(slices.Clone(named), func(n string) bool { return !backed[n] })
		if len(kept) == len(named) && len(named) > 0 {
			continue
		}
		for _, n := range named {
			if !backed[n] {
				dropped[n] = append(dropped[n], t.Name)
			}
		}
		if !cloned {
			out, cloned = slices.Clone(tools), true
		}
		c := *t
		c.Meta = maps.Clone(t.Meta)
		if len(kept) == 0 {
			delete(c.Meta, groupsext.MetaKey)
		} else {
			c.Meta[groupsext.MetaKey] = kept
		}
		out[i] = &c
	}
	for _, g := range slices.Sorted(maps.Keys(dropped)) {
		log.Warn("tools name a group the server does not declare; the membership is dropped, so they join no group of that name",
			"group", g, "tools", dropped[g])
	}
	return out
}

// maskDefinitions masks the config's secrets (what ${VAR} expanded to,
// header values, secret env values) in every text of the server's tools
// and groups: descriptions, titles, schemas, _meta, skill bodies. A server
// may quote its token back anywhere; masked here, no later path (the
// lists, the pages, the dashboard, the cache file) can show it. URLs are
// left as they are: they are the definitions' data.
func maskDefinitions(secrets *redact.Secrets, tools []*mcp.Tool, groups []*Group, log *slog.Logger) ([]*mcp.Tool, []*Group) {
	if secrets.Empty() {
		return tools, groups
	}
	var remasked []*mcp.Tool
	out := tools
	for i, t := range tools {
		var c mcp.Tool
		if !maskValue(secrets, t, &c, log) {
			continue
		}
		if len(remasked) == 0 {
			out = slices.Clone(tools)
		}
		out[i] = &c
		remasked = append(remasked, &c)
	}
	rawSchemas(remasked) // decoding made maps of the masked schemas
	var gout []*Group
	for i, g := range groups {
		var c Group
		if !maskValue(secrets, g, &c, log) {
			continue
		}
		if gout == nil {
			gout = slices.Clone(groups)
		}
		gout[i] = &c
	}
	if gout == nil {
		gout = groups
	}
	return out, gout
}

// maskValue masks in's secrets into out through JSON, reporting whether
// anything was masked. A value that does not survive the trip is reported
// as masked with every string masked it could reach: never kept unmasked.
func maskValue[T any](secrets *redact.Secrets, in *T, out *T, log *slog.Logger) bool {
	data, err := json.Marshal(in)
	if err == nil {
		var masked []byte
		var changed bool
		masked, changed, err = secrets.JSON(data)
		if err == nil {
			if !changed {
				return false
			}
			if err = json.Unmarshal(masked, out); err == nil {
				return true
			}
		}
	}
	// Unreachable for what the SDK decoded; say so rather than pass a
	// secret on.
	log.Warn("a definition could not be checked for secrets; it is left out", "error", err)
	return true
}

// maskedList masks the server's secrets in each of a pass-through list's
// definitions (resources, templates, prompts): they reach clients as the
// tools do, and a server may quote its token in them as well.
func maskedList[T any](m *Manager, server string, list []*T, err error) ([]*T, error) {
	if err != nil {
		return nil, err
	}
	s, lerr := m.lookup(server)
	if lerr != nil || s.secrets.Empty() {
		return list, nil
	}
	out := list
	for i, v := range list {
		var c T
		if maskValue(s.secrets, v, &c, s.log) {
			if &out[0] == &list[0] {
				out = slices.Clone(list)
			}
			out[i] = &c
		}
	}
	return out, nil
}

// maskedResult is maskedList for one pass-through answer (a resource's
// contents, a prompt's messages).
func maskedResult[T any](m *Manager, server string, v *T, err error) (*T, error) {
	if err != nil || v == nil {
		return v, err
	}
	out, _ := maskedList(m, server, []*T{v}, nil)
	return out[0], nil
}
