package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/groupsext"
)

// extCatalog is the catalog as the grouping extension serves it, built on
// the groups mode's exposure (each group's tools in its configured
// exposition).
//
// The draft leaves disclosure to the client: it lists every group, and
// every primitive names its groups in _meta, so that the client filters the
// ordinary lists itself. A client of the extension therefore gets every
// tool it may reach in tools/list, each with its groups, and no
// meta-tools: nothing is held back for it to unfold.
type extCatalog struct {
	expo   *expose.Exposure
	names  map[catalog.GroupID]string
	byName map[string]*catalog.Group
	// groups are every group as groups/list shows it, by name.
	groups []groupsext.Group
	// tools are every wire tool, with its groups in _meta, by wire name:
	// a copy of every tool, made when a client of the extension first
	// lists them, not for every catalog served.
	toolsOnce sync.Once
	tools     map[string]*mcp.Tool
	// bySource names the groups that a source's prompts, resources and
	// templates belong to (see scopeSources); a source missing has none.
	bySource map[string][]string
}

func newExtCatalog(e *expose.Exposure) (*extCatalog, error) {
	cat := e.Catalog()
	names, err := groupsext.Names(cat.GroupIDs())
	if err != nil {
		return nil, fmt.Errorf("naming groups for the grouping extension: %w", err)
	}
	x := &extCatalog{expo: e, names: map[catalog.GroupID]string{}, byName: map[string]*catalog.Group{}, bySource: map[string][]string{}}
	for _, g := range cat.Groups() {
		n := names[string(g.ID)]
		x.names[g.ID] = n
		x.byName[n] = g
	}
	for _, g := range cat.Groups() {
		x.groups = append(x.groups, x.group(g))
	}
	slices.SortFunc(x.groups, func(a, b groupsext.Group) int { return strings.Compare(a.Name, b.Name) })
	for id, srcs := range scopeSources(e) {
		for _, src := range srcs {
			x.bySource[src] = append(x.bySource[src], x.names[id])
		}
	}
	for _, gs := range x.bySource {
		slices.Sort(gs)
	}
	return x, nil
}

// group is g as groups/list shows it: its parent in _meta, as the draft
// nests groups. The title keeps toolfold's own name when the extension's
// differs, so a person sees the name the config and enable_tools use.
func (x *extCatalog) group(g *catalog.Group) groupsext.Group {
	out := groupsext.Group{Name: x.names[g.ID], Description: strings.TrimSpace(g.Description)}
	if string(g.ID) != out.Name {
		out.Title = string(g.ID)
	}
	if g.Parent != nil {
		out.Meta = map[string]any{groupsext.MetaKey: []string{x.names[g.Parent.ID]}}
	}
	return out
}

// memberships are the extension names of the groups that hold a wire tool
// directly: a grouped wire's own group, or a flat tool's groups.
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

// withGroups returns t with its groups in _meta, or t itself when it is in
// none. t is shared and never modified.
func withGroups(t *mcp.Tool, groups []string) *mcp.Tool {
	if len(groups) == 0 {
		return t
	}
	c := *t
	c.Meta = withMetaGroups(t.Meta, groups)
	return &c
}

// withMetaGroups is a copy of meta with groups under the membership key.
func withMetaGroups(meta mcp.Meta, groups []string) mcp.Meta {
	out := maps.Clone(meta)
	if out == nil {
		out = mcp.Meta{}
	}
	out[groupsext.MetaKey] = slices.Clone(groups)
	return out
}

// extensionTools is the tools/list of a client of the extension: every
// tool, each with its groups.
func (x *extCatalog) extensionTools() map[string]*mcp.Tool {
	x.toolsOnce.Do(x.listTools)
	return maps.Clone(x.tools)
}

func (x *extCatalog) listTools() {
	e := x.expo
	x.tools = map[string]*mcp.Tool{}
	add := func(w *expose.Wire) {
		if _, ok := x.tools[w.Name]; !ok {
			x.tools[w.Name] = withGroups(w.Tool, x.memberships(w))
		}
	}
	for _, w := range e.Listed(e.Space().New().Snapshot()) {
		add(w)
	}
	for _, g := range e.Catalog().Groups() {
		for _, w := range e.GroupWires(g) {
			add(w)
		}
	}
}

// serveGroupsExtension registers groups/list on the per-request server, so
// that the SDK decodes it; perRequestMiddleware answers it (see
// answerGroupsList), where the request's protocol is known.
func (s *session) serveGroupsExtension() {
	g := s.g
	list := func(ctx context.Context, _ *mcp.ServerSession, p *groupsext.ListParams) (*groupsext.ListResult, error) {
		return g.groupsList(p, false)
	}
	if err := mcp.AddReceivingCustomMethod(s.server, groupsext.MethodList, list); err != nil {
		g.log.Error("cannot serve groups/list", "err", err)
	}
}

// answerGroupsList answers groups/list: a pure read of the current
// catalog, the same for every caller of this gateway.
func (g *Gateway) answerGroupsList(req mcp.Request) (mcp.Result, error) {
	p, _ := req.GetParams().(*groupsext.ListParams)
	return g.groupsList(p, requestClient(req).ProtocolVersion >= statelessProtocol)
}

func (g *Gateway) groupsList(p *groupsext.ListParams, hints bool) (*groupsext.ListResult, error) {
	var cursor string
	if p != nil {
		cursor = p.Cursor
	}
	page, next, err := paginate(g.cur.Load().ext.groups, func(gr groupsext.Group) string { return gr.Name }, cursor, pageSize)
	if err != nil {
		return nil, err
	}
	res := &groupsext.ListResult{Groups: page, NextCursor: next}
	if hints {
		c := g.catalogCacheable()
		res.ResultType, res.TTLMs, res.CacheScope = "complete", &c.TTLMs, c.CacheScope
	}
	return res, nil
}

// catalogCacheable is the caching hint on what depends on the catalog
// alone (groups/list, the skills): unlike tools/list in auto mode, it does
// not vary with the client's name, only with a token's limits.
func (g *Gateway) catalogCacheable() mcp.Cacheable {
	c := g.listCacheable()
	if !g.opts.PrivateLists {
		c.CacheScope = "public"
	}
	return c
}

// fingerprint identifies the groups as groups/list shows them.
func (x *extCatalog) fingerprint() [32]byte {
	b, _ := json.Marshal(x.groups)
	return sha256.Sum256(b)
}

// groupsListChanged is notifications/groups/list_changed as one line of
// newline-delimited JSON-RPC.
var groupsListChanged = []byte(`{"jsonrpc":"2.0","method":"` + groupsext.NotificationListChanged + `"}` + "\n")

// ExtensionTools is the tools/list a client of the grouping extension gets:
// every tool with its groups, what the context-cost report measures.
func (g *Gateway) ExtensionTools() []*mcp.Tool {
	return sortedTools(g.cur.Load().ext.extensionTools())
}

// GroupsList is every group as groups/list answers it now, all pages
// together.
func (g *Gateway) GroupsList() []groupsext.Group { return slices.Clone(g.cur.Load().ext.groups) }

// ExtensionName is the name a group goes by in the grouping extension and
// as a skill.
func (g *Gateway) ExtensionName(id catalog.GroupID) string { return g.cur.Load().ext.names[id] }
