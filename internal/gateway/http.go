package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/sdkshim"
)

// Defaults of the HTTP session limits.
const (
	// DefaultMaxSessions caps the live HTTP sessions of a gateway. An idle
	// session costs tens of kilobytes (see docs/benchmarks.md for the measured
	// figure), so the cap bounds memory to a few hundred megabytes.
	DefaultMaxSessions = 10000
	// DefaultSessionTimeout closes sessions idle this long.
	DefaultSessionTimeout = 30 * time.Minute
)

// HTTPOptions configure the streamable HTTP endpoint.
type HTTPOptions struct {
	// Stateless serves every request on its own, without sessions (the
	// 2026-07-28 way). There is no view to keep, so auto mode serves search.
	Stateless bool
	// SessionTimeout closes sessions without a request for this long (an
	// open stream counts as a request); zero means DefaultSessionTimeout. A
	// closed session's view is gone; the client starts afresh.
	SessionTimeout time.Duration
	// MaxSessions caps the sessions open at once, over the main endpoint
	// and every group and limited endpoint together; zero means
	// DefaultMaxSessions. A client asking for one more is refused (503)
	// until a session closes or times out.
	MaxSessions int
}

// HTTPHandler serves MCP over streamable HTTP. Mount it at /mcp. On a
// stateless endpoint the groups mode has no view: its enable_tools then
// describes the groups' tools for call_tool and changes no list, as for
// every 2026-07-28 client.
//
// A stateful endpoint serves both protocol eras: the SDK serves 2026-07-28
// only from a stateless handler, so requests of that protocol (no session,
// the version in the Mcp-Protocol-Version header or in the request's
// _meta) go to one, and everything else to the stateful handler with its
// sessions.
func (g *Gateway) HTTPHandler(opts *HTTPOptions) (http.Handler, error) {
	var o HTTPOptions
	if opts != nil {
		o = *opts
	}
	if o.SessionTimeout == 0 {
		o.SessionTimeout = DefaultSessionTimeout
	}
	if o.MaxSessions == 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	probe := mcp.NewServer(&mcp.Implementation{Name: g.opts.Name, Version: g.opts.Version}, nil)
	// The server of a request is the one the front below chose; the probe
	// answers the SDK's questions on the others (sdkshim.ChosenServer).
	getServer := sdkshim.ChosenServer(probe)
	// Idle sessions are closed by the session table, not the SDK, so that
	// the table knows every session that is open.
	handler := func(stateless bool) *mcp.StreamableHTTPHandler {
		return mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
			Stateless: stateless,
			Logger:    g.sdkLog,
		})
	}
	front := &httpFront{g: g, opts: o, sdk: handler(o.Stateless), table: g.sessionTable(o)}
	front.modern = front.sdk
	if !o.Stateless {
		front.modern = handler(true)
	}
	return front, nil
}

// sessionTable returns the table of HTTP sessions that this gateway and
// the endpoints made from it share.
func (g *Gateway) sessionTable(o HTTPOptions) *sessionTable {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.httpSessions == nil {
		g.httpSessions = newSessionTable(o.MaxSessions)
	}
	return g.httpSessions
}

// SetMaxSessions caps the HTTP sessions of this gateway and its endpoints
// at max (0: DefaultMaxSessions) from the next initialize on: a reloaded
// http.maxSessions. Sessions open over a lowered cap stay open; new ones
// are refused until enough have closed. Before the first HTTPHandler
// there is no table and nothing to cap.
func (g *Gateway) SetMaxSessions(max int) {
	if max == 0 {
		max = DefaultMaxSessions
	}
	g.mu.Lock()
	t := g.httpSessions
	g.mu.Unlock()
	if t == nil {
		return
	}
	t.mu.Lock()
	t.max = max
	t.mu.Unlock()
}

// OpenSessions counts the HTTP sessions open now by endpoint: "main", or
// the group endpoint's or limited view's name (see groupKey.endpoint).
// Every endpoint served so far is counted, with 0 when none is open, so
// that an alert on the count reads 0 rather than finding it absent.
func (g *Gateway) OpenSessions() map[string]int {
	g.mu.Lock()
	t := g.httpSessions
	g.mu.Unlock()
	if t == nil {
		return map[string]int{}
	}
	open := t.byEndpoint()
	served := []string{g.endpoint}
	g.groups.mu.Lock()
	for k := range g.groups.by {
		served = append(served, k.endpoint())
	}
	g.groups.mu.Unlock()
	for _, ep := range served {
		if _, ok := open[ep]; !ok {
			open[ep] = 0
		}
	}
	return open
}

