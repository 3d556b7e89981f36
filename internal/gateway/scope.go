package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/groupsext"
)

// SourceListing is implemented by Extras that can list the prompts and
// resources of some sources only; a source is what catalog.Tool.Source
// names (a server's key). With it, the groups extension scopes a source's
// prompts and resources to the group that takes the source's tools whole:
// groups/get of that group carries them, and a client of the extension no
// longer finds them in prompts/list and resources/list (prompts/get and
// resources/read still serve them). Without it, every prompt and resource
// stays in the lists for every client.
type SourceListing interface {
	// ListPromptsOf lists the prompts of the sources for which from
	// reports true, named as ListPrompts names them.
	ListPromptsOf(ctx context.Context, from func(source string) bool) ([]*mcp.Prompt, error)
	// ListResourcesOf lists the resources of the sources for which from
	// reports true, as ListResources does.
	ListResourcesOf(ctx context.Context, from func(source string) bool) ([]*mcp.Resource, error)
}

// scopeSources decides which group's groups/get carries each source's
// prompts and resources: those of the sources whose tools the group takes
// whole, its own and its descendants' together (a server's group, with the
// sub-groups derived from its tools or declared by the server). They
// belong to the most specific such group only, never repeated further down
// or up the tree; where a source's tools sit whole in two unrelated groups
// (a server's group and a declared group with servers: [it]), both carry
// them. A source with any tool at top level (ungrouped, or in a group
// enabled by default) keeps its prompts and resources at top level too,
// like its tools.
func scopeSources(e *expose.Exposure, top []*expose.Wire) map[catalog.GroupID][]string {
	cat := e.Catalog()
	topTool := map[catalog.ToolID]bool{}
	for _, w := range top {
		if w.Target != nil {
			topTool[w.Target.ID] = true
		}
		for _, a := range w.Actions {
			topTool[a.Tool.ID] = true
		}
	}
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
			if topTool[t.ID] {
				covering = nil
				break
			}
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

// scopedSources are the sources whose prompts and resources some group
// carries, which a client of the extension does not find in the lists.
func (x *extCatalog) scopedSources() map[string]bool {
	out := map[string]bool{}
	for _, srcs := range x.sources {
		for _, s := range srcs {
			out[s] = true
		}
	}
	return out
}

// sourcesFingerprint identifies where prompts and resources are placed, so
// that a catalog update that moves them tells the clients their lists
// changed.
func (x *extCatalog) sourcesFingerprint() [32]byte {
	b, _ := json.Marshal(x.sources) // map keys are sorted
	return sha256.Sum256(b)
}

// scoping returns the per-source listing and the sources to leave out of
// prompts/list and resources/list for this request, when its client
// declared the groups extension and some group scopes a source.
func (g *Gateway) scoping(req mcp.Request) (SourceListing, map[string]bool, bool) {
	sl, ok := g.opts.Extras.(SourceListing)
	if !ok || !requestClient(req).Extension {
		return nil, nil, false
	}
	scoped := g.cur.Load().ext.scopedSources()
	return sl, scoped, len(scoped) > 0
}

// listPrompts answers prompts/list: every source's prompts, less those a
// group carries when the client declared the groups extension.
func (g *Gateway) listPrompts(ctx context.Context, req mcp.Request) ([]*mcp.Prompt, error) {
	if sl, scoped, ok := g.scoping(req); ok {
		return sl.ListPromptsOf(ctx, func(s string) bool { return !scoped[s] })
	}
	return g.opts.Extras.ListPrompts(ctx)
}

// listResources is listPrompts for resources/list. Resource templates are
// not scoped: the extension's contents have no place for them.
func (g *Gateway) listResources(ctx context.Context, req mcp.Request) ([]*mcp.Resource, error) {
	if sl, scoped, ok := g.scoping(req); ok {
		return sl.ListResourcesOf(ctx, func(s string) bool { return !scoped[s] })
	}
	return g.opts.Extras.ListResources(ctx)
}

// withScopedExtras adds to a groups/get result the prompts and resources
// of the sources the group carries. A source that cannot list them now
// costs its own entries only: the group's tools are still disclosed, and
// the failure is logged.
func (g *Gateway) withScopedExtras(ctx context.Context, x *extCatalog, name string, res *groupsext.GetResult) {
	grp, ok := x.byName[name]
	if !ok {
		return
	}
	srcs := x.sources[grp.ID]
	sl, listing := g.opts.Extras.(SourceListing)
	if len(srcs) == 0 || !listing {
		return
	}
	from := func(s string) bool { return slices.Contains(srcs, s) }
	prompts, err := sl.ListPromptsOf(ctx, from)
	if err != nil {
		g.log.Warn("groups/get: cannot list the group's prompts", "group", name, "sources", srcs, "err", err)
	}
	resources, err := sl.ListResourcesOf(ctx, from)
	if err != nil {
		g.log.Warn("groups/get: cannot list the group's resources", "group", name, "sources", srcs, "err", err)
	}
	res.Contents.Prompts = prompts
	res.Contents.Resources = resources
}

// announceMovedExtras tells the clients that the prompt and resource lists
// changed when an update moved a source's prompts and resources into or
// out of a group: a client of the extension then lists other ones.
func (g *Gateway) announceMovedExtras(prev, st *state) {
	if _, ok := g.opts.Extras.(SourceListing); !ok || prev.ext.sourcesFingerprint() == st.ext.sourcesFingerprint() {
		return
	}
	g.PromptsChanged()
	g.ResourcesChanged()
}
