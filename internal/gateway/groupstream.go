package gateway

import (
	"encoding/json"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/groupsext"
	"github.com/toolfold/toolfold/internal/sdkshim"
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
// events itself (sdkshim.EventStream). docs/sdk-custom-notifications.md
// proposes the call the SDK could offer instead.

// groupStreams are the open listen streams of the extension's 2026-07-28
// clients over HTTP, told when the top-level groups change.
type groupStreams struct {
	mu      sync.Mutex
	streams map[*sdkshim.EventStream]struct{}
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

func (gs *groupStreams) add(s *sdkshim.EventStream) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gs.streams == nil {
		gs.streams = map[*sdkshim.EventStream]struct{}{}
	}
	gs.streams[s] = struct{}{}
}

// remove forgets a stream whose handler returns: a notice on its way is
// dropped, since its writer may no longer be used.
func (gs *groupStreams) remove(s *sdkshim.EventStream) {
	gs.mu.Lock()
	delete(gs.streams, s)
	gs.mu.Unlock()
	s.Close()
}

// notify tells every open listen stream that the groups changed.
func (gs *groupStreams) notify() {
	gs.mu.Lock()
	streams := make([]*sdkshim.EventStream, 0, len(gs.streams))
	for s := range gs.streams {
		streams = append(streams, s)
	}
	gs.mu.Unlock()
	for _, s := range streams {
		s.Send()
	}
}

// newListenStream wraps the stream of listen request id, or with id nil
// a session's standalone stream, to carry the notice.
func newListenStream(w http.ResponseWriter, id json.RawMessage) *sdkshim.EventStream {
	note := map[string]any{"jsonrpc": "2.0", "method": groupsext.NotificationListChanged}
	if id != nil {
		var sub any
		_ = json.Unmarshal(id, &sub)
		note["params"] = map[string]any{"_meta": map[string]any{mcp.MetaKeySubscriptionID: sub}}
	}
	msg, _ := json.Marshal(note)
	return sdkshim.NewEventStream(w, msg, id == nil)
}
