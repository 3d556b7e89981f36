package gateway

import (
	"encoding/json"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// BeforeTrack makes g call fn between making a session with a view and
// tracking it.
func BeforeTrack(g *Gateway, fn func()) { g.trackHook = fn }

// OnPendingWait makes g call fn whenever a request starts waiting for
// pending sources. Set it before any client connects.
func OnPendingWait(g *Gateway, fn func()) { g.waitHook = fn }

// LiveViewsForTest counts the groups-mode views the gateway keeps.
func (g *Gateway) LiveViewsForTest() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.live)
}

// OnIdleSessionClosed makes the HTTP sessions of g (opened with o) call fn
// with each session closed for idleness, once it is closed. Call it after
// HTTPHandler and before any client connects.
func OnIdleSessionClosed(g *Gateway, o HTTPOptions, fn func(id string)) {
	g.sessionTable(o).idleClosed = fn
}

// SetMaxListWait replaces MaxListWait for g. Set it before any client
// connects.
func SetMaxListWait(g *Gateway, d time.Duration) { g.maxListWait = d }

// ScreenKeyForTest exposes the fast path's key of a request id.
func ScreenKeyForTest(raw []byte) (string, bool) { return screenKey(raw) }

// IDKeyForTest is the screen's own key of a request id, decoded as the
// screen decodes it.
func IDKeyForTest(raw []byte) (string, bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	id, err := jsonrpc.MakeID(v)
	if err != nil || !id.IsValid() {
		return "", false
	}
	return idKey(id), true
}

// OnAnswerAdmitted makes g call fn after each answer its budget counted
// or refused; AnswerBytesInFlight is what it counts now.
func OnAnswerAdmitted(g *Gateway, fn func()) { g.answers.admitted = fn }

// PanicOnceAt makes the next request for method that reaches path
// (typed, stdio-bytes, http-request-bytes, http-session-bytes, http) panic
// there. On the http path, method is the request's Mcp-Method header. Set
// it before any client connects.
func PanicOnceAt(g *Gateway, path, method string) {
	var fired atomic.Bool
	g.panicHook = func(p, m string) {
		if p == path && m == method && fired.CompareAndSwap(false, true) {
			panic("forced by PanicOnceAt(" + path + ", " + method + ")")
		}
	}
}

// SettleQuiet is how long a round of an upstream's questions stays open
// after the upstream settled.
const SettleQuiet = settleQuiet
