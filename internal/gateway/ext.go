package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/groupsext"
)

// extCatalog is the catalog as the groups extension serves it, built on the
// groups mode's exposure (each group's tools in its configured exposition).
//
// Placement: the tools a new view lists (ungrouped tools, and the tools of
// groups enabled by default) are top-level, in tools/list; every other tool
// is scoped, in the contents of the groups that hold it directly. A group
// enabled by default is still a group, with its instructions and children,
// but its tools are top-level, so its contents leave them out: a tool is in
// one place only. Prompts and resources are placed by source (see
// scopeSources).
type extCatalog struct {
	expo   *expose.Exposure
	names  map[catalog.GroupID]string
	byName map[string]*catalog.Group
	top    map[string]bool // wire names listed at top level
	// sources are the sources whose prompts and resources each group
	// carries (see scopeSources).
	sources map[catalog.GroupID][]string
}

func newExtCatalog(e *expose.Exposure) (*extCatalog, error) {
	cat := e.Catalog()
	names, err := groupsext.Names(cat.GroupIDs())
	if err != nil {
		return nil, fmt.Errorf("naming groups for the groups extension: %w", err)
	}
	x := &extCatalog{expo: e, names: map[catalog.GroupID]string{}, byName: map[string]*catalog.Group{}, top: map[string]bool{}}
	for _, g := range cat.Groups() {
		n := names[string(g.ID)]
		x.names[g.ID] = n
		x.byName[n] = g
	}
	listed := e.Listed(e.Space().New().Snapshot())
	for _, w := range listed {
		x.top[w.Name] = true
	}
	x.sources = scopeSources(e, listed)
	return x, nil
}

// group is g as groups/list and contents.groups show it. The title keeps
// toolfold's own name when the extension's differs.
func (x *extCatalog) group(g *catalog.Group) groupsext.Group {
	out := groupsext.Group{Name: x.names[g.ID], Description: strings.TrimSpace(g.Description)}
	if string(g.ID) != out.Name {
		out.Title = string(g.ID)
	}
	if out.Description == "" {
		out.Description = fmt.Sprintf("The tools of %s.", g.ID)
	}
	return out
}

