package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/rawcall"
	"github.com/toolfold/toolfold/internal/relay"
)

// The fast path of tools/call (package rawcall) on a stdio server: the
// request is written to the server's stdin beside the SDK's messages, with
// params that are bytes, under an id of its own kind (a string the SDK
// never uses), and its response is taken off stdout by rawLines before the
// SDK reads it, and handed over from that same reading goroutine: nothing
// is decoded into types and no goroutine hands it on. Everything else on
// the connection (the server's requests during the call, notifications,
// the SDK's own requests and their answers) stays the SDK's.

// rawIDPrefix starts the ids of fast-path requests; the SDK numbers its own.
const rawIDPrefix = "toolfold-raw"

// rawConn is a stdio server connection's side door.
type rawConn struct {
	w *lockedWriter // the server's stdin, shared with the SDK

	mu      sync.Mutex
	pending map[string]*rawPending
	ended   bool // the connection is over: no new calls
	// One timer per connection ends the calls that outlive their server's
	// timeout: it is armed for the earliest deadline of the calls pending
	// (next; zero while none is), so a call costs no timer of its own.
	timer *time.Timer
	next  time.Time
}

// lockedWriter writes whole messages: the SDK writes each with one Write,
// and so does the side door, which may also hold a call's request back for
// its batch (hold, Flush), so that the requests of calls read together
// reach the server in one write.
type lockedWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
	// held are the requests held back, in order, and calls the calls they
	// are of: a failed write fails them.
	held  []byte
	calls []*rawPending
}

// Write writes p after what is held, in one write.
func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	if len(l.held) == 0 {
		defer l.mu.Unlock()
		return l.w.Write(p)
	}
	l.held = append(l.held, p...)
	failed, err := l.flushLocked()
	l.mu.Unlock()
	failHeld(failed, err)
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// hold keeps the request of call p back until the next write or Flush.
func (l *lockedWriter) hold(req []byte, p *rawPending) {
	l.mu.Lock()
	l.held = append(l.held, req...)
	l.calls = append(l.calls, p)
	l.mu.Unlock()
}

// Flush writes the requests held (rawcall.Flusher); if the write failed,
// it returns the failing of the calls whose requests it held, for the
// batch to run once it has ended.
func (l *lockedWriter) Flush() func() {
	l.mu.Lock()
	failed, err := l.flushLocked()
	l.mu.Unlock()
	if err == nil {
		return nil
	}
	return func() { failHeld(failed, err) }
}

// flushLocked writes what is held; on failure it returns the calls whose
// requests may not have reached the server. l.mu is held.
func (l *lockedWriter) flushLocked() ([]*rawPending, error) {
	if len(l.held) == 0 {
		return nil, nil
	}
	_, err := l.w.Write(l.held)
	var failed []*rawPending
	if err != nil {
		failed = slices.Clone(l.calls)
	}
	clear(l.calls)
	l.calls = l.calls[:0]
	if cap(l.held) > 1<<20 {
		l.held = nil // one huge batch does not pin its buffer for the connection's life
	} else {
		l.held = l.held[:0]
	}
	return failed, err
}

// failHeld ends the calls whose held requests could not be written, as
// CallTool words a broken connection (requestError).
func failHeld(failed []*rawPending, err error) {
	for _, p := range failed {
		if p.claim() {
			s := p.c.s
			p.c.raw.drop(p.id)
			p.release()
			p.call.Finish(nil, s.errorf(nil, err, "upstream %q failed to answer %s: %v", s.name, p.what(), err))
		}
	}
}

func (l *lockedWriter) Close() error { return l.w.Close() }

// rawPending is one fast-path call in flight.
type rawPending struct {
	c        *connection
	id       string
	tool     string
	call     *rawcall.Call
	req      []byte       // the request as sent: its arguments outlive the call's
	deadline time.Time    // when toolfold's timeout for the server ends it
	reg      inflightCall // its entry among the connection's calls in flight
	claimd   atomic.Bool  // whoever sets it ends the call: result, timeout, cancel or end
}

// claim reports whether the caller is the one to end the call.
func (p *rawPending) claim() bool { return p.claimd.CompareAndSwap(false, true) }

