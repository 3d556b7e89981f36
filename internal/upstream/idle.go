package upstream

import (
	"time"
)

// Idle shutdown: a started stdio server that has served no request for its
// idle timeout is stopped, as Close stops it, and started again on the next
// need. Its tool list stays known (in memory and on disk), so it stays
// listed; the stop is not a crash, so it arms no backoff.
//
// Every request holds a lease on the connection from connect until it is
// answered (connection.active). The idle timer is armed whenever the last
// lease is given back (and when a start completes, in case nobody takes
// one); when it fires, the server is stopped only if, at that moment, no
// request holds a lease, no client holds a resource subscription, the
// connection is still the server's current one, and the last request ended
// at least the idle timeout ago (a timer that lost the race with a newer
// request finds it did not). Leases are taken under the server's lock in
// connect, so a request can never be handed a connection that is being
// stopped: connect waits for such a connection to end and starts a new one.
//
// Remote servers (http, sse) are not stopped: there is no process to
// reclaim, net/http already closes idle TCP connections, and closing the
// MCP session would drop what the remote server keeps for it.

// clock is where the supervisor reads the time and sets its timers (idle
// stops, backoff, retries, start deadlines, the phase's since): one clock,
// which tests replace with one they advance by hand.
type clock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) stopper
}

// stopper is a timer that can be stopped.
type stopper interface{ Stop() bool }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) stopper { return time.AfterFunc(d, f) }

// idleTimeoutOf is how long a server may stay idle before it is stopped, or
// zero for never: only stdio servers (those with a command) are stopped.
func idleTimeoutOf(s *server) time.Duration {
	if s.cfg.Command == "" || s.cfg.IdleTimeout == nil {
		return 0
	}
	return max(s.cfg.IdleTimeout.Std(), 0)
}

// release gives back a lease taken by connect and arms the idle timer when
// it was the last one.
func (s *server) release(c *connection) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.active--
	c.lastUsed = s.m.clock.Now()
	if c.active == 0 {
		s.armIdleLocked(c)
		if s.drained != nil { // a reload waits to stop it (retire)
			close(s.drained)
			s.drained = nil
		}
	}
}

// armIdleLocked (re)starts the idle timer of c, unless c is no longer the
// server's connection (a request given back after a crash). s.mu is held.
func (s *server) armIdleLocked(c *connection) {
	if s.idleTimeout <= 0 || s.conn != c || c.retiring || s.subscribedLocked() {
		return
	}
	if c.idleTimer != nil {
		c.idleTimer.Stop()
	}
	c.idleTimer = s.m.clock.AfterFunc(s.idleTimeout, func() {
		// The check stops a process and waits for it: not on the timer's
		// goroutine, and on one Close waits for.
		s.m.goBackground(func() { s.stopIfIdle(c) })
	})
}

// subscribedLocked reports whether a client holds a resource subscription on
// the server. s.mu is held.
func (s *server) subscribedLocked() bool {
	for _, n := range s.subscriptions {
		if n > 0 {
			return true
		}
	}
	return false
}

// stopIfIdle stops c if it has been idle for the idle timeout and nothing
// holds it (see the comment at the top of this file).
func (s *server) stopIfIdle(c *connection) {
	stopped := false
	if hook := s.m.idleChecked; hook != nil {
		defer func() { hook(s.name, stopped) }()
	}
	s.mu.Lock()
	idleFor := s.m.clock.Now().Sub(c.lastUsed)
	if s.conn != c || c.retiring || c.isEnded() || c.active > 0 || s.subscribedLocked() || idleFor < s.idleTimeout {
		s.mu.Unlock()
		return
	}
	c.retiring = true
	if c.idleTimer != nil {
		c.idleTimer.Stop()
	}
	s.mu.Unlock()
	s.log.Debug("stopping upstream: idle", "idle_for", idleFor.Round(time.Second), "idle_timeout", s.idleTimeout)
	c.stop()
	stopped = true
}

// subscribed records a resource subscription a client took (delta 1) or
// gave up (delta -1); a server with subscriptions is not stopped for
// idleness, so its updates keep coming. Counts are the server's, not the
// connection's: a client that subscribed still expects updates after a
// crash and restart.
func (s *server) subscribed(uri string, delta int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.subscriptions == nil {
		s.subscriptions = map[string]int{}
	}
	n := max(s.subscriptions[uri]+delta, 0)
	if n == 0 {
		delete(s.subscriptions, uri)
	} else {
		s.subscriptions[uri] = n
	}
	if c := s.conn; c != nil && c.active == 0 && !s.subscribedLocked() {
		s.armIdleLocked(c)
	}
}
