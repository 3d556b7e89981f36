package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/jsondepth"
	"github.com/toolfold/toolfold/internal/rawcall"
)

// The SDK ends a stdio session on the first frame it cannot decode, with a
// bare error. A client's one bad line must not cost it the session, so the
// gateway reads stdin itself, answers each malformed frame with the
// JSON-RPC error it calls for, and hands the SDK only frames it accepts.

// JSON-RPC 2.0 error codes the screen answers with.
const (
	codeParseError     = -32700 // the line could not be parsed
	codeInvalidRequest = -32600 // it parsed, but is no valid message here
	codeInternalError  = -32603 // the SDK's own errors that carry no code
)

// Limits of one frame; both match the SDK's, so that no frame the screen
// passes is one the SDK refuses.
const (
	// maxFrameBytes is the longest line read, newline excluded.
	maxFrameBytes = mcp.DefaultMaxLineLength
	// maxFrameDepth is the deepest nesting of objects and arrays accepted.
	maxFrameDepth = 1000
)

// frame is a line the screen accepts, with what the screen needs of it.
type frame struct {
	// line is the message, without its newline.
	line []byte
	// id keys a request's id ("" for notifications and responses).
	id string
	// method is a request's or notification's method ("" for responses).
	method string
	// params are a request's or notification's params.
	params json.RawMessage
	// rawID is a request's id as sent, for answers.
	rawID json.RawMessage
	// msg is the message as the SDK decodes it: what the SDK's session is
	// handed (sdkshim.DecodedConn), so that it does not decode the line
	// again.
	msg jsonrpc.Message
}

// frameError is the answer to a frame the screen refuses.
type frameError struct {
	code int64
	// id is the request's id as JSON, or null when it cannot be read.
	id      json.RawMessage
	message string
}

func (e *frameError) Error() string { return e.message }

// checkFrame decides whether one line (without its newline) is a JSON-RPC
// message the SDK can take. It knows nothing of the session; see
// stdioScreen for the checks that do.
func checkFrame(line []byte) (*frame, *frameError) {
	if len(line) > maxFrameBytes {
		return nil, parseError(fmt.Sprintf("the message is %d bytes long, more than the %d (16 MiB) toolfold reads; send smaller messages, one per line", len(line), maxFrameBytes))
	}
	if i := bytes.IndexByte(line, 0); i >= 0 {
		return nil, parseError(fmt.Sprintf("the message holds a NUL byte at offset %d, which JSON does not allow; send UTF-8 JSON, one message per line", i))
	}
	if !jsondepth.Within(line, maxFrameDepth) {
		return nil, parseError(fmt.Sprintf("the message nests objects and arrays more than %d deep; flatten it", maxFrameDepth))
	}
	if !json.Valid(line) {
		return nil, parseError("the message is not valid JSON; send one JSON-RPC 2.0 object per line")
	}
	switch first := firstByte(line); first {
	case '{':
	case '[':
		return nil, invalidRequest(nil, "batches (JSON arrays) are not accepted: MCP since 2025-06-18 sends one JSON-RPC message per line")
	default:
		return nil, invalidRequest(nil, "a JSON-RPC message is an object with \"jsonrpc\": \"2.0\", not a bare JSON value")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil {
		return nil, parseError("the message is not valid JSON; send one JSON-RPC 2.0 object per line")
	}
	id := readableID(fields["id"])
	if v, ok := fields["jsonrpc"]; !ok || string(v) != `"2.0"` {
		return nil, invalidRequest(id, `the message must carry "jsonrpc": "2.0"`)
	}
	if raw, ok := fields["id"]; ok && id == nil && string(raw) != "null" {
		return nil, invalidRequest(nil, "the id must be a string or an integer")
	}
	if m, ok := fields["method"]; ok && (len(m) == 0 || m[0] != '"') {
		return nil, invalidRequest(id, "the method must be a string")
	}
	var msg jsonrpc.Message
	if req, ok := decodeRequest(fields); ok {
		msg = req
	} else {
		var err error
		if msg, err = jsonrpc.DecodeMessage(line); err != nil {
			// The SDK's own rules, past the ones spelled out above.
			return nil, invalidRequest(id, fmt.Sprintf("the message is not a valid JSON-RPC 2.0 message: %v", err))
		}
	}
	f := &frame{line: line, msg: msg}
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if _, ok := fields["id"]; ok && !m.ID.IsValid() {
			return nil, invalidRequest(nil, "a request's id must be a string or an integer, not null; leave the id out of a notification")
		}
		f.method, f.params = m.Method, m.Params
		if m.ID.IsValid() {
			f.id, f.rawID = idKey(m.ID), id
		}
	case *jsonrpc.Response:
		if _, hasResult := fields["result"]; hasResult == (m.Error != nil) {
			return nil, invalidRequest(id, `a response carries exactly one of "result" and "error"`)
		}
	}
	return f, nil
}