// rawLines passes the server's stdout on to the SDK a line at a time, less
// the answers to fast-path calls, which it hands to their callers, and
// less the lines longer than max, which it reads past without holding
// them (see limit.go).
type rawLines struct {
	src io.Reader
	raw *rawConn // nil: no fast path
	// max bounds one message (maxMessageBytes), its line's end aside.
	max int
	// tooLarge, if set, is told of each message skipped for its size:
	// its id (raw JSON, or nil) and whether it was the server's request
	// or notification.
	tooLarge func(id []byte, request bool)
	br       *bufio.Reader // over src; made on first use
	long     []byte        // a line longer than br's buffer
	rest     []byte        // what the SDK has yet to read of the last line
	over     *idScan       // set by readLine when it skipped a line for its size
	err      error
	// answers lets the callers of the fast-path calls answered from one
	// read hold their answers back and write them at once: it ends
	// before a read that may wait, and before the SDK gets a line.
	answers rawcall.Batch
	// intake, if set, hears the same drain (Drained, before a read that
	// may wait; Reading once it returns) and counts each request for
	// input handed on to the SDK (Arrived), so that the questions the
	// server wrote together are known to be all in.
	intake  *relay.Intake
	reading bool // Reading was said and Drained not yet
}

func (r *rawLines) Read(p []byte) (int, error) {
	for len(r.rest) == 0 {
		if r.err != nil {
			r.drain()
			return 0, r.err
		}
		if !r.lineBuffered() {
			r.drain()
		}
		line, err := r.readLine()
		r.err = err
		if !r.reading && r.intake != nil {
			// Whatever came (a line to refuse for its size included),
			// the reader holds input until it drains again.
			r.reading = true
			r.intake.Reading()
		}
		if r.over != nil {
			r.rest = r.refuse(r.over)
			r.over = nil
			continue
		}
		if len(line) > 0 && r.raw != nil {
			if rest, took := r.raw.take(line, &r.answers); took {
				if len(rest) == 0 {
					continue
				}
				line = rest // a batch's messages of the SDK's
			}
		}
		if r.intake != nil && isQuestion(line) {
			r.intake.Arrived()
		}
		r.rest = line
	}
	r.answers.End()
	n := copy(p, r.rest)
	r.rest = r.rest[n:]
	return n, nil
}

// drain is the one event of a reader that has handed on all it read and
// may wait next: the answers held for it go out (answers ends), and the
// intake hears that the server has nothing more in hand.
func (r *rawLines) drain() {
	r.answers.End()
	if r.reading {
		r.reading = false
		r.intake.Drained()
	}
}

// isQuestion reports whether line is a server→client request for input
// that the SDK will hand to the connection's middleware (a request, with
// an id, of a method a Downstream answers, whose params decode), so that
// its Handoff ends the transit Arrived began. It errs towards no: a
// question not counted goes out at worst a round later, where one
// counted that never reached the middleware would hold the next rounds
// up until the connection's calls are over (relay.Intake.Idle). A batch
// line is never counted. (A question not counted still gets a Handoff
// from the middleware, whose Received then ends another's transit early:
// again at worst one more round, never a wait.)
func isQuestion(line []byte) bool {
	if !bytes.Contains(line, []byte(`"method"`)) {
		return false // most lines are answers: one scan
	}
	t := bytes.TrimLeft(line, " \t\r\n")
	if len(t) == 0 || t[0] != '{' {
		return false
	}
	var method, id, params []byte
	if rawcall.Members(t, func(k, v []byte) bool {
		switch string(k) {
		case "method":
			method = v
		case "id":
			id = v
		case "params":
			params = v
		}
		return true
	}) != nil {
		return false
	}
	name, ok := rawcall.String(method)
	if !ok || !questionMethods[name] || len(id) == 0 || !(id[0] == '"' || id[0] == '-' || id[0] >= '0' && id[0] <= '9') {
		return false
	}
	if len(params) == 0 {
		// Only the methods the SDK takes without params (missingParamsOK).
		return name != "sampling/createMessage"
	}
	if params[0] != '{' {
		return false // null included: the SDK's handling of it varies
	}
	var p any
	switch name {
	case "elicitation/create":
		p = new(mcp.ElicitParams)
	case "sampling/createMessage":
		p = new(mcp.CreateMessageWithToolsParams)
	default:
		p = new(mcp.ListRootsParams)
	}
	return json.Unmarshal(params, p) == nil
}

// lineBuffered reports whether a whole line is read already, so that
// reading it cannot wait.
func (r *rawLines) lineBuffered() bool {
	if r.br == nil || r.br.Buffered() == 0 {
		return false
	}
	buf, _ := r.br.Peek(r.br.Buffered())
	return bytes.IndexByte(buf, '\n') >= 0
}

