package upstream

import (
	"fmt"
	"log/slog"
	"time"
)

// The supervisor of one upstream server is a state machine. Its states are
// the phases below (finer than the State that Status reports, see public),
// and every change of phase goes through transitionLocked, which allows
// only the moves in the lifecycle table. A move the table does not list is
// a bug in toolfold: it is refused, the server stays where it was, and the
// log says so at error level, rather than the server drifting into a state
// no code expects (a "ready" server with no connection, a start after
// Close).
//
// Two invariants ride on the table:
//
//   - ready is entered only with the connection set and a tool list known
//     (readyLocked records the start's list and initialize result in the
//     same step), so no caller sees a ready server without its tools;
//   - each entry into starting or restarting begins a new start
//     generation; a tool list carries the generation of the connection it
//     was read on and is recorded only while that generation is current
//     (see recordLocked), so a list read on an older connection never
//     overwrites the list of a newer one.

// phase is where a server is in its life.
type phase uint8

const (
	// phaseNew: never started.
	phaseNew phase = iota
	// phaseStarting: a first start runs (or the first after an idle stop).
	phaseStarting
	// phaseRestarting: a start runs after a failed start or a crash.
	phaseRestarting
	// phaseReady: connected; its tools and initialize result are recorded.
	phaseReady
	// phaseFailed: the last start failed; the next waits out a backoff.
	phaseFailed
	// phaseCrashed: the connection ended without toolfold asking (the
	// process exited, the remote server forgot the session); the next need
	// starts it again, after a backoff.
	phaseCrashed
	// phaseIdleStopped: stopped for idleness; the next need starts it as a
	// first start, with no backoff: it did not fail.
	phaseIdleStopped
	// phaseClosing: being stopped for good (Manager.Close, or a reload that
	// removed or replaced it); nothing starts it again.
	phaseClosing
	// phaseClosed: stopped for good.
	phaseClosed
)

var phaseNames = [...]string{
	phaseNew:         "new",
	phaseStarting:    "starting",
	phaseRestarting:  "restarting",
	phaseReady:       "ready",
	phaseFailed:      "failed",
	phaseCrashed:     "crashed",
	phaseIdleStopped: "idle-stopped",
	phaseClosing:     "closing",
	phaseClosed:      "closed",
}

func (p phase) String() string {
	if int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return fmt.Sprintf("phase(%d)", p)
}

// public is the State that Status reports for p: what /healthz has always
// said, so the finer phases change nothing a reader of it sees.
func (p phase) public() State {
	switch p {
	case phaseStarting:
		return StateStarting
	case phaseRestarting, phaseCrashed:
		return StateRestarting
	case phaseReady:
		return StateReady
	case phaseFailed:
		return StateFailed
	default: // new, idle-stopped, closing, closed
		return StateIdle
	}
}

// move is one allowed transition and the event that causes it.
type move struct {
	from, to phase
	on       string
}

// lifecycle is every transition a server may make; nothing else is
// allowed. Closing is reachable from everywhere but a running start:
// close waits for the start to end first, so a start never ends in a
// closing server (the one exception is a start refused by a Manager that
// began to close before it ran).
var lifecycle = []move{
	{phaseNew, phaseStarting, "first need"},
	{phaseIdleStopped, phaseStarting, "need after an idle stop"},
	{phaseFailed, phaseRestarting, "need or background retry after a failed start"},
	{phaseCrashed, phaseRestarting, "need after a crash"},
	{phaseStarting, phaseReady, "started, tools recorded"},
	{phaseRestarting, phaseReady, "started, tools recorded"},
	{phaseStarting, phaseFailed, "start failed"},
	{phaseRestarting, phaseFailed, "start failed"},
	{phaseStarting, phaseClosing, "shutdown before the start ran"},
	{phaseRestarting, phaseClosing, "shutdown before the start ran"},
	{phaseReady, phaseCrashed, "connection ended unasked"},
	{phaseReady, phaseIdleStopped, "idle timeout"},
	{phaseReady, phaseClosing, "close"},
	{phaseNew, phaseClosing, "close"},
	{phaseFailed, phaseClosing, "close"},
	{phaseCrashed, phaseClosing, "close"},
	{phaseIdleStopped, phaseClosing, "close"},
	{phaseClosing, phaseClosed, "stopped"},
}

// allowedMove reports whether the lifecycle table lists from → to.
func allowedMove(from, to phase) bool {
	for _, m := range lifecycle {
		if m.from == from && m.to == to {
			return true
		}
	}
	return false
}

// transitionLocked moves the server to phase to because of event, if the
// lifecycle table allows it from where the server is; otherwise it logs
// the bug and leaves the server where it was. Entering starting or
// restarting begins a new start generation; entering ready requires the
// connection and a tool list (readyLocked). s.mu is held.
func (s *server) transitionLocked(to phase, event string) bool {
	from := s.phase
	ok := allowedMove(from, to)
	if ok && to == phaseReady && (s.conn == nil || !s.known) {
		ok = false
	}
	if !ok {
		s.log.Error("bug: toolfold refused an upstream lifecycle transition it does not allow; the server stays where it was",
			slog.String("from", from.String()), slog.String("to", to.String()), slog.String("event", event))
		if hook := s.m.transitionRefused; hook != nil {
			hook(s.name, from, to, event)
		}
		return false
	}
	s.phase, s.since = to, s.m.clock.Now()
	switch to {
	case phaseStarting:
		s.startGen++
	case phaseRestarting:
		s.startGen++
		s.restarts++
	}
	return true
}

// readyLocked ends a successful start: the list the start read and the
// initialize result are recorded, the connection published and the server
// made ready, all under one hold of s.mu, so no caller ever sees the server
// ready without its tools. It returns what recorded takes, and false when
// the table refused (a bug, logged): the caller then stops c. s.mu is held.
func (s *server) readyLocked(c *connection, list *toolList) (entry *cacheEntry, changed, ok bool) {
	entry, changed = s.recordLocked(list)
	s.conn = c
	if !s.transitionLocked(phaseReady, "started") {
		s.conn = nil
		s.lastErr = s.errorf(ErrStartFailed, nil, "upstream %q started but toolfold found it in an unexpected state and stopped it; this is a bug in toolfold, please report it", s.name)
		return entry, changed, false
	}
	s.lastErr, s.lastTail = nil, c.stderr
	s.failedStarts, s.nextStart = 0, time.Time{}
	return entry, changed, true
}