// decodeRequest builds the request jsonrpc.DecodeMessage decodes from a
// line whose members are fields (its "jsonrpc" checked already), without
// the SDK's decoder, whose buffer (64 KB a line) was most of what a
// typed-path message allocated. ok is false for a response, and where it
// cannot be sure to agree with the SDK (an escape or a byte outside
// printable ASCII in the method or a string id, an id the SDK refuses):
// the SDK decodes the line then. FuzzCheckFrame holds the two to the same
// message.
func decodeRequest(fields map[string]json.RawMessage) (*jsonrpc.Request, bool) {
	method, ok := plainString(fields["method"])
	if !ok {
		return nil, false
	}
	var id jsonrpc.ID
	if raw, has := fields["id"]; has {
		var v any
		if len(raw) > 0 && raw[0] == '"' {
			s, ok := plainString(raw)
			if !ok {
				return nil, false
			}
			v = s
		} else if json.Unmarshal(raw, &v) != nil {
			return nil, false
		}
		var err error
		if id, err = jsonrpc.MakeID(v); err != nil {
			return nil, false
		}
	}
	return &jsonrpc.Request{ID: id, Method: method, Params: fields["params"]}, true
}

// plainString returns the text of a JSON string without escapes, of
// printable ASCII only; ok is false for anything else.
func plainString(raw json.RawMessage) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	text := raw[1 : len(raw)-1]
	for _, c := range text {
		if c == '\\' || c == '"' || c < 0x20 || c >= 0x7f {
			return "", false
		}
	}
	return string(text), true
}

func parseError(msg string) *frameError {
	return &frameError{code: codeParseError, id: json.RawMessage("null"), message: "Parse error: " + msg}
}

func invalidRequest(id json.RawMessage, msg string) *frameError {
	if id == nil {
		id = json.RawMessage("null")
	}
	return &frameError{code: codeInvalidRequest, id: id, message: "Invalid Request: " + msg}
}

// readableID returns a string or integer id as it was sent, or nil.
func readableID(raw json.RawMessage) json.RawMessage {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return nil
	}
	switch n := v.(type) {
	case string:
		return raw
	case float64:
		if n == float64(int64(n)) {
			return raw
		}
	}
	return nil
}

// idKey names an id in the in-flight set: 1 and "1" are different ids.
func idKey(id jsonrpc.ID) string {
	return fmt.Sprintf("%T:%v", id.Raw(), id.Raw())
}

func firstByte(b []byte) byte {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c
	}
	return 0
}

// preInitialize are the requests the SDK serves before initialize.
var preInitialize = map[string]bool{
	"initialize": true, "ping": true, "logging/setLevel": true,
	"resources/subscribe": true, "resources/unsubscribe": true,
}

// stdioScreen reads a client's stdin line by line and passes on what the
// SDK can take; it answers everything else itself, through the same writer
// as the SDK, and logs one line for each.
type stdioScreen struct {
	in  *bufio.Reader
	out *stdioWriter
	log *slog.Logger
	buf []byte

	mu sync.Mutex
	// inflight holds the ids of the client's requests not yet answered;
	// method remembers what each asked, for initialize.
	inflight map[string]string
	// emptied, if set, is closed when inflight next becomes empty (drain).
	emptied chan struct{}
	// initialized is set once an initialize request has gone through
	// (and reset if it failed), so that requests before it get a proper
	// JSON-RPC error rather than the SDK's code 0.
	initialized bool

	// fast, if set, is offered each line first: the fast path of
	// tools/call (raw.go) takes a line it can carry exactly, having
	// admitted its id with admitFast, and the screen reads on. It checks
	// what it takes itself, so a taken line costs no decoding here.
	fast func(line []byte) bool
	// batch lets the sources of the calls the fast path takes hold their
	// requests back while more lines are read already (rawcall.Batch):
	// it ends before a read that may wait, and before any line goes
	// another way. Only next's goroutine uses it.
	batch rawcall.Batch
}

// admitFast admits a request the fast path takes, under the same rules as
// admit: an id not in flight, a session past initialize unless the request
// carries its protocol version (perRequest).
func (s *stdioScreen) admitFast(key string, perRequest bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, busy := s.inflight[key]; busy || (!s.initialized && !perRequest) {
		return false
	}
	s.inflight[key] = "tools/call"
	return true
}

func newStdioScreen(in io.Reader, out io.Writer, log *slog.Logger) *stdioScreen {
	s := &stdioScreen{in: bufio.NewReaderSize(in, 64<<10), log: log, inflight: map[string]string{}}
	s.out = &stdioWriter{w: out, screen: s}
	return s
}

