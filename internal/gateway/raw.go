package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/meta"
	"github.com/toolfold/toolfold/internal/rawcall"
	"github.com/toolfold/toolfold/internal/relay"
)

// The fast path of tools/call on stdio (package rawcall).
//
// rawEdge sits between the client's stdin and the SDK's reader. Each line it
// reads is either handed to the SDK unchanged or, when it is a tools/call
// the fast path can carry exactly, sent to the tool's source as bytes; the
// source's answer is written to stdout by the source's reading goroutine,
// under the same lock as the SDK's own writes. No goroutine is started and
// nothing is decoded into types on the way. Lines read together travel
// together: the requests of the calls the screen read in one go reach the
// source in one write, and the answers a source read in one go reach the
// client in one write (rawcall.Batch).
//
// A call takes the fast path only when nothing about it needs the SDK: a
// flat catalog tool the client's view reaches, whose source checks its own
// arguments and is running now; a request whose _meta holds nothing but the
// protocol's per-hop keys (so no progress token, no log level); a client
// that has initialized, or a 2026-07-28 request whose client declares
// neither sampling nor elicitation (asking such a client means an
// InputRequiredResult, which the typed path builds). Every other message,
// and every call a source cannot take now (not started yet), goes to the
// SDK as it came. find_tools, answered by toolfold itself, has a byte
// path of its own (rawmeta.go).

// rawEdge is one stdio client's fast path.
type rawEdge struct {
	g *Gateway
	s *session
	// ctx is the connection's: it names the caller (see callerOf).
	ctx context.Context
	// screen admits the requests the edge takes and writes their answers
	// beside the SDK's messages; nil in benchmarks, which admit all.
	screen *stdioScreen

	ss atomic.Pointer[mcp.ServerSession] // set once the SDK session runs
	// connected is closed once ss is set (or the session failed to start):
	// the screen hands on the client's lines while Connect is returning.
	connected chan struct{}

	mu sync.Mutex
	// inflight holds the fast-path calls whose answer is not in yet, by
	// the client's request id as sent: how to withdraw each (nil until the
	// source has taken it).
	inflight map[string]func()

	// metaMsg is the buffer meta-tools' answers are written in
	// (takeMeta), reused: only the screen's reading goroutine takes calls.
	metaMsg []byte
}

func newRawEdge(ctx context.Context, g *Gateway, s *session, screen *stdioScreen) *rawEdge {
	return &rawEdge{g: g, s: s, ctx: ctx, screen: screen, inflight: map[string]func(){}, connected: make(chan struct{})}
}

// connect records the SDK session the client's messages go to (nil if it
// did not start).
func (e *rawEdge) connect(ss *mcp.ServerSession) {
	if ss != nil {
		e.ss.Store(ss)
	}
	close(e.connected)
}

// take sends a tools/call on the fast path, or withdraws one the client
// cancelled, and reports whether it did; the SDK gets every other line.
func (e *rawEdge) take(line []byte) bool {
	if e.g.look().noBytes {
		return false
	}
	switch {
	case bytes.Contains(line, []byte(`"tools/call"`)):
		return e.call(line)
	case bytes.Contains(line, []byte(`"notifications/cancelled"`)):
		return e.cancelled(line)
	}
	return false
}

// rawRequest is what the fast path reads of a tools/call message.
type rawRequest struct {
	id, params, meta []byte
	// name is the tool's name, unquoted (it has no escapes); it shares the
	// message's buffer, so that a caller's string(name) that does not
	// outlive the call costs no allocation.
	name []byte
	// args are the arguments as sent, nil when absent or null.
	args json.RawMessage
	// view is the message as read in its one pass (rawcall.ParseRequest);
	// every later step reads it rather than the bytes again.
	view rawcall.Request
}

// parseCall reads a tools/call message's envelope, or reports false for
// anything the SDK should read instead: not a lone request, an unexpected
// member, a name with escapes. The slices point into line.
func parseCall(line []byte) (r rawRequest, ok bool) {
	v, ok := rawcall.ParseRequest(line)
	if !ok {
		return r, false // the SDK answers with a parse error
	}
	r.view, r.id, r.params, r.meta = v, v.ID, v.Params, v.Meta
	if v.Other || (v.JSONRPC != nil && string(v.JSONRPC) != `"2.0"`) || !plainID(v.ID) ||
		string(v.Method) != `"tools/call"` || len(v.Params) == 0 || v.Params[0] != '{' {
		return r, false
	}
	// inputResponses, requestState, task…: the typed path.
	if v.OtherParams || v.RequestID != nil || v.Name == nil || (v.Meta != nil && v.Meta[0] != '{') {
		return r, false
	}
	if a := v.Arguments; a != nil {
		if a[0] != '{' && string(a) != "null" {
			return r, false
		}
		if string(a) != "null" {
			r.args = a
		}
	}
	r.name, ok = rawcall.Unquote(v.Name)
	return r, ok
}