// HTTPSessions reports the HTTP sessions open now, over every endpoint.
func (g *Gateway) HTTPSessions() int {
	g.mu.Lock()
	t := g.httpSessions
	g.mu.Unlock()
	if t == nil {
		return 0
	}
	return t.open()
}

// httpFront stands before the SDK's handler: it picks a new session's
// server from the request's first message, keeps count of the sessions,
// refuses one over the cap and closes idle ones.
type httpFront struct {
	g    *Gateway
	opts HTTPOptions
	// sdk serves sessions (or, on a stateless endpoint, every request);
	// modern serves 2026-07-28 requests, which carry no session.
	sdk, modern *mcp.StreamableHTTPHandler
	table       *sessionTable
}

// ServeHTTP is kept small, as is every handler between net/http and the
// SDK's: a session's event stream (GET) holds its goroutine for the
// session's life, parked with every frame of the handler chain on its
// stack, and a stack that stays under a quarter of 16 KiB while parked is
// shrunk to 8 KiB by the collector. The work of a POST is in servePOST,
// whose frame is gone before any stream parks.
func (f *httpFront) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.g.answers != nil {
		w = &budgetWriter{ResponseWriter: w, b: f.g.answers}
	}
	defer f.g.recoverHTTP(w, pathHTTPFront)
	f.g.panicPoint(pathHTTPFront, r.Header.Get("Mcp-Method"))
	if r.Method == http.MethodPost {
		f.servePOST(w, r)
		return
	}
	if id := r.Header.Get("Mcp-Session-Id"); id != "" && !f.opts.Stateless {
		f.serveStream(w, r, id)
		return
	}
	f.sdk.ServeHTTP(w, r) // the SDK answers what is missing
}

// servePOST serves a POST: a session's message, or one without a session.
func (f *httpFront) servePOST(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("Mcp-Session-Id")
	inSession := id != "" && !f.opts.Stateless
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, mcp.DefaultMaxRequestBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, fmt.Sprintf("the request body is over %d bytes, the most toolfold reads; send smaller messages", tooBig.Limit), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, fmt.Sprintf("reading the request body: %v", err), http.StatusBadRequest)
		return
	}
	if inSession {
		f.serveSession(w, r, id, body)
		return
	}
	if r.Header.Get("Mcp-Protocol-Version") == statelessProtocol && f.g.serveFast(w, r, body) {
		return // the fast path of tools/call (httpfast.go)
	}
	first := peekMessage(body)
	client := first.client
	if v := r.Header.Get("Mcp-Protocol-Version"); client.ProtocolVersion == "" && v >= statelessProtocol {
		client.ProtocolVersion = v
	}
	// A 2026-07-28 request carries no session: nothing outlives it.
	modern := client.ProtocolVersion >= statelessProtocol
	client.Stateless = f.opts.Stateless || modern
	switch {
	case client.Stateless:
		// Each request is served on its own; the SDK keeps nothing. A
		// client probing the server (server/discover) is no client yet.
		// A request that carries no session is no session: it is not
		// counted as one (toolfold_sessions_total).
		server := f.g.serverFor(client, false)
		if modern && client.Extension && !f.opts.Stateless {
			// It can hear of groups that change, on its listen stream.
			server = f.g.listening().server
		}
		r = sdkshim.WithServer(r, server, body)
		if modern {
			if first.method == "subscriptions/listen" && client.Extension && !f.opts.Stateless {
				ls := newListenStream(w, first.id)
				f.g.groupStreams.add(ls)
				defer f.g.groupStreams.remove(ls)
				w = ls
			}
			f.modern.ServeHTTP(w, r)
			return
		}
		f.sdk.ServeHTTP(w, r)
	case first.method == "initialize":
		f.startSession(w, r, client, first)
	case len(first.id) > 0 && first.method != "" && first.method != "ping":
		// A request that needs a session and has none. The SDK would
		// refuse it with code 0 (see rpcerrors.go).
		writeRPCErrorCode(w, http.StatusBadRequest, first.id, jsonrpc.CodeInvalidRequest, fmt.Sprintf(
			"%s needs a session and this request names none: send initialize first and then the Mcp-Session-Id header its answer carries, or speak protocol 2026-07-28, whose requests name their version in the Mcp-Protocol-Version header and in _meta", first.method))
	default:
		// A ping or a notification without a session: the SDK answers it
		// on a session it closes at once. Nothing is counted and no view
		// is made for it.
		r.Body = io.NopCloser(bytes.NewReader(body))
		f.sdk.ServeHTTP(w, r)
	}
}