// next returns the next frame to hand to the SDK, answering the ones before
// it that it refuses. Its error is the reader's (io.EOF at the end), or the
// writer's if an answer could not be written. The frame's line is valid
// until the next call; its msg is its own.
func (s *stdioScreen) next() (*frame, error) {
	for {
		if !s.lineBuffered() {
			s.batch.End()
		}
		line, tooLong, err := s.readLine()
		if s.fast != nil && !tooLong && len(line) > 0 && s.fast(line) {
			if err != nil {
				s.batch.End()
				return nil, err
			}
			continue
		}
		s.batch.End()
		if len(bytes.TrimSpace(line)) == 0 && !tooLong {
			if err != nil {
				return nil, err
			}
			continue // a blank line
		}
		var f *frame
		var ferr *frameError
		if tooLong {
			ferr = parseError(fmt.Sprintf("the message is longer than the %d bytes (16 MiB) toolfold reads; send smaller messages, one per line", maxFrameBytes))
		} else if f, ferr = checkFrame(line); ferr == nil {
			ferr = s.admit(f)
		}
		if ferr == nil {
			return f, nil
		}
		s.log.Warn("answered a malformed message from the stdio client with an error; the session goes on", "code", ferr.code, "problem", ferr.message, "bytes", len(line))
		if werr := s.out.answer(ferr); werr != nil {
			return nil, werr
		}
		if err != nil {
			return nil, err
		}
	}
}

// lineBuffered reports whether a whole line is read already, so that
// reading it cannot wait.
func (s *stdioScreen) lineBuffered() bool {
	n := s.in.Buffered()
	if n == 0 {
		return false
	}
	buf, _ := s.in.Peek(n)
	return bytes.IndexByte(buf, '\n') >= 0
}

// readLine reads the next line without its line ending. A line longer than
// maxFrameBytes is read to its end and dropped: tooLong is set and line is
// empty. The returned slice is valid until the next call.
func (s *stdioScreen) readLine() (line []byte, tooLong bool, err error) {
	s.buf = s.buf[:0]
	for {
		chunk, rerr := s.in.ReadSlice('\n')
		if !tooLong {
			if len(s.buf)+len(chunk) > maxFrameBytes+2 { // room for "\r\n"
				tooLong, s.buf = true, s.buf[:0]
			} else {
				s.buf = append(s.buf, chunk...)
			}
		}
		if errors.Is(rerr, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			return nil, true, rerr
		}
		return bytes.TrimRight(s.buf, "\r\n"), false, rerr
	}
}

// admit applies the checks that depend on the session: a request id still
// in flight, a request before initialize. It records what it admits.
func (s *stdioScreen) admit(f *frame) *frameError {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.method == "notifications/cancelled" {
		// A cancelled request may never be answered: its id is free again.
		var p struct {
			RequestID any `json:"requestId"`
		}
		if json.Unmarshal(f.params, &p) == nil {
			if id, err := jsonrpc.MakeID(p.RequestID); err == nil && id.IsValid() {
				delete(s.inflight, idKey(id))
			}
		}
	}
	if f.id == "" {
		return nil
	}
	id := f.rawID
	if _, busy := s.inflight[f.id]; busy {
		return invalidRequest(id, fmt.Sprintf("the id %s belongs to a request still in flight; give every request its own id", id))
	}
	if !s.initialized && !preInitialize[f.method] && !usesPerRequestProtocol(f.params) {
		return invalidRequest(id, fmt.Sprintf("%q came before initialize; send initialize first and wait for its result", f.method))
	}
	method := f.method
	if method == "initialize" {
		if s.initialized {
			// A second initialize fails in the SDK; that failure must
			// not undo the first.
			method = "initialize again"
		}
		s.initialized = true
	}
	s.inflight[f.id] = method
	return nil
}

// answered notes the SDK's response to a request: its id is free again,
// and a failed initialize leaves the session uninitialized.
func (s *stdioScreen) answered(key string, failed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if method, ok := s.inflight[key]; ok {
		delete(s.inflight, key)
		if method == "initialize" && failed {
			s.initialized = false
		}
	}
	if len(s.inflight) == 0 && s.emptied != nil {
		close(s.emptied)
		s.emptied = nil
	}
}

// drain waits until every request read has been answered, or until ctx
// ends or stop is closed (the session ended some other way).
func (s *stdioScreen) drain(ctx context.Context, stop <-chan struct{}) {
	s.mu.Lock()
	if len(s.inflight) == 0 {
		s.mu.Unlock()
		return
	}
	if s.emptied == nil {
		s.emptied = make(chan struct{})
	}
	emptied := s.emptied
	s.mu.Unlock()
	select {
	case <-emptied:
	case <-ctx.Done():
	case <-stop:
	}
}

