package gateway

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/groupsext"
)

// The grouping extension's notifications/groups/list_changed is no
// notification the SDK knows, and the SDK gives a server no call to send
// one it does not know on an HTTP session (its sending path looks every
// method up in a fixed table). A 2026-07-28 client hears of changes on the
// stream its subscriptions/listen request keeps open, a 2025-11-25 one on
// its session's standalone stream (GET); the SDK writes both as
// server-sent events, one Write per event (pinned by
// TestSDKWritesOneEventPerWrite). So the gateway keeps those streams of
// the clients of the extension, and writes the notice between the SDK's
// events itself. docs/sdk-custom-notifications.md proposes the call
// the SDK could offer instead.

// groupStreams are the open listen streams of the extension's 2026-07-28
// clients over HTTP, told when the top-level groups change.
type groupStreams struct {
	mu      sync.Mutex
	streams map[*listenStream]struct{}
	// sessions are the HTTP sessions (2025-11-25) of the extension's
	// clients, whose standalone event stream (GET) carries the notice.
	sessions map[string]bool
	// server is the per-request session that serves these clients: it
	// declares groups listChanged and calls notify on a change (migrated).
	server *session
}

// listening returns the per-request session that serves a 2026-07-28
// client of the extension over HTTP, made on first use.
func (g *Gateway) listening() *session {
	gs := &g.groupStreams
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gs.server == nil {
		gs.server = g.newSessionNotifying(perRequestMode, nil, gs.notify)
		g.track(gs.server) // it lives as long as the gateway
	}
	return gs.server
}

// addSession and endSession keep the sessions of the extension's
// 2025-11-25 HTTP clients; isSession asks for one.
func (gs *groupStreams) addSession(id string) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gs.sessions == nil {
		gs.sessions = map[string]bool{}
	}
	gs.sessions[id] = true
}

func (gs *groupStreams) endSession(id string) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	delete(gs.sessions, id)
}

func (gs *groupStreams) isSession(id string) bool {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	return gs.sessions[id]
}

func (gs *groupStreams) add(s *listenStream) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gs.streams == nil {
		gs.streams = map[*listenStream]struct{}{}
	}
	gs.streams[s] = struct{}{}
}

// remove forgets a stream whose handler returns: a notice on its way is
// dropped, since its writer may no longer be used.
func (gs *groupStreams) remove(s *listenStream) {
	gs.mu.Lock()
	delete(gs.streams, s)
	gs.mu.Unlock()
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

// notify tells every open listen stream that the groups changed.
func (gs *groupStreams) notify() {
	gs.mu.Lock()
	streams := make([]*listenStream, 0, len(gs.streams))
	for s := range gs.streams {
		streams = append(streams, s)
	}
	gs.mu.Unlock()
	for _, s := range streams {
		s.groupsChanged()
	}
}

// listenStream is the response of one subscriptions/listen request, or a
// session's standalone stream: the SDK's events pass through whole, and
// the notice is written between them.
type listenStream struct {
	http.ResponseWriter
	// notice is the whole event, the listen request's id in its _meta.
	notice []byte
	// openOnHeader: the stream is open once its header is written (a
	// standalone stream writes no event of its own at first).
	openOnHeader bool

	mu sync.Mutex
	// started is set once the SDK has written its first event (the
	// acknowledgement): the stream is open and the notice may follow.
	started, pending bool
	// closed is set when the handler returns (remove).
	closed bool
}

// newListenStream wraps the stream of listen request id, or with id nil
// a session's standalone stream.
func newListenStream(w http.ResponseWriter, id json.RawMessage) *listenStream {
	note := map[string]any{"jsonrpc": "2.0", "method": groupsext.NotificationListChanged}
	if id != nil {
		var sub any
		_ = json.Unmarshal(id, &sub)
		note["params"] = map[string]any{"_meta": map[string]any{mcp.MetaKeySubscriptionID: sub}}
	}
	msg, _ := json.Marshal(note)
	return &listenStream{ResponseWriter: w, notice: []byte("event: message\ndata: " + string(msg) + "\n\n"), openOnHeader: id == nil}
}

func (s *listenStream) WriteHeader(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ResponseWriter.WriteHeader(code)
	if s.openOnHeader && code == http.StatusOK && !s.started {
		s.started = true
		if s.pending {
			s.writeNotice()
		}
	}
}

func (s *listenStream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.ResponseWriter.Write(p)
	if err == nil && !s.started {
		s.started = true
		if s.pending {
			s.writeNotice()
		}
	}
	return n, err
}

// FlushError is how the SDK's http.ResponseController flushes the stream:
// under the lock, as the notice is written.
func (s *listenStream) FlushError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil // the handler has returned: nothing to flush
	}
	return http.NewResponseController(s.ResponseWriter).Flush()
}

// Flush is FlushError for the writers above it that flush through
// http.Flusher.
func (s *listenStream) Flush() { _ = s.FlushError() }

// Unwrap lets http.ResponseController reach the rest (deadlines).
func (s *listenStream) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// groupsChanged writes the notice now, or after the acknowledgement.
func (s *listenStream) groupsChanged() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		s.pending = true
		return
	}
	s.writeNotice()
}

// writeNotice writes the notice on an event stream; s.mu is held. A
// response that is no event stream (an error) is left alone.
func (s *listenStream) writeNotice() {
	s.pending = false
	if s.closed || !strings.HasPrefix(s.Header().Get("Content-Type"), "text/event-stream") {
		return
	}
	if _, err := s.ResponseWriter.Write(s.notice); err != nil {
		return // the client has gone; the SDK finds out too
	}
	_ = http.NewResponseController(s.ResponseWriter).Flush()
}
