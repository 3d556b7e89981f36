package gateway

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// subscriptions shares the sources' resource subscriptions among clients.
//
// A source sees one subscriber, the gateway, however many clients watch a
// resource: the first client to subscribe to a URI subscribes at the
// source, the last one to leave unsubscribes there. Without the count, one
// client's unsubscribe would silence the resource for every other client.
// A client leaves by unsubscribing or by going away: the SDK forgets a
// closed session's subscriptions without calling the unsubscribe handler,
// so the gateway watches each subscribing session's end itself. Otherwise
// a source would keep sending updates nobody reads, and a server stopped
// when idle would never be.
type subscriptions struct {
	x   Extras
	log *slog.Logger
	// spawn runs the watchers on goroutines Shutdown waits for
	// (lifecycle.goTracked); nil: plain goroutines.
	spawn func(func()) bool

	mu      sync.Mutex
	byURI   map[string]*subscription
	watched map[*mcp.ServerSession]bool // sessions whose end is awaited
}

// subscription is one URI's clients. Its mutex orders the subscribe and
// unsubscribe sent to the source, which may take a while (the source may
// have to start first), without holding up other URIs.
type subscription struct {
	mu      sync.Mutex
	holders map[*mcp.ServerSession]bool
	gone    bool // removed from byURI; look the URI up again
}

// releaseTimeout bounds the unsubscribe sent for a client that went away:
// nobody waits for it.
const releaseTimeout = 30 * time.Second

func newSubscriptions(x Extras, log *slog.Logger) *subscriptions {
	return &subscriptions{x: x, log: log, byURI: map[string]*subscription{}, watched: map[*mcp.ServerSession]bool{}}
}

// entry returns the URI's subscription, locked and live.
func (s *subscriptions) entry(uri string) *subscription {
	for {
		s.mu.Lock()
		sub := s.byURI[uri]
		if sub == nil {
			sub = &subscription{holders: map[*mcp.ServerSession]bool{}}
			s.byURI[uri] = sub
		}
		s.mu.Unlock()
		sub.mu.Lock()
		if !sub.gone {
			return sub
		}
		sub.mu.Unlock()
	}
}

// drop forgets a URI nobody holds any more; sub is locked.
func (s *subscriptions) drop(uri string, sub *subscription) {
	s.mu.Lock()
	if s.byURI[uri] == sub {
		delete(s.byURI, uri)
	}
	s.mu.Unlock()
	sub.gone = true
}

// subscribe adds ss to the URI's clients, subscribing at the source if ss
// is the first.
func (s *subscriptions) subscribe(ctx context.Context, ss *mcp.ServerSession, params *mcp.SubscribeParams) error {
	sub := s.entry(params.URI)
	defer sub.mu.Unlock()
	if sub.holders[ss] {
		return nil
	}
	if len(sub.holders) == 0 {
		if err := s.x.Subscribe(ctx, params); err != nil {
			s.drop(params.URI, sub)
			return err
		}
	}
	sub.holders[ss] = true
	s.watch(ss)
	return nil
}

// unsubscribe removes ss from the URI's clients, unsubscribing at the
// source if it was the last.
func (s *subscriptions) unsubscribe(ctx context.Context, ss *mcp.ServerSession, params *mcp.UnsubscribeParams) error {
	sub := s.entry(params.URI)
	defer sub.mu.Unlock()
	if !sub.holders[ss] {
		if len(sub.holders) == 0 {
			s.drop(params.URI, sub)
		}
		return nil // not subscribed: nothing to give up, as the SDK answers
	}
	delete(sub.holders, ss)
	if len(sub.holders) > 0 {
		return nil
	}
	s.drop(params.URI, sub)
	return s.x.Unsubscribe(ctx, params)
}

// watch releases ss's subscriptions when its session ends.
func (s *subscriptions) watch(ss *mcp.ServerSession) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watched[ss] {
		return
	}
	s.watched[ss] = true
	watch := func() {
		_ = ss.Wait()
		s.release(ss)
	}
	if s.spawn == nil {
		go watch()
	} else if !s.spawn(watch) {
		delete(s.watched, ss) // shut down: the session is being closed
	}
}

// release gives up every subscription of a session that ended.
func (s *subscriptions) release(ss *mcp.ServerSession) {
	s.mu.Lock()
	delete(s.watched, ss)
	uris := make([]string, 0, len(s.byURI))
	for uri := range s.byURI {
		uris = append(uris, uri)
	}
	s.mu.Unlock()
	for _, uri := range uris {
		s.mu.Lock()
		sub := s.byURI[uri]
		s.mu.Unlock()
		if sub == nil {
			continue
		}
		sub.mu.Lock()
		held := !sub.gone && sub.holders[ss]
		sub.mu.Unlock()
		if !held {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
		if err := s.unsubscribe(ctx, ss, &mcp.UnsubscribeParams{URI: uri}); err != nil {
			s.log.Warn("could not unsubscribe a resource for a client that went away", "uri", uri, "err", err)
		}
		cancel()
	}
}
