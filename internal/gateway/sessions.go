package gateway

import (
	"sync"
	"time"
)

// sessionTable is the one owner of the HTTP sessions of a gateway and of
// every endpoint made from it (group endpoints, limited views): it counts
// them against one cap, closes the ones idle too long, and knows which
// endpoint and which caller each belongs to. A session is idle while none
// of its requests is in flight (an open event stream is a request in
// flight); the idle timeout is each session's endpoint's, since endpoints
// made with different options share the table. Sessions leave it
// explicitly: when their endpoint's SDK handler says they are gone (404,
// or DELETE answered), or when they are closed for idleness; a request
// that names a session of another endpoint or another caller never
// touches it (see begin).
type sessionTable struct {
	max int // under mu: a reload changes it (SetMaxSessions)

	// idleClosed, if set, hears of each session closed for idleness,
	// after it is closed (tests wait on it).
	idleClosed func(id string)

	mu       sync.Mutex
	reserved int // new sessions being initialized
	live     map[string]*liveSession
	closed   bool
}

// close closes every session and stops their idle timers; the table
// refuses new ones from then on (Gateway.Shutdown).
func (t *sessionTable) close() {
	t.mu.Lock()
	t.closed = true
	live := t.live
	t.live = map[string]*liveSession{}
	t.mu.Unlock()
	for _, s := range live {
		s.timer.Stop()
		s.closeNow()
		if s.ended != nil {
			s.ended()
		}
	}
}

type liveSession struct {
	// closeNow ends the session as a DELETE would (the closeIdle given
	// to add): for idleness, endOwnedBy and Shutdown.
	closeNow func()
	// front is the endpoint whose SDK handler holds the session; owner
	// the caller who opened it (auth.TokenInfo.UserID, "" without auth).
	front *httpFront
	owner string
	// ended, if set, hears that the session left the table, once.
	ended func()
	busy  int
	idle  time.Duration
	timer *time.Timer
	// seen is when the session's last request began or ended: a client
	// that vanished without DELETE shows as long unseen.
	seen time.Time
	// fast is what the fast path of tools/call needs to serve the session
	// (httpfast.go), nil when its calls always take the SDK's path.
	fast *sessionFast
}

func newSessionTable(max int) *sessionTable {
	return &sessionTable{max: max, live: map[string]*liveSession{}}
}

// reserve claims room for a new session; false means the cap, which it
// returns, is reached.
func (t *sessionTable) reserve() (bool, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || len(t.live)+t.reserved >= t.max {
		return false, t.max
	}
	t.reserved++
	return true, t.max
}

// release gives back a reservation no session came of.
func (t *sessionTable) release() {
	t.mu.Lock()
	t.reserved--
	t.mu.Unlock()
}

// add turns a reservation into an open session of front, opened by owner;
// closeIdle closes it once it has been idle for idle, and ended (may be
// nil) hears when it leaves the table, however it ends. fast may be nil.
func (t *sessionTable) add(id string, front *httpFront, owner string, idle time.Duration, fast *sessionFast, closeIdle, ended func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.reserved--
	if t.closed {
		// Shut down while it was initialized: it ends at once.
		go func() {
			closeIdle()
			if ended != nil {
				ended()
			}
		}()
		return
	}
	s := &liveSession{front: front, owner: owner, fast: fast, ended: ended, closeNow: closeIdle, idle: idle, seen: time.Now()}
	s.timer = time.AfterFunc(idle, func() {
		t.mu.Lock()
		if t.live[id] != s || s.busy > 0 {
			t.mu.Unlock()
			return
		}
		delete(t.live, id)
		t.mu.Unlock()
		closeIdle()
		if s.ended != nil {
			s.ended()
		}
		if t.idleClosed != nil {
			t.idleClosed(id)
		}
	})
	t.live[id] = s
}

// sessionAdmission is what the table says of a request that names a
// session.
type sessionAdmission int

const (
	// sessionUnknown: the table has no such session; the endpoint's SDK
	// handler answers (it knows none the table does not).
	sessionUnknown sessionAdmission = iota
	// sessionElsewhere: the session belongs to another endpoint, which is
	// answered as if it did not exist, and the session is left alone.
	sessionElsewhere
	// sessionNotYours: the session belongs to another caller.
	sessionNotYours
	// sessionAdmitted: the request is the session's; begin counted it.
	sessionAdmitted
)

// begin judges a request of front by caller that names session id, and
// when it is the session's own notes it in flight and returns what its
// fast path needs (nil if none). Only an admitted request may be followed
// by finish.
func (t *sessionTable) begin(id string, front *httpFront, caller string) (*sessionFast, sessionAdmission) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.live[id]
	switch {
	case !ok:
		return nil, sessionUnknown
	case s.front != front:
		return nil, sessionElsewhere
	case s.owner != "" && s.owner != caller:
		// As the SDK's handler judges it: a session opened with a token
		// is its caller's alone.
		return nil, sessionNotYours
	}
	s.busy++
	s.seen = time.Now()
	s.timer.Stop()
	return s.fast, sessionAdmitted
}

// finish notes the end of a request begin admitted; gone means the
// session ended with it.
func (t *sessionTable) finish(id string, gone bool) {
	t.mu.Lock()
	s, ok := t.live[id]
	if !ok {
		t.mu.Unlock()
		return
	}
	s.busy--
	s.seen = time.Now()
	if gone {
		s.timer.Stop()
		delete(t.live, id)
		t.mu.Unlock()
		if s.ended != nil {
			s.ended()
		}
		return
	}
	if s.busy == 0 {
		s.timer.Reset(s.idle)
	}
	t.mu.Unlock()
}

func (t *sessionTable) open() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.live)
}

// byEndpoint counts the open sessions by their endpoint's name.
func (t *sessionTable) byEndpoint() map[string]int {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string]int{}
	for _, s := range t.live {
		out[s.front.g.endpoint]++
	}
	return out
}

// activity says when session id was last seen and whether a request of it
// (an open event stream included) is in flight; ok is false for a session
// the table does not hold.
func (t *sessionTable) activity(id string) (seen time.Time, busy, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.live[id]
	if !ok {
		return time.Time{}, false, false
	}
	return s.seen, s.busy > 0, true
}

// endOwnedBy ends every session owner opened, as a DELETE would, and
// returns how many: a config reload revoked or changed the token they
// were opened with. Their clients must open new sessions.
func (t *sessionTable) endOwnedBy(owner string) int {
	t.mu.Lock()
	var ended []*liveSession
	for id, s := range t.live {
		if s.owner == owner {
			s.timer.Stop()
			delete(t.live, id)
			ended = append(ended, s)
		}
	}
	t.mu.Unlock()
	for _, s := range ended {
		s.closeNow()
		if s.ended != nil {
			s.ended()
		}
	}
	return len(ended)
}
