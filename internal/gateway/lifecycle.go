package gateway

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Session is what WaitOrCancel needs of a session: the SDK's
// *mcp.ServerSession and *mcp.ClientSession are ones.
type Session interface {
	Wait() error
	Close() error
}

// WaitOrCancel waits for session to end and returns what its Wait
// returned; if ctx ends first it closes the session, waits for it to end,
// and returns ctx.Err(), as the SDK's own Run does. A session's Wait alone
// never looks at ctx. Every Run and serve loop that holds a session ends
// through it, so they all keep the same contract.
func WaitOrCancel(ctx context.Context, session Session) error {
	done := make(chan error, 1)
	go func() { done <- session.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		_ = session.Close()
		<-done
		return ctx.Err()
	}
}

// ErrClosed is the cause of what Shutdown ends: the detached calls of the
// input broker, and any request that comes after it.
var ErrClosed = errors.New("the gateway was shut down")

// lifecycle is what the gateway started and Shutdown stops: the
// goroutines it runs on its own (the input broker's detached calls, the
// watchers of sessions, the listing behind a moved source's
// announcements) and the sessions it serves.
type lifecycle struct {
	ctx  context.Context // ends at Shutdown, with ErrClosed as its cause
	stop context.CancelCauseFunc

	mu       sync.Mutex
	closed   bool
	wg       sync.WaitGroup // the goroutines of goTracked
	sessions map[Session]struct{}
}

func (l *lifecycle) init() {
	l.ctx, l.stop = context.WithCancelCause(context.Background())
	l.sessions = map[Session]struct{}{}
}

// goTracked runs f on a goroutine Shutdown waits for, and reports false,
// without running it, once the gateway is shut down.
func (l *lifecycle) goTracked(f func()) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		f()
	}()
	return true
}

// hold records a session Shutdown closes; it reports false, and closes
// the session, once the gateway is shut down. let forgets it.
func (l *lifecycle) hold(s Session) bool {
	l.mu.Lock()
	closed := l.closed
	if !closed {
		l.sessions[s] = struct{}{}
	}
	l.mu.Unlock()
	if closed {
		_ = s.Close()
	}
	return !closed
}

func (l *lifecycle) let(s Session) {
	l.mu.Lock()
	delete(l.sessions, s)
	l.mu.Unlock()
}

// Shutdown stops everything the gateway started: it refuses new sessions,
// ends the calls waiting for a client's input and the timers of the
// input broker, the list announcements and the HTTP session table,
// closes every session it serves (over Connect, ServeStdio and its HTTP
// handlers), and waits until the goroutines it ran have returned, or ctx
// ends (then it returns ctx.Err()). It is safe to call more than once and
// from several goroutines. The upstreams are not the gateway's: their
// owner closes them.
func (g *Gateway) Shutdown(ctx context.Context) error {
	l := &g.life
	l.mu.Lock()
	first := !l.closed
	l.closed = true
	sessions := make([]Session, 0, len(l.sessions))
	for s := range l.sessions {
		sessions = append(sessions, s)
	}
	l.mu.Unlock()
	if first {
		l.stop(ErrClosed)
		g.inputs.close()
		g.lists.close()
		g.mu.Lock()
		table := g.httpSessions
		g.mu.Unlock()
		if table != nil {
			table.close()
		}
	}
	for _, s := range sessions {
		_ = s.Close()
	}
	done := make(chan struct{})
	go func() {
		l.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("shutting the gateway down: goroutines still running: %w", ctx.Err())
	}
}

// Close is Shutdown without a deadline.
func (g *Gateway) Close() error { return g.Shutdown(context.Background()) }

// isClosed reports whether Shutdown has begun.
func (g *Gateway) isClosed() bool {
	g.life.mu.Lock()
	defer g.life.mu.Unlock()
	return g.life.closed
}
