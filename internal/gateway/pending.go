package gateway

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/expose"
	"go.opentelemetry.io/otel/attribute"
)

// DefaultStartWait bounds how long a request waits for sources that are
// still starting when Options.StartWait is zero.
const DefaultStartWait = 60 * time.Second

// A source that is still starting is not a source that is missing: its
// tools are pending (catalog.Catalog.Pending), and a request whose answer
// depends on them waits, at most Options.StartWait, for a catalog that
// holds them (or says the source failed) instead of answering without
// them. Whoever feeds the gateway calls Update when a source settles.

// A start that answers at once (Options.Building) serves a stand-in
// catalog, its sources all pending, while the real one is built: that
// takes moments (reading the cache, building the exposures), not a
// server's start, so every request but the handshake waits for it rather
// than being answered from the stand-in and told list_changed a moment
// later. The first Update tells nobody unless some request gave up
// waiting (after listWait) and was answered from the stand-in.

// buildGate holds requests while the catalog is built.
type buildGate struct {
	done chan struct{}
	once sync.Once
	// answeredEarly: a request gave up waiting and was answered from the
	// stand-in, so the first Update must tell clients.
	answeredEarly atomic.Bool
}

// open lets every held request go, once; a nil gate is always open.
func (b *buildGate) open() {
	if b != nil {
		b.once.Do(func() { close(b.done) })
	}
}

func (b *buildGate) isOpen() bool {
	if b == nil {
		return true
	}
	select {
	case <-b.done:
		return true
	default:
		return false
	}
}

// awaitBuilt holds a request until the gateway serves its first real
// catalog, at most listWait; the handshakes of both eras (initialize,
// server/discover), ping, a 2026-07-28 client's notification stream
// (subscriptions/listen) and notifications pass.
func (g *Gateway) awaitBuilt(ctx context.Context, method string) {
	if g.built.isOpen() || passesWhileBuilding[method] || strings.HasPrefix(method, "notifications/") {
		return
	}
	if g.waitHook != nil {
		g.waitHook()
	}
	t := time.NewTimer(g.listWait())
	defer t.Stop()
	select {
	case <-g.built.done:
	case <-ctx.Done():
	case <-t.C:
		g.built.answeredEarly.Store(true)
	}
}

// passesWhileBuilding are the methods that need no catalog.
var passesWhileBuilding = map[string]bool{
	"initialize": true, "server/discover": true, "ping": true, "subscriptions/listen": true,
}

// quietUpdate reports whether the Update about to happen replaces a
// stand-in no request was answered from: then no client needs telling.
func (g *Gateway) quietUpdate() bool {
	return !g.built.isOpen() && !g.built.answeredEarly.Load()
}

// updates returns a channel closed by the next Update, after every session
// has moved to the new catalog. Take it before looking at the catalog, so
// an Update in between is not missed.
func (g *Gateway) updates() <-chan struct{} {
	g.updMu.Lock()
	defer g.updMu.Unlock()
	return g.updated
}

// announceUpdate wakes whoever waits for a new catalog.
func (g *Gateway) announceUpdate() {
	g.updMu.Lock()
	close(g.updated)
	g.updated = make(chan struct{})
	g.updMu.Unlock()
}

// MaxListWait bounds how long a first tools/list is held for sources
// still starting, whatever their start timeout. Common clients give up on
// a request after 60s (the TypeScript SDK's default request timeout, which
// Claude Desktop and Cursor keep), the same as the default startTimeout:
// a list held that long would reach a client that stopped listening just
// as it was sent. Half of that leaves the client room; the tools that come
// later are announced with list_changed all the same.
const MaxListWait = 30 * time.Second

func (g *Gateway) listWait() time.Duration {
	limit := MaxListWait
	if g.maxListWait > 0 {
		limit = g.maxListWait
	}
	return min(limit, g.startWait())
}

func (g *Gateway) startWait() time.Duration {
	if g.opts.StartWait > 0 {
		return g.opts.StartWait
	}
	return DefaultStartWait
}

// await waits until the session's catalog satisfies ready, or has no
// pending source left, or the start wait has passed, or ctx ends. A nil
// ready waits for every pending source. It returns the exposure to answer
// from.
func (s *session) await(ctx context.Context, ready func(*expose.Exposure) bool) *expose.Exposure {
	return s.awaitAtMost(ctx, s.g.startWait(), ready)
}