// refuse fails the request whose answer was too large, and returns what
// the SDK reads in its place: an error response to its own request, or
// nothing.
func (r *rawLines) refuse(scan *idScan) []byte {
	id := scan.ID()
	if r.tooLarge != nil {
		r.tooLarge(id, scan.method)
	}
	switch {
	case id == nil:
		return nil // a notification, or no id to answer to: only dropped
	case scan.method:
		// The server's own request: it waits for an answer.
		if r.raw != nil {
			_, _ = r.raw.w.Write(refusedRequest(id, r.max))
		}
		return nil
	}
	if key, ok := rawcall.String(id); ok && strings.HasPrefix(key, rawIDPrefix) {
		if r.raw != nil {
			r.raw.refuse(key)
		}
		return nil
	}
	return tooLargeResponse(id, r.max)
}

// readLine reads up to and including the next newline (or the end); the
// slice is valid until the next call. A line whose message is longer than
// max is read to its end but not kept: readLine returns nothing and sets
// r.over to what it learned of the message.
func (r *rawLines) readLine() ([]byte, error) {
	if r.br == nil {
		r.br = bufio.NewReaderSize(r.src, 64<<10)
	}
	line, err := r.br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		if r.max > 0 && len(bytes.TrimRight(line, "\r\n")) > r.max {
			r.over = &idScan{}
			r.over.feed(line)
			return nil, err
		}
		return line, err
	}
	if cap(r.long) > 1<<20 {
		r.long = nil // one huge message does not pin its buffer for the connection's life
	}
	r.long = append(r.long[:0], line...)
	for errors.Is(err, bufio.ErrBufferFull) {
		line, err = r.br.ReadSlice('\n')
		// +2: the line's end ("\r\n") is not part of the message.
		if r.max > 0 && len(r.long)+len(line) > r.max+2 {
			return nil, r.skipLong(line, err)
		}
		r.long = append(r.long, line...)
	}
	if r.max > 0 && len(bytes.TrimRight(r.long, "\r\n")) > r.max {
		return nil, r.skipLong(nil, err)
	}
	return r.long, err
}

// skipLong reads past the rest of a line too long to keep, of which r.long
// holds the start and line the last chunk read, scanning it for its id.
func (r *rawLines) skipLong(line []byte, err error) error {
	scan := &idScan{}
	scan.feed(r.long)
	r.long = r.long[:0]
	if cap(r.long) > 1<<20 {
		r.long = nil
	}
	scan.feed(line)
	for errors.Is(err, bufio.ErrBufferFull) {
		line, err = r.br.ReadSlice('\n')
		scan.feed(line)
	}
	r.over = scan
	return err
}

// take hands a response to a fast-path call to its caller, and reports
// whether the line held one (the answer of a withdrawn call included). rest
// is what the SDK still has to read of a line that was taken: the other
// messages of a batch, as a batch line, or nothing. The caller may hold
// its answer back for answers (rawcall.Call.Answers).
func (r *rawConn) take(line []byte, answers *rawcall.Batch) (rest []byte, took bool) {
	if !bytes.Contains(line, []byte(rawIDPrefix)) && !bytes.Contains(line, []byte(`\u`)) {
		return nil, false // no id of ours, however written: the SDK's alone
	}
	if t := bytes.TrimLeft(line, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		return r.takeBatch(t, answers)
	}
	return nil, r.takeOne(line, answers)
}

// takeOne is take of a line that holds one message.
func (r *rawConn) takeOne(line []byte, answers *rawcall.Batch) bool {
	// An id may be written with escapes ("toolfold\u002draw-1"): the
	// typed path reads it as the same string, so this one must too.
	if !bytes.Contains(line, []byte(rawIDPrefix)) && !bytes.Contains(line, []byte(`\u`)) {
		return false
	}
	var id, result, rpcErr []byte
	if rawcall.Members(line, func(k, v []byte) bool {
		switch string(k) {
		case "id":
			id = v
		case "result":
			result = v
		case "error":
			rpcErr = v
		case "method":
			id = nil // a request or notification of the server's
			return false
		}
		return true
	}) != nil {
		return false
	}
	key, ok := rawcall.String(id)
	if !ok && len(id) > 0 && id[0] == '"' {
		// Its own variable: &key would move key to the heap on every
		// answer, where only an escaped id needs decoding.
		var unescaped string
		if json.Unmarshal(id, &unescaped) == nil {
			key, ok = unescaped, true
		}
	}
	if !ok || !strings.HasPrefix(key, rawIDPrefix) {
		return false
	}
	r.mu.Lock()
	p := r.pending[key]
	delete(r.pending, key)
	r.mu.Unlock()
	if p != nil && p.claim() {
		p.answered(result, rpcErr, answers)
	}
	// Otherwise the answer of a call withdrawn (cancelled, timed out):
	// nobody waits for it.
	return true
}

