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
// stream its subscriptions/listen request keeps open, which the SDK writes
// as server-sent events, one Write per event (pinned by
// TestSDKWritesOneEventPerWrite). So the gateway keeps the listen streams
// of the clients of the extension, and writes the notice between the
// SDK's events itself. docs/sdk-custom-notifications.md proposes the call
// the SDK could offer instead.

// groupStreams are the open listen streams of the extension's 2026-07-28
// clients over HTTP, told when the top-level groups change.
type groupStreams struct {
	mu      sync.Mutex
	streams map[*listenStream]struct{}
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

func (gs *groupStreams) add(s *listenStream) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gs.streams == nil {
		gs.streams = map[*listenStream]struct{}{}
	}
	gs.streams[s] = struct{}{}
}

func (gs *groupStreams) remove(s *listenStream) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	delete(gs.streams, s)
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

// listenStream is the response of one subscriptions/listen request: the
// SDK's events pass through whole, and the notice is written between them.
type listenStream struct {
	http.ResponseWriter
	// notice is the whole event, the listen request's id in its _meta.
	notice []byte

	mu sync.Mutex
	// started is set once the SDK has written its first event (the
	// acknowledgement): the stream is open and the notice may follow.
	started, pending bool
}

func newListenStream(w http.ResponseWriter, id json.RawMessage) *listenStream {
	var sub any
	_ = json.Unmarshal(id, &sub)
	msg, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"method":  groupsext.NotificationListChanged,
		"params":  map[string]any{"_meta": map[string]any{mcp.MetaKeySubscriptionID: sub}},
	})
	return &listenStream{ResponseWriter: w, notice: []byte("event: message\ndata: " + string(msg) + "\n\n")}
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
	return http.NewResponseController(s.ResponseWriter).Flush()
}

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
	if !strings.HasPrefix(s.Header().Get("Content-Type"), "text/event-stream") {
		return
	}
	if _, err := s.ResponseWriter.Write(s.notice); err != nil {
		return // the client has gone; the SDK finds out too
	}
	_ = http.NewResponseController(s.ResponseWriter).Flush()
}