// awaitAtMost is await with a wait of its own.
func (s *session) awaitAtMost(ctx context.Context, wait time.Duration, ready func(*expose.Exposure) bool) *expose.Exposure {
	var deadline <-chan time.Time
	var ended string // how a traced wait ended
	for {
		updated := s.g.updates()
		expo, _ := s.current()
		if len(expo.Catalog().Pending()) == 0 || (ready != nil && ready(expo)) {
			return expo
		}
		if deadline == nil {
			// One line per waiting request, so an operator (and a test)
			// can see that a request is held for a server still starting.
			s.g.log.Debug("a request waits for servers still starting", "pending", expo.Catalog().Pending(), "at_most", wait)
			if hook := s.g.waitHook; hook != nil {
				hook()
			}
			t := time.NewTimer(wait)
			defer t.Stop()
			deadline = t.C
			if tr := s.g.tr; tr != nil {
				_, span := tr.internalSpan(ctx, "toolfold.wait_pending", attribute.StringSlice("toolfold.pending", expo.Catalog().Pending()))
				defer func() { span.SetAttributes(attribute.String("toolfold.wait.ended", ended)); span.End() }()
			}
		}
		select {
		case <-updated:
			ended = "ready"
		case <-deadline:
			ended = "timeout"
			return expo
		case <-ctx.Done():
			ended = "cancelled"
			return expo
		}
	}
}

// awaitRoute waits until a wire name routes, if a pending source may bring
// it.
func (s *session) awaitRoute(ctx context.Context, names ...string) *expose.Exposure {
	return s.await(ctx, func(e *expose.Exposure) bool {
		for _, n := range names {
			if _, ok := e.Route(n); !ok {
				return false
			}
		}
		return true
	})
}

// awaitGroups waits until none of the named groups takes tools from a
// pending source. A name the catalog does not know yet waits for every
// pending source: one of them may bring it.
func (s *session) awaitGroups(ctx context.Context, groups []string) *expose.Exposure {
	return s.await(ctx, func(e *expose.Exposure) bool {
		cat := e.Catalog()
		for _, name := range groups {
			if _, ok := cat.Group(catalog.GroupID(name)); !ok || cat.GroupPending(catalog.GroupID(name)) {
				return false
			}
		}
		return true
	})
}

// awaitList holds a tools/list back until the pending sources have
// brought their tools, for a client that would not fetch the list again
// when told it changed, at most MaxListWait. A client that does gets the
// list at once, and a list_changed when the rest arrive.
func (s *session) awaitList(ctx context.Context, req mcp.Request) {
	if s.mode == expose.Groups || s.refreshes(req) {
		return
	}
	s.awaitAtMost(ctx, s.g.listWait(), func(e *expose.Exposure) bool {
		// The search mode lists only ungrouped tools besides its
		// meta-tools: a source whose tools all join groups changes nothing.
		return s.mode == expose.Search && !e.Catalog().PendingUngrouped()
	})
}

// refreshes reports whether the client that sent req is known to fetch
// its tool list again on notifications/tools/list_changed (matched on its
// clientInfo, like the auto mode's choice).
func (s *session) refreshes(req mcp.Request) bool {
	r, ok := req.(interface{ ClientInfo() *mcp.Implementation })
	if !ok {
		return false
	}
	info := r.ClientInfo()
	if info == nil {
		return false
	}
	refreshing := s.g.look().refreshing
	if refreshing == nil {
		refreshing = DefaultRefreshingClients
	}
	return slices.ContainsFunc(refreshing, func(pattern string) bool { return clientMatches(pattern, info.Name) })
}

// sourcesNote explains, after an answer that lacks the tool name, which
// sources' tools are not known: those that failed to start (with why) and
// those still starting after the wait. When the name is a failed source's
// (by its prefix, as the catalog knows it), only that one is named.
func sourcesNote(cat *catalog.Catalog, name string, waited time.Duration) string {
	var b strings.Builder
	failed := cat.Unavailable()
	sources := slices.Sorted(maps.Keys(failed))
	if src, ok := cat.SourceOf(name); ok {
		if _, bad := failed[src]; bad {
			sources = []string{src}
		}
	}
	for _, src := range sources {
		fmt.Fprintf(&b, " The MCP server %q failed to start, so its tools are missing: %s.", src, strings.TrimSuffix(failed[src], "."))
	}
	if pending := cat.Pending(); len(pending) > 0 {
		fmt.Fprintf(&b, " Still starting after %s, so their tools are not known yet: %s; try again shortly.", waited.Round(time.Second), quoteAll(pending))
	}
	return b.String()
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