// takeBatch takes the fast-path answers of a JSON-RPC batch line, as the
// SDK would read each of its messages; the rest (answers and requests of
// the SDK's) go on to it as a smaller batch. A line that is not a batch of
// messages is left whole to the SDK, which answers it as it would.
func (r *rawConn) takeBatch(line []byte, answers *rawcall.Batch) (rest []byte, took bool) {
	var elems []json.RawMessage
	if json.Unmarshal(line, &elems) != nil || len(elems) == 0 {
		return nil, false
	}
	var others []json.RawMessage
	for _, e := range elems {
		if r.isFastAnswer(e) {
			r.takeOne(e, answers)
			took = true
		} else {
			others = append(others, e)
		}
	}
	if !took || len(others) == 0 {
		return nil, took
	}
	rest, err := json.Marshal(others)
	if err != nil {
		return nil, true // cannot happen: each element was read as JSON
	}
	return append(rest, '\n'), true
}

// isFastAnswer reports whether one message is the answer of a fast-path
// call, without taking it.
func (r *rawConn) isFastAnswer(msg []byte) bool {
	var m struct {
		ID     *string          `json:"id"`
		Method *json.RawMessage `json:"method"`
	}
	return json.Unmarshal(msg, &m) == nil && m.Method == nil && m.ID != nil && strings.HasPrefix(*m.ID, rawIDPrefix)
}

// refuse fails the fast-path call whose answer was too large to read.
func (r *rawConn) refuse(key string) {
	r.fail(key, func(p *rawPending) error { return p.c.s.tooLargeError(p.what(), nil) })
}

// fail ends the fast-path call of key, if it is still pending, with the
// error why makes for it: its answer came and could not be read.
func (r *rawConn) fail(key string, why func(*rawPending) error) {
	r.mu.Lock()
	p := r.pending[key]
	delete(r.pending, key)
	r.mu.Unlock()
	if p != nil && p.claim() {
		p.release()
		p.call.Finish(nil, why(p))
	}
}

// add registers a call, unless the connection is over, and makes sure the
// timer will end it at its deadline.
func (r *rawConn) add(p *rawPending) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return false
	}
	if r.pending == nil {
		r.pending = map[string]*rawPending{}
	}
	r.pending[p.id] = p
	if r.next.IsZero() || p.deadline.Before(r.next) {
		r.arm(p.deadline)
	}
	return true
}

// arm sets the timer for deadline; r.mu is held.
func (r *rawConn) arm(deadline time.Time) {
	r.next = deadline
	if r.timer == nil {
		r.timer = time.AfterFunc(time.Until(deadline), r.expire)
		return
	}
	r.timer.Reset(time.Until(deadline))
}

// expire ends the calls whose deadline has passed, as the server's timeout,
// and arms the timer for the earliest deadline left.
func (r *rawConn) expire() {
	now := time.Now()
	var late []*rawPending
	r.mu.Lock()
	r.next = time.Time{}
	var next time.Time
	for id, p := range r.pending {
		if !p.deadline.After(now) {
			late = append(late, p)
			delete(r.pending, id)
		} else if next.IsZero() || p.deadline.Before(next) {
			next = p.deadline
		}
	}
	if !next.IsZero() && !r.ended {
		r.arm(next)
	}
	r.mu.Unlock()
	for _, p := range late {
		if p.claim() {
			s := p.c.s
			p.withdraw("toolfold's timeout for the server")
			p.call.Finish(nil, newError(ErrTimeout, nil, "upstream %q did not answer %s within %s", s.name, p.what(), humanDuration(s.timeout)))
		}
	}
}

func (r *rawConn) drop(id string) {
	r.mu.Lock()
	delete(r.pending, id)
	r.mu.Unlock()
}

