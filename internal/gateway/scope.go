package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/expose"
)

// SourceListing is implemented by Extras that can list the prompts and
// resources of some sources only; a source is what catalog.Tool.Source
// names (a server's key). A gateway over part of the catalog uses it to
// list only what its sources offer.
type SourceListing interface {
	// ListPromptsOf lists the prompts of the sources for which from
	// reports true, named as ListPrompts names them.
	ListPromptsOf(ctx context.Context, from func(source string) bool) ([]*mcp.Prompt, error)
	// ListResourcesOf lists the resources of the sources for which from
	// reports true, as ListResources does.
	ListResourcesOf(ctx context.Context, from func(source string) bool) ([]*mcp.Resource, error)
}

// scopeSources decides which groups a source's prompts, resources and
// templates belong to: the groups that take the source's tools whole, its
// own and its descendants' together (a server's group, with the sub-groups
// derived from its tools or declared by the server). They belong to the
// most specific such group only, never repeated further down or up the
// tree; where a source's tools sit whole in two unrelated groups (a
// server's group and a declared group with servers: [it]), they belong to
// both. A source with an ungrouped tool has them in no group, like that
// tool.
func scopeSources(e *expose.Exposure) map[catalog.GroupID][]string {
	cat := e.Catalog()
	tools := map[string][]*catalog.Tool{}
	var sources []string
	for _, t := range cat.Tools() {
		if t.Source == "" {
			continue
		}
		if _, seen := tools[t.Source]; !seen {
			sources = append(sources, t.Source)
		}
		tools[t.Source] = append(tools[t.Source], t)
	}
	slices.Sort(sources)
	out := map[catalog.GroupID][]string{}
	for _, src := range sources {
		var covering map[*catalog.Group]bool
		for _, t := range tools[src] {
			// The groups whose subtree holds t: its groups and their
			// ancestors.
			holds := map[*catalog.Group]bool{}
			for _, g := range t.Groups {
				holds[g] = true
				for _, a := range g.Ancestors() {
					holds[a] = true
				}
			}
			if covering == nil {
				covering = holds
			} else {
				for g := range covering {
					if !holds[g] {
						delete(covering, g)
					}
				}
			}
			if len(covering) == 0 {
				break
			}
		}
		// Covering groups are closed under ancestors: the most specific
		// are those none of whose children covers.
		for g := range covering {
			if !slices.ContainsFunc(g.Children, func(c *catalog.Group) bool { return covering[c] }) {
				out[g.ID] = append(out[g.ID], src)
			}
		}
	}
	return out
}

// sourcesFingerprint identifies which groups prompts and resources belong
// to, so that a catalog update that moves them tells the clients their
// lists changed.
func (x *extCatalog) sourcesFingerprint() [32]byte {
	b, _ := json.Marshal(x.bySource) // map keys are sorted
	return sha256.Sum256(b)
}

// sourcedExtras is the Extras' source lookup, when the client of this
// request declared the grouping extension and the Extras can tell sources
// apart: then each listed item names its groups.
func (g *Gateway) sourcedExtras(req mcp.Request) (SourcedExtras, *extCatalog, bool) {
	sx, ok := g.opts.Extras.(SourcedExtras)
	if !ok || !requestClient(req).Extension {
		return nil, nil, false
	}
	x := g.cur.Load().ext
	return sx, x, len(x.bySource) > 0
}

// listPrompts answers prompts/list: every source's prompts, each with its
// groups for a client of the grouping extension.
func (g *Gateway) listPrompts(ctx context.Context, req mcp.Request) ([]*mcp.Prompt, error) {
	prompts, err := g.opts.Extras.ListPrompts(ctx)
	withMembership(ctx, g, req, prompts, SourcedExtras.PromptSource,
		func(p *mcp.Prompt) string { return p.Name }, func(p *mcp.Prompt) *mcp.Meta { return &p.Meta })
	return prompts, err
}

// listResources is listPrompts for resources/list.
func (g *Gateway) listResources(ctx context.Context, req mcp.Request) ([]*mcp.Resource, error) {
	resources, err := g.opts.Extras.ListResources(ctx)
	withMembership(ctx, g, req, resources, SourcedExtras.ResourceSource,
		func(r *mcp.Resource) string { return r.URI }, func(r *mcp.Resource) *mcp.Meta { return &r.Meta })
	return resources, err
}