// plainID reports whether a request's id is a string or a number.
func plainID(v []byte) bool {
	return len(v) > 0 && (v[0] == '"' || v[0] == '-' || (v[0] >= '0' && v[0] <= '9'))
}

// era is what a request's _meta says about its protocol and its client.
type era struct {
	stateless bool // a 2026-07-28 request: its result says "resultType"
	caps      rawcall.Capabilities
}

// eraOf reads the request's _meta, or reports false when it carries
// anything the typed path must see: a key beyond the per-hop ones, a
// protocol version the fast path does not know, a client capability that
// needs asking through results.
func (e *rawEdge) route(name string, req *rawRequest) (*expose.Wire, era, bool) {
	version, caps, info, ok := req.metaMembers()
	if !ok {
		return nil, era{}, false
	}
	if version != nil {
		ev, ok := statelessEra(version, caps, info)
		if !ok {
			return nil, era{}, false
		}
		w, _, ok := e.g.statelessWire(name, info, caps)
		return w, ev, ok
	}
	ev, ok := e.sessionEra(caps, info)
	if !ok {
		return nil, era{}, false
	}
	w, ok := e.s.fastWire(name)
	return w, ev, ok
}

// sessionEra is the era of a session client's request, whose _meta named
// no protocol version: it must have initialized, on a session protocol,
// and say nothing per request (caps and info, from its _meta, are nil).
func (e *rawEdge) sessionEra(caps, info []byte) (era, bool) {
	if caps != nil || info != nil || e.s.mode == perRequestMode {
		return era{}, false
	}
	<-e.connected
	ss := e.ss.Load()
	if ss == nil {
		return era{}, false
	}
	ip := ss.InitializeParams()
	if ip == nil || ip.ProtocolVersion >= statelessProtocol {
		return era{}, false
	}
	return era{caps: capabilitiesOf(ip.Capabilities)}, true
}

// statelessWire routes a 2026-07-28 request's call as the per-request
// server routes it (requestClient, present): by the client's name in its
// _meta, with no view, so nothing is hidden. A client that declares
// extensions (the groups extension among them) takes the typed path.
func (g *Gateway) statelessWire(name string, info, caps []byte) (*expose.Wire, presentation, bool) {
	if rawcall.Member(caps, "extensions") != nil || g.Names().Kind(name) != meta.NotMeta {
		return nil, presentation{}, false
	}
	var client string
	if info != nil {
		if v := rawcall.Member(info, "name"); v != nil {
			var ok bool
			if client, ok = rawcall.String(v); !ok {
				return nil, presentation{}, false
			}
		}
	}
	p := g.present(ClientInfo{Name: client, ProtocolVersion: statelessProtocol, Stateless: true})
	expo, ok := g.cur.Load().expo[p.mode]
	if !ok {
		return nil, presentation{}, false
	}
	w, ok := expo.Route(name)
	if !ok || w.Group != nil {
		return nil, presentation{}, false
	}
	if t := w.Target; t.Forward == nil || !t.ChecksArguments {
		return nil, presentation{}, false
	}
	return w, p, true
}

// statelessEra judges a 2026-07-28 request's per-hop _meta members.
func statelessEra(version, caps, info []byte) (era, bool) {
	if string(version) != `"`+statelessProtocol+`"` || caps == nil || caps[0] != '{' || (info != nil && !plainInfo(info)) {
		return era{}, false
	}
	var sampling, elicitation, roots bool
	if rawcall.Members(caps, func(k, v []byte) bool {
		declared := string(v) != "null"
		switch string(k) {
		case "sampling":
			sampling = declared
		case "elicitation":
			elicitation = declared
		case "roots":
			roots = declared
		}
		return true
	}) != nil || sampling || elicitation {
		return era{}, false
	}
	return era{stateless: true, caps: rawcall.Capabilities{Roots: roots}}, true
}

// plainInfo reports whether clientInfo is an object whose name, version
// and title, where given, are strings, as the SDK decodes it.
func plainInfo(info []byte) bool {
	if info[0] != '{' {
		return false
	}
	ok := true
	return rawcall.Members(info, func(k, v []byte) bool {
		switch string(k) {
		case "name", "version", "title":
			ok = v[0] == '"'
		}
		return ok
	}) == nil && ok
}