// end fails every call in flight with what err says: the connection is
// over (watch calls it once the end is known and explained).
func (r *rawConn) end(err func(tool string) error) {
	r.mu.Lock()
	r.ended = true
	pending := r.pending
	r.pending = nil
	if r.timer != nil {
		r.timer.Stop()
	}
	r.next = time.Time{}
	r.mu.Unlock()
	for _, p := range pending {
		if p.claim() {
			p.release()
			p.call.Finish(nil, err(p.tool))
		}
	}
}

// ForwardRaw sends a tools/call to a running stdio server as bytes (the
// fast path; see package rawcall). It never starts a server or waits: it
// reports false, having done nothing, when the server is not connected and
// ready, is not a stdio server, or the tool is excluded, and the caller
// then takes the typed path (CallTool), which starts it or explains.
// Errors given to Done are worded like CallTool's.
func (m *Manager) ForwardRaw(server, tool string, call *rawcall.Call) (cancel func(), ok bool) {
	s, err := m.lookup(server)
	if err != nil || !s.allowed(tool) || m.isClosed() {
		return nil, false
	}
	s.mu.Lock()
	c := s.conn
	if c == nil || c.raw == nil || c.retiring || c.isEnded() {
		s.mu.Unlock()
		return nil, false
	}
	c.active++
	s.mu.Unlock()

	p := &rawPending{c: c, tool: tool, call: call, deadline: time.Now().Add(s.timeout)}
	p.reg = inflightCall{what: "tools/call", downstream: call.Downstream}
	p.id = c.calls.add(&p.reg, rawIDPrefix)
	// The request is made before the call is registered: once it is, the
	// answer (or the timer) may end it at any moment.
	p.req = rawRequest(p.id, tool, call)
	if !c.raw.add(p) {
		p.release()
		return nil, false
	}
	if b := call.Batch; b != nil {
		// The caller has more calls in hand: this request goes with
		// theirs, when the caller ends the batch (or anything else is
		// written first).
		c.raw.w.hold(p.req, p)
		b.Hold(c.raw.w)
		return p.cancel, true
	}
	_, err = c.raw.w.Write(p.req)
	if err != nil {
		if !p.claim() {
			return func() {}, true // ended meanwhile: Done was called
		}
		c.raw.drop(p.id)
		p.release()
		return nil, false // the typed path finds out what happened, and says so
	}
	return p.cancel, true
}

// cancel withdraws the call for the client that cancelled it.
func (p *rawPending) cancel() {
	if p.claim() {
		p.withdraw("the client cancelled the request")
	}
}

// what names the request, as CallTool's errors do.
func (p *rawPending) what() string { return fmt.Sprintf("tools/call %q", p.tool) }

// release gives back what the call held: its entry among the calls in
// flight and its lease. (Its deadline goes with its entry in the pending
// calls, which whoever claimed it has removed.)
func (p *rawPending) release() {
	p.c.calls.remove(p.id)
	p.c.s.release(p.c)
}

// withdraw ends a call before its answer: the server is told, as the SDK
// tells it of a cancelled request, and its answer will be dropped.
func (p *rawPending) withdraw(reason string) {
	p.c.raw.drop(p.id)
	p.release()
	msg, _ := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", "notifications/cancelled", map[string]string{"requestId": p.id, "reason": reason}})
	_, _ = p.c.raw.w.Write(append(msg, '\n'))
}

// answered hands the server's response to the caller: result or rpcErr
// are the response's members, valid only until answered returns. A result
// that asks the client for input (a multi-round-trip server's second round
// comes back as a result carrying inputRequests) is answered as CallTool
// answers it, off the reading goroutine; any other answer is handed over
// on it, and may be held for answers.
func (p *rawPending) answered(result, rpcErr []byte, answers *rawcall.Batch) {
	s := p.c.s
	p.call.Answers = answers
	if rpcErr != nil || result == nil {
		p.release()
		wire := &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the response has neither result nor error"}
		if rpcErr != nil {
			wire = &jsonrpc.Error{}
			if err := json.Unmarshal(rpcErr, wire); err != nil {
				wire = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the error cannot be read: " + err.Error()}
			}
			// The error goes to the client as the server worded it, so it
			// is masked here as the typed path masks it (a server may quote
			// a token it was given).
			wire.Message = s.secrets.String(wire.Message)
			if len(wire.Data) > 0 {
				if masked := s.secrets.String(string(wire.Data)); masked != string(wire.Data) {
					wire.Data = json.RawMessage(masked)
				}
			}
		}
		p.call.Finish(nil, s.errorf(nil, wire, "upstream %q answered %s with an error: %s", s.name, p.what(), wire.Message))
		return
	}
	if !bytes.Contains(result, []byte(`"inputRequests"`)) && !bytes.Contains(result, []byte(`"input_required"`)) {
		p.release()
		p.call.Finish(result, nil)
		return
	}
	var first mcp.CallToolResult
	if err := json.Unmarshal(result, &first); err != nil {
		p.release()
		p.call.Finish(result, nil) // not a result the typed path could read either: the client judges
		return
	}
	if _, _, asks := questionsOf(&first); !asks {
		p.release()
		p.call.Finish(result, nil)
		return
	}
	p.call.Answers = nil // answered later, from another goroutine
	p.c.s.m.goBackground(func() { p.askAndRetry(&first) })
}

