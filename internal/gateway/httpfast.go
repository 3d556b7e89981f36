package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/rawcall"
	"github.com/toolfold/toolfold/internal/relay"
	"github.com/toolfold/toolfold/internal/sdkshim"
)

// The fast path of tools/call on streamable HTTP (package rawcall; see
// raw.go for stdio). serveFast takes requests of the 2026-07-28 protocol,
// which carry no session: what serves them is decided by the request
// alone (see present), so nothing the SDK remembers is skipped;
// sessionFast (below) takes the calls of 2025-11-25 sessions, with what
// the session table remembers of each. A request is taken when
// every check the SDK's handler makes would pass (Host, Content-Type,
// Accept, the Mcp-Method and Mcp-Name headers, no argument bound to a
// header) and the call is one the stdio fast path would take; its answer is
// a plain JSON response, which the transport allows for any POST.
// Everything else, and every request the fast path cannot judge, goes to
// the SDK's handler as it came.

// serveFast answers a request on the fast path and reports true, or
// reports false, having written nothing, and the SDK's handler serves it.
// body is the request's, already read within the SDK's limit.
func (g *Gateway) serveFast(w http.ResponseWriter, r *http.Request, body []byte) bool {
	if g.look().noBytes || !sdkshim.HandlerWouldServe(r) ||
		r.Header.Get("Mcp-Method") != "tools/call" || hasParamHeaders(r.Header) {
		return false
	}
	req, ok := parseCall(body)
	if !ok || string(req.name) != r.Header.Get("Mcp-Name") {
		return false
	}
	version, caps, info, ok := req.metaMembers()
	if !ok {
		return false
	}
	ev, ok := statelessEra(version, caps, info)
	if !ok {
		return false
	}
	wire, _, ok := g.statelessWire(string(req.name), info, caps)
	if !ok || wire.HeaderBound() {
		return false
	}
	ticket := g.admitCall(r.Context(), pathHTTPRequest, nil)
	return g.relayHTTP(w, r, ticket, req, wire, ev, refusingDownstream{}, nil, nil)
}

