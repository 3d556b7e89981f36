package gateway

import (
	"sync"
	"time"

	"github.com/toolfold/toolfold/internal/sdkshim"
)

// listChangedDelay is how long the gateway gathers changes of the prompt or
// resource lists before it tells clients: upstreams often change together
// (a shared backend reloads, several servers finish starting), and one
// list_changed per burst saves every client as many re-listings. The SDK
// adds its own 10 ms debounce on top.
const listChangedDelay = 100 * time.Millisecond

// listKind is a pass-through list whose changes clients can hear of.
type listKind int

const (
	promptList listKind = iota
	resourceList
	// toolList is announced this way only by a per-request server whose
	// tools moved (session.migrated); other sessions announce tools
	// through their sending middleware (notifyToolsChanged).
	toolList
)

// PromptsChanged tells the clients that the prompt list changed: every
// client of every mode and of every group endpoint (prompts are not folded,
// so all of them see the same list). Changes within listChangedDelay are
// announced once. The lists are never cached, so the next prompts/list
// asks the sources and has the change.
//
// Clients hear of it as the SDK delivers any list_changed: on their
// session, or for a 2026-07-28 client on its subscriptions/listen stream.
// A client of a stateless endpoint has neither and hears nothing; it lists
// afresh on every request anyway.
func (g *Gateway) PromptsChanged() { g.lists.changed(promptList, g.announce) }

// ResourcesChanged is PromptsChanged for resources and resource templates
// (one notification covers both, as in the protocol).
func (g *Gateway) ResourcesChanged() { g.lists.changed(resourceList, g.announce) }

// announce passes one coalesced change to every server.
func (g *Gateway) announce(k listKind) {
	if g.opts.Extras == nil || !g.opts.ExtrasListChanged {
		return // not declared: a client would not expect it
	}
	for _, s := range g.sessions() {
		s.announce(k)
	}
}

// listAnnouncer holds back the announcements of each list for a delay,
// coalescing the changes that arrive meanwhile. The delay runs from the
// first change, so a steady stream of changes cannot postpone the news
// for ever.
type listAnnouncer struct {
	delay   time.Duration
	mu      sync.Mutex
	pending map[listKind]*time.Timer
	closed  bool
}

// close stops the announcements not sent yet, and any later one.
func (a *listAnnouncer) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	for k, t := range a.pending {
		t.Stop()
		delete(a.pending, k)
	}
}

func (a *listAnnouncer) changed(k listKind, send func(listKind)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed || a.pending[k] != nil {
		return
	}
	if a.pending == nil {
		a.pending = map[listKind]*time.Timer{}
	}
	a.pending[k] = time.AfterFunc(a.delay, func() {
		// Cleared before sending: a change that arrives while clients are
		// being told gets an announcement of its own.
		a.mu.Lock()
		delete(a.pending, k)
		closed := a.closed
		a.mu.Unlock()
		if !closed {
			send(k)
		}
	})
}

// method is the notification that announces a change of the list.
func (k listKind) method() string {
	switch k {
	case promptList:
		return sdkshim.PromptsListChanged
	case resourceList:
		return sdkshim.ResourcesListChanged
	}
	return sdkshim.ToolsListChanged
}

// announce makes the SDK tell this server's clients that a pass-through
// list changed, through a placeholder in its registry
// (sdkshim.RegistryAnnouncer). The placeholder is never seen: prompts/list,
// prompts/get, resources/list and resources/read are all answered by
// extrasMiddleware, and the per-request server's tools/list and tools/call
// by its middleware, before the SDK's registry is consulted.
func (s *session) announce(k listKind) {
	if err := s.announcer.Announce(k.method()); err != nil {
		s.g.log.Warn("announcing a list change", "list", k.method(), "err", err)
	}
}