// metaMembers returns the per-hop members of the request's _meta, or
// reports false when it carries anything beyond them and the trace context
// (a progress token, a log level, a tool's own keys), which the typed path
// must see.
func (r *rawRequest) metaMembers() (version, caps, info []byte, ok bool) {
	v := &r.view
	return v.ProtocolVersion, v.ClientCapabilities, v.ClientInfo, !v.OtherMeta
}

func capabilitiesOf(c *mcp.ClientCapabilities) rawcall.Capabilities {
	if c == nil {
		return rawcall.Capabilities{}
	}
	e := c.Elicitation
	return rawcall.Capabilities{
		Sampling:        c.Sampling != nil,
		FormElicitation: e != nil && (e.Form != nil || e.URL == nil),
		Roots:           c.RootsV2 != nil || c.Roots.ListChanged,
	}
}

// call sends a tools/call on the fast path if it can take it. A panic on
// the way fails the call alone: answered as an internal error once the
// screen admitted it here, left to the SDK before.
func (e *rawEdge) call(line []byte) (taken bool) {
	var id, key string
	admitted := false
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		e.g.notePanic(pathStdioBytes, "tools/call", v)
		if !admitted {
			taken = false
			return
		}
		e.mu.Lock()
		delete(e.inflight, id)
		e.mu.Unlock()
		taken = true
		if e.screen != nil {
			_ = e.screen.out.writeAnswer(panicAnswer(id), key)
		}
	}()
	return e.forwardCall(line, &id, &key, &admitted)
}

func (e *rawEdge) forwardCall(line []byte, idp, keyp *string, admittedp *bool) bool {
	req, ok := parseCall(line)
	if !ok {
		return false
	}
	switch e.g.Names().Kind(string(req.name)) {
	case meta.Find:
		return e.takeMeta(&req, findNow, idp, keyp, admittedp)
	case meta.Describe:
		return e.takeMeta(&req, describeNow, idp, keyp, admittedp)
	}
	w, ev, ok := e.route(string(req.name), &req)
	if !ok {
		return false
	}
	// The line's buffer is reused by the next read: the id is kept as a
	// string, and the arguments need to live only as long as Forward
	// (rawcall.Call).
	id := string(req.id)
	key, ok := screenKey(req.id)
	if !ok || (e.screen != nil && !e.screen.admitFast(key, ev.stateless)) {
		return false
	}
	e.mu.Lock()
	if _, dup := e.inflight[id]; dup {
		e.mu.Unlock()
		if e.screen != nil {
			e.screen.answered(key, false)
		}
		return false // the screen answers a reused id as it does
	}
	e.inflight[id] = nil
	e.mu.Unlock()
	*idp, *keyp, *admittedp = id, key, true
	e.g.panicPoint(pathStdioBytes, "tools/call")

	var down rawcall.Downstream = refusingDownstream{}
	if !ev.stateless {
		down = e.ss.Load()
	}
	ticket := e.g.admitCall(e.ctx, pathStdioBytes, nil)
	call := &rawcall.Call{Arguments: req.args, Capabilities: ev.caps, Downstream: down}
	if e.screen != nil {
		// The screen ends the batch before it could wait for the
		// client's next line: the requests of the calls read together
		// go to their source in one write.
		call.Batch = &e.screen.batch
	}
	ticket.traceBytes(e.ctx, req.meta, nil, w, req.id, "", call)
	call.Done = func(res json.RawMessage, err error) {
		e.mu.Lock()
		delete(e.inflight, id)
		e.mu.Unlock()
		// Done runs on the source's reading goroutine: a panic here
		// would end the process, not this call.
		defer func() {
			if v := recover(); v != nil {
				e.g.notePanic(pathStdioBytes, "tools/call", v)
				if e.screen != nil {
					_ = e.screen.out.writeAnswer(panicAnswer(id), key)
				}
			}
		}()
		e.answer(id, key, w, ev, res, err, call, ticket)
	}
	cancel, ok := ticket.forward(w, call)
	if !ok {
		e.mu.Lock()
		delete(e.inflight, id)
		e.mu.Unlock()
		if e.screen != nil {
			e.screen.answered(key, false) // the SDK will take it
		}
		return false
	}
	e.mu.Lock()
	if _, open := e.inflight[id]; open { // not answered already
		e.inflight[id] = cancel
	}
	e.mu.Unlock()
	return true
}

// fastWire routes a call to the flat wire whose source can take it as
// bytes, or reports false: a meta-tool, a grouped wire, a tool the view
// does not reach, a source without a fast path or one that leaves its
// arguments to toolfold. Reach is the session's role's, as on the typed
// path: one gate.
func (s *session) fastWire(name string) (*expose.Wire, bool) {
	if s.g.Names().Kind(name) != meta.NotMeta && s.offersMeta(name) {
		return nil, false
	}
	expo, v := s.current()
	w, ok := expo.Route(name)
	if !ok || w.Group != nil || !s.role.reaches(expo, v.Snapshot(), w) {
		return nil, false
	}
	if t := w.Target; t.Forward == nil || !t.ChecksArguments {
		return nil, false
	}
	return w, true
}

