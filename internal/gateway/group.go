package gateway

import (
	"fmt"
	"net/http"
	"sync"

	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/view"
)

// groupEndpoints are the gateways behind /mcp/<group>, made on first use
// and kept current by Update.
type groupEndpoints struct {
	mu sync.Mutex
	by map[groupKey]*groupEndpoint
}

type groupKey struct {
	id       catalog.GroupID
	readOnly bool
}

type groupEndpoint struct {
	gw      *Gateway
	handler http.Handler
}

// GroupHandler serves one group alone over streamable HTTP: its tools and
// those of the groups inside it, all listed flat, nothing to enable. It is
// what /mcp/<group> mounts, for a client that should see one area only.
// With readOnly it serves only the tools that declare themselves read-only.
func (g *Gateway) GroupHandler(group string, readOnly bool, opts *HTTPOptions) (http.Handler, error) {
	key := groupKey{catalog.GroupID(group), readOnly}
	g.groups.mu.Lock()
	defer g.groups.mu.Unlock()
	if ep, ok := g.groups.by[key]; ok {
		return ep.handler, nil
	}
	space, err := g.groupSpace(key)
	if err != nil {
		return nil, err
	}
	o := g.opts
	o.Mode = expose.Flat
	sub, err := New(space, &o)
	if err != nil {
		return nil, fmt.Errorf("serving group %q alone: %w", group, err)
	}
	// One count of each resource's clients across every endpoint: the
	// source behind them is the same.
	sub.subs = g.subs
	h, err := sub.HTTPHandler(opts)
	if err != nil {
		return nil, err
	}
	if g.groups.by == nil {
		g.groups.by = map[groupKey]*groupEndpoint{}
	}
	g.groups.by[key] = &groupEndpoint{gw: sub, handler: h}
	return h, nil
}

func (g *Gateway) groupSpace(key groupKey) (*view.Space, error) {
	sub, err := g.Catalog().Subtree(key.id, key.readOnly)
	if err != nil {
		return nil, err
	}
	return view.NewSpace(sub, nil)
}

// updateGroups moves the group endpoints to the current catalog. A group
// that is gone keeps serving what it had until the process restarts.
func (g *Gateway) updateGroups() {
	g.groups.mu.Lock()
	defer g.groups.mu.Unlock()
	for key, ep := range g.groups.by {
		space, err := g.groupSpace(key)
		if err != nil {
			g.log.Warn("group endpoint keeps its old catalog", "group", key.id, "err", err)
			continue
		}
		if err := ep.gw.Update(space); err != nil {
			g.log.Warn("group endpoint keeps its old catalog", "group", key.id, "err", err)
		}
	}
}