// startSession serves an initialize that opens a session, if the cap
// allows one more.
func (f *httpFront) startSession(w http.ResponseWriter, r *http.Request, client ClientInfo, first peeked) {
	if ok, max := f.table.reserve(); !ok {
		f.g.log.Warn("refused a new HTTP session: the session cap is reached", "max_sessions", max, "client", client.Name)
		writeRPCError(w, http.StatusServiceUnavailable, first.id, fmt.Sprintf(
			"toolfold is serving %d sessions, its limit (http.maxSessions); try again after sessions close or time out (http.sessionIdleTimeout), or raise the limit", max))
		return
	}
	// The SDK keeps the initialize request for the session's life: hand it
	// only the fields it reads, not whatever else the client sent.
	s := f.g.sessionFor(client, true)
	// A client of the extension hears of groups that change on its
	// standalone stream (groupstream.go), served by a session that says so.
	listens := client.Extension && !f.opts.Stateless
	if listens {
		s = f.g.listening()
	}
	forget := func(id string) {
		if listens {
			f.g.groupStreams.endSession(id)
		} else {
			f.g.forget(s)
		}
	}
	r = sdkshim.WithServer(r, s.server, first.compact)
	// The session enters the table before its client can see the answer,
	// so a client that reads it finds the table already counting it.
	added := false
	rec := &statusWriter{ResponseWriter: w, onHeader: func(int) {
		if id := sdkshim.SessionStarted(w.Header()); id != "" {
			owner := callerOf(r.Context(), nil).user
			if listens {
				f.g.groupStreams.addSession(id)
			}
			f.table.add(id, f, owner, f.opts.SessionTimeout, f.sessionFast(s, id, client, first.caps),
				func() { f.closeSession(id, owner) }, func() { forget(id) })
			added = true
		}
	}}
	f.sdk.ServeHTTP(rec, r)
	if !added {
		f.table.release()
		forget("")
	}
}

// serveStream serves a request of an open session other than a POST: the
// event stream a client opens with GET, which stays open (and this frame
// on its goroutine's stack) for the session's life, or a DELETE.
func (f *httpFront) serveStream(w http.ResponseWriter, r *http.Request, id string) {
	_, admission := f.table.begin(id, f, f.callerName(r))
	if admission == sessionElsewhere || admission == sessionNotYours {
		f.refuse(w, r, admission)
		return
	}
	finished := false
	if r.Method == http.MethodGet && f.g.groupStreams.isSession(id) {
		ls := newListenStream(w, nil)
		f.g.groupStreams.add(ls)
		defer f.g.groupStreams.remove(ls)
		w = ls
	}
	rec := &statusWriter{ResponseWriter: w}
	if admission == sessionAdmitted {
		rec.onHeader = func(status int) { finished = f.endedWith(r, id, status) }
	}
	f.sdk.ServeHTTP(rec, r)
	if admission == sessionAdmitted && !finished {
		f.table.finish(id, false)
	}
}

// callerName is who sends r, as the session table knows callers.
func (f *httpFront) callerName(r *http.Request) string {
	return callerOf(r.Context(), nil).user
}

// endedWith notes, before the client sees status, whether the answer
// ends session id: it then leaves the table at once, so the room it frees
// is there when the client reads the answer. It reports whether it did.
func (f *httpFront) endedWith(r *http.Request, id string, status int) bool {
	if sdkshim.SessionEnded(r.Method, status) {
		f.table.finish(id, true)
		return true
	}
	return false
}