// usesPerRequestProtocol reports whether a request carries its protocol
// version in _meta (2026-07-28), which needs no initialize.
func usesPerRequestProtocol(params json.RawMessage) bool {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	_, ok := p.Meta[mcp.MetaKeyProtocolVersion]
	return ok
}

// stdioWriter is the client's stdout, shared by the SDK and the screen. The
// SDK writes one whole message per Write; the lock keeps the screen's
// answers from landing inside one. The fast path's answers may be held
// back for their batch (holdAnswer, Flush) and go out with whatever is
// written next.
type stdioWriter struct {
	mu     sync.Mutex
	w      io.Writer
	screen *stdioScreen
	held   []byte // answers held back, in order
	// budget counts the answers waiting here (budget.go); nil: none.
	budget *answerBudget
}

func (w *stdioWriter) Write(p []byte) (int, error) {
	// Counted before waiting for the lock: the answers queued behind a
	// client that does not read are what the budget bounds.
	out, n := w.budget.admit(w.inspect(p))
	defer w.budget.release(n)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.writeLocked(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// writeLocked writes p after what is held, in one write; w.mu is held.
func (w *stdioWriter) writeLocked(p []byte) error {
	if len(w.held) == 0 {
		_, err := w.w.Write(p)
		return err
	}
	w.held = append(w.held, p...)
	return w.flushLocked()
}

func (w *stdioWriter) flushLocked() error {
	if len(w.held) == 0 {
		return nil
	}
	_, err := w.w.Write(w.held)
	if cap(w.held) > 1<<20 {
		w.held = nil // one huge batch does not pin its buffer for the session's life
	} else {
		w.held = w.held[:0]
	}
	return err
}

// writeAnswer writes the fast path's answer to a request (raw.go), whose
// key it frees as inspect frees the SDK's: the fast path knows what it
// wrote, so nothing is decoded again.
func (w *stdioWriter) writeAnswer(p []byte, key string) error {
	p, n := w.budget.admit(p)
	defer w.budget.release(n)
	w.mu.Lock()
	err := w.writeLocked(p)
	w.mu.Unlock()
	w.screen.answered(key, false)
	return err
}

// holdAnswer is writeAnswer for an answer that waits for its batch's end
// (Flush). Its key is freed now: the client cannot have seen it.
func (w *stdioWriter) holdAnswer(p []byte, key string) {
	w.mu.Lock()
	w.held = append(w.held, p...)
	w.mu.Unlock()
	w.screen.answered(key, false)
}

// Flush writes the answers held (rawcall.Flusher). A client that cannot be
// written to has gone, which the reading side finds out: the failure is
// only logged, after the batch ends.
func (w *stdioWriter) Flush() func() {
	w.mu.Lock()
	err := w.flushLocked()
	w.mu.Unlock()
	if err == nil {
		return nil
	}
	return func() { w.screen.log.Debug("could not write tools/call answers to the client", "err", err) }
}

// inspect reads a message the SDK sends: a response frees its request's
// id; an error without a code (the SDK's plain Go errors, code 0, which
// JSON-RPC does not define) gets the internal error code.
//
// It reads a message only as far as it must: the SDK writes "jsonrpc",
// "id", then "method" or "result" or "error", so a result's bytes (a
// 29 MB tools/list) are never walked; only an error, small, is decoded.
func (w *stdioWriter) inspect(p []byte) []byte {
	var rawID, rawErr []byte
	stopped, _ := rawcall.Head(p, func(k []byte) bool {
		// A request of the gateway's own, or a result once the id is in:
		// nothing after matters.
		return string(k) == "method" || string(k) == "result" && rawID != nil
	}, func(k, v []byte) {
		switch string(k) {
		case "id":
			rawID = v
		case "error":
			rawErr = v
		}
	})
	if string(stopped) == "method" || rawID == nil {
		return p
	}
	var idValue any // a number or a string: a few bytes to decode
	if json.Unmarshal(rawID, &idValue) != nil || idValue == nil {
		return p
	}
	id, err := jsonrpc.MakeID(idValue)
	if err != nil {
		return p
	}
	w.screen.answered(idKey(id), rawErr != nil)
	if rawErr == nil {
		return p
	}
	var e map[string]any
	if json.Unmarshal(rawErr, &e) != nil {
		return p
	}
	if code, _ := e["code"].(float64); code != 0 {
		return p
	}
	e["code"] = codeInternalError
	var full map[string]json.RawMessage
	if json.Unmarshal(p, &full) != nil {
		return p
	}
	full["error"], _ = json.Marshal(e)
	fixed, err := json.Marshal(full)
	if err != nil {
		return p
	}
	return append(fixed, '\n')
}

// answer writes the screen's own error response.
func (w *stdioWriter) answer(e *frameError) error {
	msg, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: e.id, Error: struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}{e.code, e.message}})
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writeLocked(append(msg, '\n'))
}