// roots are the top-level groups, by name.
func (x *extCatalog) roots() []groupsext.Group {
	var out []groupsext.Group
	for _, g := range x.expo.Catalog().Roots() {
		out = append(out, x.group(g))
	}
	slices.SortFunc(out, func(a, b groupsext.Group) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// get answers groups/get for any group, nested ones included.
func (x *extCatalog) get(name string) (*groupsext.GetResult, bool) {
	g, ok := x.byName[name]
	if !ok {
		return nil, false
	}
	contents := &groupsext.Contents{Tools: []*mcp.Tool{}}
	for _, w := range x.expo.GroupWires(g) {
		if !x.top[w.Name] {
			contents.Tools = append(contents.Tools, w.Tool)
		}
	}
	for _, c := range g.Children {
		contents.Groups = append(contents.Groups, x.group(c))
	}
	slices.SortFunc(contents.Groups, func(a, b groupsext.Group) int { return strings.Compare(a.Name, b.Name) })
	return &groupsext.GetResult{Instructions: strings.TrimSpace(g.Instructions), Contents: contents}, true
}

// memberships are the extension names of the groups that hold a wire tool,
// for its _meta in the flat list of clients that search themselves.
func (x *extCatalog) memberships(w *expose.Wire) []string {
	var out []string
	if w.Group != nil {
		out = append(out, x.names[w.Group.ID])
	} else if w.Target != nil {
		for _, g := range w.Target.Groups {
			out = append(out, x.names[g.ID])
		}
	}
	slices.Sort(out)
	return out
}

// metaKeyGroups is where a tool lists its groups (the key the earlier
// primitive-grouping draft defined, which toolfold also reads upstream).
const metaKeyGroups = "io.modelcontextprotocol/groups"

// withGroups returns t with its groups in _meta, or t itself when it is in
// none. t is shared and never modified.
func withGroups(t *mcp.Tool, groups []string) *mcp.Tool {
	if len(groups) == 0 {
		return t
	}
	c := *t
	c.Meta = maps.Clone(t.Meta)
	if c.Meta == nil {
		c.Meta = mcp.Meta{}
	}
	c.Meta[metaKeyGroups] = groups
	return &c
}

// serveGroupsExtension answers groups/list and groups/get on the
// per-request server. Both are pure reads of the current catalog: which
// groups a client has fetched is its own business.
func (s *session) serveGroupsExtension() {
	g := s.g
	list := func(ctx context.Context, _ *mcp.ServerSession, p *groupsext.ListParams) (*groupsext.ListResult, error) {
		var cursor string
		if p != nil {
			cursor = p.Cursor
		}
		page, next, err := paginate(g.cur.Load().ext.roots(), func(gr groupsext.Group) string { return gr.Name }, cursor, pageSize)
		if err != nil {
			return nil, err
		}
		return &groupsext.ListResult{Groups: page, NextCursor: next}, nil
	}
	get := func(ctx context.Context, _ *mcp.ServerSession, p *groupsext.GetParams) (*groupsext.GetResult, error) {
		if p == nil || p.Name == "" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: `groups/get needs {"name": "<group>"} with a name from groups/list`}
		}
		x := g.cur.Load().ext
		if grp, ok := x.byName[p.Name]; ok && x.expo.Catalog().GroupPending(grp.ID) {
			// Its tools come from a source still starting: wait for them.
			t := g.transient(g.cur.Load(), presentation{mode: expose.Groups, extension: true, stateless: true})
			t.awaitGroups(ctx, []string{string(grp.ID)})
			x = g.cur.Load().ext
		}
		res, ok := x.get(p.Name)
		if !ok {
			msg := fmt.Sprintf("there is no group %q", p.Name)
			if near := catalog.Nearest(p.Name, slices.Sorted(maps.Keys(x.byName)), 3); len(near) > 0 {
				msg += fmt.Sprintf("; the nearest are %s", strings.Join(near, ", "))
			}
			return nil, &jsonrpc.Error{Code: groupsext.CodeNotFound, Message: msg + "; groups/list lists the top-level groups, groups/get of a group lists its children"}
		}
		g.withScopedExtras(ctx, x, p.Name, res)
		return res, nil
	}
	if err := mcp.AddReceivingCustomMethod(s.server, groupsext.MethodList, list); err != nil {
		g.log.Error("cannot serve groups/list", "err", err)
	}
	if err := mcp.AddReceivingCustomMethod(s.server, groupsext.MethodGet, get); err != nil {
		g.log.Error("cannot serve groups/get", "err", err)
	}
}

// fingerprint identifies the top-level groups as groups/list shows them.
func (x *extCatalog) fingerprint() [32]byte {
	b, _ := json.Marshal(x.roots())
	return sha256.Sum256(b)
}

// groupsListChanged is notifications/groups/list_changed as one line of
// newline-delimited JSON-RPC.
var groupsListChanged = []byte(`{"jsonrpc":"2.0","method":"` + groupsext.NotificationListChanged + `"}` + "\n")

// ExtensionTools is the tools/list a client of the groups extension gets:
// the top-level tools only, what the context-cost report measures.
func (g *Gateway) ExtensionTools() []*mcp.Tool {
	t := g.transient(g.cur.Load(), presentation{mode: expose.Groups, extension: true, stateless: true})
	return sortedTools(t.installed)
}

// GroupsList is every top-level group as groups/list answers it now, all
// pages together.
func (g *Gateway) GroupsList() []groupsext.Group { return g.cur.Load().ext.roots() }

// GroupsGet is what groups/get answers now for a group's extension name,
// without the prompts and resources of its sources (listing them needs the
// sources running; see withScopedExtras).
func (g *Gateway) GroupsGet(name string) (*groupsext.GetResult, bool) {
	return g.cur.Load().ext.get(name)
}

// ExtensionName is the name a group goes by in the groups extension.
func (g *Gateway) ExtensionName(id catalog.GroupID) string { return g.cur.Load().ext.names[id] }