// cancelled withdraws a fast-path call the client cancelled; a cancellation
// of anything else is the SDK's.
func (e *rawEdge) cancelled(line []byte) bool {
	id, ok := cancelledRequest(line)
	if !ok {
		return false
	}
	e.mu.Lock()
	cancel, ok := e.inflight[string(id)]
	if ok {
		delete(e.inflight, string(id))
	}
	e.mu.Unlock()
	if !ok {
		return false
	}
	if key, ok := screenKey(id); ok && e.screen != nil {
		e.screen.answered(key, false) // a cancelled request's id is free again
	}
	if cancel != nil {
		cancel()
	}
	return true
}

// cancelledRequest returns the id of the request a notifications/cancelled
// message withdraws, as sent, or reports false for any other message.
func cancelledRequest(msg []byte) ([]byte, bool) {
	v, ok := rawcall.ParseRequest(msg)
	if !ok || string(v.Method) != `"notifications/cancelled"` || v.ID != nil || len(v.Params) == 0 || v.Params[0] != '{' {
		return nil, false
	}
	return v.RequestID, v.RequestID != nil
}

// answer writes a fast-path call's response, as the typed path would have
// written it.
func (e *rawEdge) answer(id, key string, w *expose.Wire, ev era, res json.RawMessage, err error, call *rawcall.Call, ticket *callTicket) {
	msg, outcome := relay.Answer(id, w.Name, res, err, e.g.completion(ev))
	outcome = rawOutcome(outcome, call)
	msg = append(msg, '\n')
	// Accounted for before the client can see the answer, as on the
	// typed path.
	ticket.finish(e.ctx, w.Name, "", w.Target.Source, outcome)
	switch {
	case e.screen == nil:
	case call.Answers != nil:
		// The source has more answers in hand: this one goes out with
		// them, in one write, when it ends the batch.
		e.screen.out.holdAnswer(msg, key)
		call.Answers.Hold(e.screen.out)
	default:
		if werr := e.screen.out.writeAnswer(msg, key); werr != nil {
			e.g.log.Debug("could not write a tools/call answer to the client", "err", werr)
		}
	}
}

// screenKey is the key the stdio screen keeps a request's id under (idKey).
func screenKey(raw []byte) (string, bool) {
	// The usual ids without decoding: idKey formats them the same way.
	if s, ok := rawcall.String(raw); ok {
		return "string:" + s, true
	}
	if plainInt(raw) {
		return "int64:" + string(raw), true
	}
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

// completion is how the byte path completes a result for a request of era
// ev: as the SDK completes the typed path's, a 2026-07-28 one says its
// resultType and names the server in its _meta.
func (g *Gateway) completion(ev era) relay.Completion {
	if !ev.stateless {
		return relay.Completion{}
	}
	return relay.Completion{ResultType: true, ServerInfo: g.serverInfo}
}

// serverInfo is the implementation the gateway's SDK servers name
// (newSessionNotifying), encoded.
func serverInfo(opts *Options) json.RawMessage {
	info, err := json.Marshal(&mcp.Implementation{Name: opts.Name, Version: opts.Version})
	if err != nil {
		panic(fmt.Sprintf("encoding the server's implementation: %v", err)) // two strings: cannot fail
	}
	return info
}

// refusingDownstream answers for a 2026-07-28 client on the fast path, which
// declared neither sampling nor elicitation: a source asking anyway is
// refused as the typed path refuses it (see pendingCall.askOne). Roots are
// not offered to sources, so the client is not asked for them either.
type refusingDownstream struct{}

func (refusingDownstream) CreateMessage(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	return nil, fmt.Errorf("%w %q", errNotDeclared, "sampling")
}

func (refusingDownstream) CreateMessageWithTools(context.Context, *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	return nil, fmt.Errorf("%w %q", errNotDeclared, "sampling")
}

func (refusingDownstream) Elicit(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return nil, fmt.Errorf("%w %q", errNotDeclared, "elicitation")
}

func (refusingDownstream) ListRoots(context.Context, *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	return nil, fmt.Errorf("%w %q: toolfold does not offer roots to its sources", errNotDeclared, "roots")
}

// plainInt reports a JSON integer written as Go's %v writes an int64:
// digits, a minus sign, no leading zero, small enough.
func plainInt(b []byte) bool {
	digits := b
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 15 || (digits[0] == '0' && len(digits) > 1) || (len(b) > 1 && b[0] == '-' && digits[0] == '0') {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
