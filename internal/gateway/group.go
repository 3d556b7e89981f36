package gateway

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
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
	// limited marks a limited view of the main endpoint (LimitedHandler):
	// id then joins the sorted groups with newlines.
	limited bool
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
	return g.partHandler(groupKey{id: catalog.GroupID(group), readOnly: readOnly}, opts)
}

// LimitedHandler serves the main endpoint to a client limited to some
// groups (none: every group) or to read-only tools, as a token may be: the
// same mode and meta-tools as /mcp, over only what the client may reach.
// The groups' tools, those of the groups inside them and the ungrouped
// tools are served; nothing else is listed, found or callable.
func (g *Gateway) LimitedHandler(groups []string, readOnly bool, opts *HTTPOptions) (http.Handler, error) {
	ids := slices.Clone(groups)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	return g.partHandler(groupKey{id: catalog.GroupID(strings.Join(ids, "\n")), readOnly: readOnly, limited: true}, opts)
}

func (g *Gateway) partHandler(key groupKey, opts *HTTPOptions) (http.Handler, error) {
	g.groups.mu.Lock()
	defer g.groups.mu.Unlock()
	if ep, ok := g.groups.by[key]; ok {
		return ep.handler, nil
	}
	space, err := g.groupSpace(key)
	if err != nil {
		return nil, err
	}
	o := withLook(g.opts, g.look())
	if !key.limited {
		o.Mode = expose.Flat
	} else {
		o.PrivateLists = true // what it lists depends on the token
	}
	// Prompts and resources of the sources this part reaches, only.
	var sub *Gateway
	o.Extras = partExtras(g.opts.Extras, func(source string) bool {
		for _, t := range sub.Catalog().Tools() {
			if t.Source == source {
				return true
			}
		}
		return false
	})
	sub, err = New(space, &o)
	if err != nil {
		return nil, fmt.Errorf("serving %s: %w", key, err)
	}
	// One count of each resource's clients across every endpoint: the
	// source behind them is the same.
	sub.subs = g.subs
	sub.endpoint = key.endpoint()
	// A part waits for sources still starting as its gateway does.
	sub.waitHook, sub.maxListWait = g.waitHook, g.maxListWait
	// One cap on the sessions of every endpoint.
	sub.httpSessions = g.sessionTable(httpOptionsOrZero(opts))
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
	var sub *catalog.Catalog
	var err error
	if key.limited {
		cat := g.Catalog()
		var ids []catalog.GroupID
		if key.id != "" {
			// A group a source still starting may bring (one derived from
			// its tools) joins the view when it comes (Update); until
			// then the part waits for that source (catalog.Limit).
			for _, id := range strings.Split(string(key.id), "\n") {
				ids = append(ids, catalog.GroupID(id))
			}
		} else {
			for _, root := range cat.Roots() {
				ids = append(ids, root.ID)
			}
		}
		if sub, err = cat.Limit(ids, key.readOnly); err != nil {
			return nil, err
		}
		// The main endpoint's view rules, less the initial groups the
		// limit leaves out.
		o := g.cur.Load().space.Options()
		o.InitialGroups = slices.DeleteFunc(slices.Clone(o.InitialGroups), func(id catalog.GroupID) bool {
			_, ok := sub.Group(id)
			return !ok
		})
		return view.NewSpace(sub, &o)
	}
	if sub, err = g.Catalog().Subtree(key.id, key.readOnly); err != nil {
		return nil, err
	}
	return view.NewSpace(sub, nil)
}

// endpoint names the endpoint in metrics: "group:<id>" (":ro" added for
// read-only tools), or "limited" for every limited view of the main
// endpoint (one label for them all: their groups are the tokens' choice).
func (k groupKey) endpoint() string {
	name := "limited"
	if !k.limited {
		name = "group:" + string(k.id)
	}
	if k.readOnly {
		name += ":ro"
	}
	return name
}

// String names the endpoint in messages.
func (k groupKey) String() string {
	var what string
	switch {
	case !k.limited:
		what = fmt.Sprintf("group %q alone", k.id)
	case k.id == "":
		what = "the whole catalog"
	default:
		what = "the groups " + strings.ReplaceAll(string(k.id), "\n", ", ")
	}
	if k.readOnly {
		what += ", read-only tools only"
	}
	return what
}

// updateGroups moves the group endpoints to the current catalog. A group
// that is gone keeps serving what it had until the process restarts.
func (g *Gateway) updateGroups() {
	g.groups.mu.Lock()
	defer g.groups.mu.Unlock()
	lk := g.look()
	for key, ep := range g.groups.by {
		space, err := g.groupSpace(key)
		if err != nil {
			g.log.Warn("endpoint keeps its old catalog", "serving", key.String(), "err", err)
			continue
		}
		// A part follows its parent's presentation, as partHandler made
		// it: flat for a whole group, the parent's mode for a token's.
		o := withLook(ep.gw.opts, lk)
		if !key.limited {
			o.Mode = expose.Flat
		}
		if err := ep.gw.UpdateWith(space, &o); err != nil {
			g.log.Warn("endpoint keeps its old catalog", "serving", key.String(), "err", err)
		}
	}
}

func httpOptionsOrZero(opts *HTTPOptions) HTTPOptions {
	var o HTTPOptions
	if opts != nil {
		o = *opts
	}
	if o.SessionTimeout == 0 {
		o.SessionTimeout = DefaultSessionTimeout
	}
	if o.MaxSessions == 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	return o
}