// relayHTTP forwards a call on the fast path and writes its answer as a
// plain JSON response, then reports true; it reports false, having written
// nothing, when the source cannot take the call now. forwarded, if set,
// hears how to withdraw the call once the source has taken it; a call
// withdrawn is answered at once with an error (the client asked for it to
// be cancelled and will not read the answer, but the request must end).
func (g *Gateway) relayHTTP(w http.ResponseWriter, r *http.Request, ticket *callTicket, req rawRequest, wire *expose.Wire, ev era,
	down rawcall.Downstream, withdrawn <-chan struct{}, forwarded func(cancel func())) bool {
	id := string(req.id)
	type answer struct {
		msg     []byte
		outcome string
		status  int
	}
	answered := make(chan answer, 1)
	call := &rawcall.Call{Arguments: req.args, Capabilities: ev.caps, Downstream: down}
	ticket.traceBytes(r.Context(), req.meta, r.Header, wire, req.id, r.Header.Get("Mcp-Session-Id"), call)
	call.Done = func(res json.RawMessage, err error) {
		// Done runs on the source's reading goroutine: a panic here
		// would end the process, not this call.
		defer func() {
			if v := recover(); v != nil {
				g.notePanic(ticket.path, "tools/call", v)
				answered <- answer{panicAnswer(id), "internal_error", http.StatusInternalServerError}
			}
		}()
		g.panicPoint(ticket.path, "tools/call")
		msg, outcome := relay.Answer(id, wire.Name, res, err, g.completion(ev))
		answered <- answer{msg, rawOutcome(outcome, call), sdkshim.ErrorStatus(err)}
	}
	cancel, ok := ticket.forward(wire, call)
	if !ok {
		return false
	}
	if forwarded != nil {
		forwarded(cancel)
	}
	ctx := r.Context()
	select {
	case a := <-answered:
		// Accounted for before the client can see the answer, as on the
		// typed path.
		ticket.finish(ctx, wire.Name, "", wire.Target.Source, a.outcome)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		_, _ = w.Write(a.msg)
	case <-withdrawn:
		ticket.finish(ctx, wire.Name, "", wire.Target.Source, "cancelled")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(relay.Error(id, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the client cancelled this request"}))
	case <-ctx.Done():
		cancel() // the client is gone: nobody can read the answer
		ticket.finish(context.WithoutCancel(ctx), wire.Name, "", wire.Target.Source, "cancelled")
	}
	return true
}

// sessionFast is what the fast path needs to serve the calls of an HTTP
// session of a 2025-11-25 (or older) client: the session that routes them
// (its view, in the groups mode), the protocol version its requests name in
// their header, and its calls in flight, which the client may cancel. Only
// a client that declared neither sampling nor elicitation has one: a source
// asking such a client is refused, as the typed path refuses it, so no
// request of the source needs the SDK's stream of the call.
type sessionFast struct {
	front   *httpFront // the endpoint the session belongs to
	s       *session
	id      string
	version string
	caps    rawcall.Capabilities
	// initialized is set once the client's notifications/initialized
	// reached the SDK, which refuses calls before it.
	initialized atomic.Bool

	mu sync.Mutex
	// inflight holds the calls on the fast path not answered yet, by the
	// request id as sent; made at the first call.
	inflight map[string]*sessionCall
}

type sessionCall struct {
	cancel    func() // nil until the source has taken the call
	withdrawn chan struct{}
}

// sessionFast returns the fast path's state for a new session, or nil when
// its calls must take the SDK's path.
func (f *httpFront) sessionFast(s *session, id string, client ClientInfo, caps json.RawMessage) *sessionFast {
	if f.g.look().noBytes || s.mode == perRequestMode || client.Extension || client.ProtocolVersion == "" || client.ProtocolVersion >= statelessProtocol {
		return nil
	}
	c, ok := sessionCapabilities(caps)
	if !ok {
		return nil
	}
	return &sessionFast{front: f, s: s, id: id, version: client.ProtocolVersion, caps: c}
}

// sessionCapabilities reads an initialize request's client capabilities,
// or reports false when the client declared sampling or elicitation.
func sessionCapabilities(caps []byte) (rawcall.Capabilities, bool) {
	var c rawcall.Capabilities
	if len(caps) == 0 || string(caps) == "null" {
		return c, true
	}
	if caps[0] != '{' {
		return c, false
	}
	ok := true
	err := rawcall.Members(caps, func(k, v []byte) bool {
		declared := string(v) != "null"
		switch string(k) {
		case "sampling", "elicitation":
			ok = !declared
		case "roots":
			c.Roots = declared
		}
		return ok
	})
	return c, err == nil && ok
}

// noteInitialized marks the session ready for the fast path when body, which
// the SDK accepted, was the client's notifications/initialized.
func (fs *sessionFast) noteInitialized(body []byte) {
	if bytes.Contains(body, []byte(`"notifications/initialized"`)) &&
		string(rawcall.Member(body, "method")) == `"notifications/initialized"` {
		fs.initialized.Store(true)
	}
}

// serve answers a session's request on the fast path and reports true, or
// reports false, having written nothing, and the SDK serves it: a
// tools/call the stdio fast path would take for the same session, or the
// cancellation of one such call.
func (fs *sessionFast) serve(w http.ResponseWriter, r *http.Request, body []byte) bool {
	if !fs.initialized.Load() || r.Header.Get("Mcp-Protocol-Version") != fs.version ||
		!sdkshim.HandlerWouldServe(r) {
		return false
	}
	switch {
	case bytes.Contains(body, []byte(`"tools/call"`)):
		return fs.call(w, r, body)
	case bytes.Contains(body, []byte(`"notifications/cancelled"`)):
		return fs.cancelled(w, body)
	}
	return false
}

func (fs *sessionFast) call(w http.ResponseWriter, r *http.Request, body []byte) bool {
	req, ok := parseCall(body)
	if !ok {
		return false
	}
	// A session's requests say nothing per request: any _meta member but
	// the trace context (a progress token, a tool's own key) is for the
	// typed path.
	if version, caps, info, ok := req.metaMembers(); !ok || version != nil || caps != nil || info != nil {
		return false
	}
	wire, ok := fs.s.fastWire(string(req.name))
	if !ok {
		return false
	}
	id := string(req.id)
	c := &sessionCall{withdrawn: make(chan struct{})}
	fs.mu.Lock()
	if fs.inflight == nil {
		fs.inflight = map[string]*sessionCall{}
	}
	if _, dup := fs.inflight[id]; dup {
		fs.mu.Unlock()
		return false // the SDK judges a reused id
	}
	fs.inflight[id] = c
	fs.mu.Unlock()
	defer func() {
		fs.mu.Lock()
		if fs.inflight[id] == c {
			delete(fs.inflight, id)
		}
		fs.mu.Unlock()
	}()
	ticket := fs.front.g.admitCall(r.Context(), pathHTTPSession, nil)
	return fs.front.g.relayHTTP(w, r, ticket, req, wire, era{caps: fs.caps}, sessionDownstream{fs: fs}, c.withdrawn, func(cancel func()) {
		fs.mu.Lock()
		open := fs.inflight[id] == c
		if open {
			c.cancel = cancel
		}
		fs.mu.Unlock()
		if !open {
			cancel() // withdrawn while the source was taking it
		}
	})
}

// cancelled withdraws a fast-path call of the session that the client
// cancelled, and accepts the notification as the SDK would; a cancellation
// of anything else is the SDK's.
func (fs *sessionFast) cancelled(w http.ResponseWriter, body []byte) bool {
	id, ok := cancelledRequest(body)
	if !ok {
		return false
	}
	fs.mu.Lock()
	c, ok := fs.inflight[string(id)]
	if ok {
		delete(fs.inflight, string(id))
	}
	fs.mu.Unlock()
	if !ok {
		return false
	}
	close(c.withdrawn)
	if c.cancel != nil {
		c.cancel()
	}
	w.WriteHeader(http.StatusAccepted)
	return true
}

// sessionDownstream answers a source's requests during a session's fast
// call: sampling and elicitation are refused, as the typed path refuses
// them for a client that did not declare them; roots/list, which a source
// may ask although toolfold does not advertise roots, goes to the client
// on the session's own stream.
type sessionDownstream struct {
	refusingDownstream
	fs *sessionFast
}

func (d sessionDownstream) ListRoots(ctx context.Context, p *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	if !d.fs.caps.Roots {
		return nil, fmt.Errorf("%w %q", errNotDeclared, "roots")
	}
	for ss := range d.fs.s.server.Sessions() {
		if ss.ID() == d.fs.id {
			return ss.ListRoots(ctx, p)
		}
	}
	return nil, errors.New("the client's session has ended")
}

// hasParamHeaders reports arguments bound to headers (SEP-2243), which the
// SDK checks against the tool's schema.
func hasParamHeaders(h http.Header) bool {
	for k := range h {
		if len(k) >= len("Mcp-Param-") && strings.EqualFold(k[:len("Mcp-Param-")], "Mcp-Param-") {
			return true
		}
	}
	return false
}
