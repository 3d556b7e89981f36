package gateway

import (
	"sync"
	"time"
)

// sessionTable counts the open HTTP sessions against a cap and closes the
// ones idle too long. A session is idle while none of its requests is in
// flight (an open event stream is a request in flight). The cap is the
// gateway's; the idle timeout is each session's endpoint's, since
// endpoints made with different options share the table.
type sessionTable struct {
	max int

	// idleClosed, if set, hears of each session closed for idleness,
	// after it is closed (tests wait on it).
	idleClosed func(id string)

	mu       sync.Mutex
	reserved int // new sessions being initialized
	live     map[string]*liveSession
}

type liveSession struct {
	busy  int
	idle  time.Duration
	timer *time.Timer
	// fast is what the fast path of tools/call needs to serve the session
	// (httpfast.go), nil when its calls always take the SDK's path.
	fast *sessionFast
}

func newSessionTable(max int) *sessionTable {
	return &sessionTable{max: max, live: map[string]*liveSession{}}
}

// reserve claims room for a new session; false means the cap is reached.
func (t *sessionTable) reserve() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.live)+t.reserved >= t.max {
		return false
	}
	t.reserved++
	return true
}

// release gives back a reservation no session came of.
func (t *sessionTable) release() {
	t.mu.Lock()
	t.reserved--
	t.mu.Unlock()
}

// add turns a reservation into an open session; closeIdle closes it once it
// has been idle for idle. fast may be nil.
func (t *sessionTable) add(id string, idle time.Duration, fast *sessionFast, closeIdle func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.reserved--
	s := &liveSession{fast: fast, idle: idle}
	s.timer = time.AfterFunc(idle, func() {
		t.mu.Lock()
		if t.live[id] != s || s.busy > 0 {
			t.mu.Unlock()
			return
		}
		delete(t.live, id)
		t.mu.Unlock()
		closeIdle()
		if t.idleClosed != nil {
			t.idleClosed(id)
		}
	})
	t.live[id] = s
}

// begin notes a request of a session and returns what its fast path needs
// (nil if none); false means the table does not know it (the SDK then
// answers that there is no such session).
func (t *sessionTable) begin(id string) (*sessionFast, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.live[id]
	if !ok {
		return nil, false
	}
	s.busy++
	s.timer.Stop()
	return s.fast, true
}

// finish notes the end of a request begin admitted; gone means the
// session ended with it.
func (t *sessionTable) finish(id string, gone bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.live[id]
	if !ok {
		return
	}
	s.busy--
	if gone {
		s.timer.Stop()
		delete(t.live, id)
		return
	}
	if s.busy == 0 {
		s.timer.Reset(s.idle)
	}
}

func (t *sessionTable) open() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.live)
}