// refuse answers a request naming a session of another endpoint (as if it
// did not exist: answering so must not end it there) or of another caller.
func (f *httpFront) refuse(w http.ResponseWriter, r *http.Request, admission sessionAdmission) {
	if admission == sessionElsewhere {
		http.Error(w, "session not found: sessions belong to the endpoint that opened them; send initialize to this endpoint to open one here", http.StatusNotFound)
		return
	}
	f.g.log.Warn("refused a request on another caller's HTTP session", "caller", callerOf(r.Context(), nil).name)
	http.Error(w, "session user mismatch: this session was opened with another token; send initialize to open a session of your own", http.StatusForbidden)
}

// serveSession serves a POST of an open session; body is the request's,
// already read.
func (f *httpFront) serveSession(w http.ResponseWriter, r *http.Request, id string, body []byte) {
	fast, admission := f.table.begin(id, f, f.callerName(r))
	if admission == sessionElsewhere || admission == sessionNotYours {
		f.refuse(w, r, admission)
		return
	}
	known := admission == sessionAdmitted
	if fast != nil && fast.front == f {
		if fast.serve(w, r, body) {
			f.table.finish(id, false)
			return // the fast path of tools/call (httpfast.go)
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	finished := false
	rec := &statusWriter{ResponseWriter: w}
	if known {
		rec.onHeader = func(status int) { finished = f.endedWith(r, id, status) }
	}
	f.sdk.ServeHTTP(rec, r)
	if fast != nil && rec.status == http.StatusAccepted {
		fast.noteInitialized(body)
	}
	if known && !finished {
		f.table.finish(id, false)
	}
}

// closeSession closes an idle session the way its client would: a DELETE
// handed to the SDK's handler, as its owner (the SDK refuses any other
// caller, and a session it kept would outlive the cap and the timeout).
func (f *httpFront) closeSession(id, owner string) {
	if err := sdkshim.CloseStreamableSession(f.sdk, id, owner); err != nil {
		f.g.log.Warn("closing an idle HTTP session", "err", err)
	}
}

// peeked is what the gateway reads of a request's first message.
type peeked struct {
	client ClientInfo
	method string
	id     json.RawMessage
	// compact is an initialize request re-encoded with only the fields
	// the SDK reads, bounded (sdkshim.CompactInitialize).
	compact []byte
	// caps are an initialize request's client capabilities, as sent.
	caps json.RawMessage
}

func peekMessage(body []byte) peeked {
	p := peeked{client: peekClient(body)}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			ProtocolVersion string          `json:"protocolVersion"`
			Capabilities    json.RawMessage `json:"capabilities,omitempty"`
			ClientInfo      json.RawMessage `json:"clientInfo,omitempty"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil {
		p.compact = body
		return p
	}
	p.method, p.id, p.caps = m.Method, m.ID, m.Params.Capabilities
	p.compact = body
	if m.Method == "initialize" {
		if c, err := sdkshim.CompactInitialize(m.ID, m.Method, m.Params.ProtocolVersion, m.Params.Capabilities, m.Params.ClientInfo); err == nil {
			p.compact = c
		}
	}
	return p
}

// writeRPCError answers a request with a JSON-RPC error and an HTTP status.
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, msg string) {
	writeRPCErrorCode(w, status, id, -32000, msg)
}

// writeRPCErrorCode is writeRPCError with a given error code.
func writeRPCErrorCode(w http.ResponseWriter, status int, id json.RawMessage, code int64, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	type rpcError struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}
	body, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{"2.0", id, rpcError{code, msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// statusWriter notes the status of an answer; it passes flushes on, which
// the SDK's event streams need.
type statusWriter struct {
	http.ResponseWriter
	status int
	// onHeader, if set, hears the status once, before the header is sent.
	onHeader func(status int)
}

func (s *statusWriter) WriteHeader(code int) {
	s.note(code)
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(p []byte) (int, error) {
	s.note(http.StatusOK)
	return s.ResponseWriter.Write(p)
}

func (s *statusWriter) note(code int) {
	if s.status != 0 {
		return
	}
	s.status = code
	if s.onHeader != nil {
		s.onHeader(code)
	}
}

func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