// askAndRetry answers the questions of a result that asks, through the
// call's Downstream, and sends the call again with the answers, as CallTool
// does, until the server gives its result.
func (p *rawPending) askAndRetry(first *mcp.CallToolResult) {
	defer p.release()
	s, c := p.c.s, p.c
	// The arguments as sent: the caller's are gone once ForwardRaw returned.
	args := json.RawMessage(rawcall.Member(rawcall.Member(p.req, "params"), "arguments"))
	params := &mcp.CallToolParams{Name: p.tool, Arguments: args,
		Meta: mcp.Meta{mcp.MetaKeyClientCapabilities: capabilitiesMeta(p.call.Capabilities)}}
	ctx := context.Background()
	callCtx, cancel := s.requestContext(ctx)
	defer cancel()
	round := 0
	res, err := withInput(ctx, callCtx, s, c, p.what(), p.call.Downstream,
		func(ctx context.Context) (*mcp.CallToolResult, error) {
			round++
			if round == 1 {
				return first, nil
			}
			return c.session.CallTool(ctx, params)
		},
		func(responses mcp.InputResponseMap, state string) {
			params.InputResponses, params.RequestState = responses, state
		})
	if err != nil {
		p.call.Finish(nil, err)
		return
	}
	raw, err := json.Marshal(res)
	if err != nil {
		p.call.Finish(nil, fmt.Errorf("the result of %s from upstream %q cannot be encoded: %w", p.what(), s.name, err))
		return
	}
	p.call.Finish(raw, nil)
}

// rawRequest is the tools/call message of a fast-path call, newline
// included.
func rawRequest(id, tool string, call *rawcall.Call) []byte {
	args := bytes.TrimSpace(call.Arguments)
	b := make([]byte, 0, len(args)+len(tool)+len(id)+len(call.Meta)+192)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = appendString(b, id)
	b = append(b, `,"method":"tools/call","params":`...)
	b = appendParams(b, tool, call)
	return append(b, "}\n"...)
}

// appendParams appends the params of a fast-path call: the server's own
// tool name, the client's arguments as they came ({} for none: servers
// refuse null), and the client's capabilities and the call's trace context
// (call.Meta) as _meta, as the typed path sends them (see the gateway's assembly: they say what this client can
// answer, which the connection's own capabilities cannot).
func appendParams(b []byte, tool string, call *rawcall.Call) []byte {
	args := bytes.TrimSpace(call.Arguments)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	b = append(b, `{"_meta":{"`...)
	b = append(b, mcp.MetaKeyClientCapabilities...)
	b = append(b, `":`...)
	b = appendCapabilities(b, call.Capabilities)
	if len(call.Meta) > 0 { // the trace context, from the gateway
		b = append(b, ',')
		b = append(b, call.Meta...)
	}
	b = append(b, `},"name":`...)
	b = appendString(b, tool)
	b = append(b, `,"arguments":`...)
	b = append(b, args...)
	return append(b, '}')
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			quoted, _ := json.Marshal(s)
			return append(b, quoted...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func appendCapabilities(b []byte, c rawcall.Capabilities) []byte {
	b = append(b, '{')
	sep := ""
	if c.Sampling {
		b = append(b, `"sampling":{}`...)
		sep = ","
	}
	if c.FormElicitation {
		b = append(b, sep...)
		b = append(b, `"elicitation":{"form":{}}`...)
		sep = ","
	}
	if c.Roots {
		b = append(b, sep...)
		b = append(b, `"roots":{}`...)
	}
	return append(b, '}')
}

func capabilitiesMeta(c rawcall.Capabilities) map[string]any {
	var out map[string]any
	_ = json.Unmarshal(appendCapabilities(nil, c), &out)
	return out
}