// listTemplates is listPrompts for resources/templates/list.
func (g *Gateway) listTemplates(ctx context.Context, req mcp.Request) ([]*mcp.ResourceTemplate, error) {
	templates, err := g.opts.Extras.ListResourceTemplates(ctx)
	withMembership(ctx, g, req, templates, SourcedExtras.TemplateSource,
		func(t *mcp.ResourceTemplate) string { return t.URITemplate }, func(t *mcp.ResourceTemplate) *mcp.Meta { return &t.Meta })
	return templates, err
}

// withMembership gives each listed item the groups of its source, for a
// client of the grouping extension: items[i] is replaced by a copy (the
// sources' own values are shared), with the groups in _meta. source tells
// an item's source by its key.
func withMembership[T any](ctx context.Context, g *Gateway, req mcp.Request, items []*T,
	source func(SourcedExtras, context.Context, string) (string, bool), key func(*T) string, meta func(*T) *mcp.Meta) {
	sx, x, ok := g.sourcedExtras(req)
	if !ok {
		return
	}
	for i, item := range items {
		if src, ok := source(sx, ctx, key(item)); ok && len(x.bySource[src]) > 0 {
			c := *item
			*meta(&c) = withMetaGroups(*meta(item), x.bySource[src])
			items[i] = &c
		}
	}
}

// announceMovedExtras tells the clients that the prompt and resource lists
// changed when an update moved a source's prompts and resources into or
// out of a group: a client of the extension then reads other memberships.
// Only a list that holds an item of a moved source changed: a lazy server
// with no prompts and no resources that starts moves its source, and tells
// nobody anything.
func (g *Gateway) announceMovedExtras(prev, st *state) {
	sx, ok := g.opts.Extras.(SourcedExtras)
	if !ok || prev.ext.sourcesFingerprint() == st.ext.sourcesFingerprint() {
		return
	}
	moved := movedSources(prev.ext.bySource, st.ext.bySource)
	// Off Update's path: listing asks the sources.
	g.life.goTracked(func() {
		ctx, cancel := context.WithTimeout(g.life.ctx, movedExtrasWait)
		defer cancel()
		prompts, resources := offeredBy(ctx, sx, moved)
		if prompts {
			g.PromptsChanged()
		}
		if resources {
			g.ResourcesChanged()
		}
	})
}

// movedExtrasWait bounds the listing that decides whether moved sources
// offer prompts or resources; past it both lists are announced.
const movedExtrasWait = 30 * time.Second

// movedSources are the sources whose groups differ between two bySource
// maps.
func movedSources(before, after map[string][]string) map[string]bool {
	moved := map[string]bool{}
	for src, gs := range after {
		if !slices.Equal(before[src], gs) {
			moved[src] = true
		}
	}
	for src := range before {
		if _, ok := after[src]; !ok {
			moved[src] = true
		}
	}
	return moved
}

// offeredBy reports whether any of the sources offers prompts, and
// resources or templates. A list that cannot be read counts as offered:
// a needless notice is better than a missed one.
func offeredBy(ctx context.Context, sx SourcedExtras, sources map[string]bool) (prompts, resources bool) {
	from := func(src string) bool { return sources[src] }
	var ps []*mcp.Prompt
	var rs []*mcp.Resource
	var perr, rerr error
	if sl, ok := sx.(SourceListing); ok {
		ps, perr = sl.ListPromptsOf(ctx, from)
		rs, rerr = sl.ListResourcesOf(ctx, from)
	} else {
		ps, perr = sx.ListPrompts(ctx)
		rs, rerr = sx.ListResources(ctx)
	}
	prompts = perr != nil || slices.ContainsFunc(ps, func(p *mcp.Prompt) bool {
		src, ok := sx.PromptSource(ctx, p.Name)
		return ok && sources[src]
	})
	resources = rerr != nil || slices.ContainsFunc(rs, func(r *mcp.Resource) bool {
		src, ok := sx.ResourceSource(ctx, r.URI)
		return ok && sources[src]
	})
	if !resources {
		ts, err := sx.ListResourceTemplates(ctx)
		resources = err != nil || slices.ContainsFunc(ts, func(t *mcp.ResourceTemplate) bool {
			src, ok := sx.TemplateSource(ctx, t.URITemplate)
			return ok && sources[src]
		})
	}
	return prompts, resources
}
