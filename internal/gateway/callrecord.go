package gateway

import (
	"context"
	"errors"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callRecord is what one typed tools/call did, for its audit line, its
// metric and its spans: whether it reached a tool, which source served it,
// the wire tool a meta-tool (call_tool) called on the caller's behalf, and
// how the source's handler ended. It is a value: once the call's ticket
// holds it, nothing writes it again.
type callRecord struct {
	reached bool
	source  string
	tool    string
	// failed classifies what kept the source from answering (see
	// NoteFailure); empty when it answered.
	failed string
	// res and err are what the source's handler returned, for the client
	// span's outcome.
	res *mcp.CallToolResult
	err error
}

// callRecorder is where one execution of a call writes its record while it
// runs: the handlers below the gateway (run, call_tool, a source's
// NoteFailure) reach it only through the context. Each execution has its
// own (the ticket's for a call answered in its request, the pending call's
// for one asked for input through results, see input.go), so a call that
// outlives its first request never writes into a record another request
// reads. seal ends the writing: what a late writer says after the ticket
// took the record is dropped, not raced.
type callRecorder struct {
	mu     sync.Mutex
	rec    callRecord
	sealed bool
}

// update applies f to the record, unless it is sealed.
func (r *callRecorder) update(f func(*callRecord)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.sealed {
		f(&r.rec)
	}
}

// snapshot is a copy of what the record holds now.
func (r *callRecorder) snapshot() callRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rec
}

// seal ends the writing and returns the record, the same value on every
// call.
func (r *callRecorder) seal() callRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sealed = true
	return r.rec
}

// settle seals the record as rec: what a call that ran elsewhere (a
// detached one) recorded becomes this one's.
func (r *callRecorder) settle(rec callRecord) callRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.sealed {
		r.rec, r.sealed = rec, true
	}
	return r.rec
}

type callRecorderKey struct{}

// withRecorder returns ctx with r as the recorder of the call running under
// it.
func withRecorder(ctx context.Context, r *callRecorder) context.Context {
	return context.WithValue(ctx, callRecorderKey{}, r)
}

// recorderOf is the recorder of the call running under ctx, or nil.
func recorderOf(ctx context.Context) *callRecorder {
	r, _ := ctx.Value(callRecorderKey{}).(*callRecorder)
	return r
}

// record applies f to the record of the call running under ctx, if any.
func record(ctx context.Context, f func(*callRecord)) {
	if r := recorderOf(ctx); r != nil {
		r.update(f)
	}
}

func noteTool(ctx context.Context, tool string) {
	record(ctx, func(c *callRecord) { c.tool = tool })
}

func noteSource(ctx context.Context, source string) {
	record(ctx, func(c *callRecord) { c.reached, c.source = true, source })
}

func noteAnswer(ctx context.Context, res *mcp.CallToolResult, err error) {
	record(ctx, func(c *callRecord) { c.res, c.err = res, err })
}

// NoteFailure tells the gateway why the source of the call in ctx could
// not answer it, when the source turns that into a tool error of its own:
// the metrics then count a crash or a timeout apart from a tool's failure.
// err classifies itself with an Outcome() string method (package upstream's
// errors do); any other error changes nothing.
func NoteFailure(ctx context.Context, err error) {
	if r := recorderOf(ctx); r != nil {
		f := failureOutcome(err)
		r.update(func(c *callRecord) { c.failed = f })
	}
}

// sourceOutcome is how the source's handler ended, for its client span:
// what the running call has recorded so far.
func sourceOutcome(ctx context.Context) string {
	r := recorderOf(ctx)
	if r == nil {
		return "ok"
	}
	n := r.snapshot()
	switch {
	case n.err != nil:
		if ctx.Err() != nil {
			return "cancelled"
		}
		return "error"
	case n.failed != "":
		return n.failed
	case n.res != nil && n.res.IsError:
		return "tool_error"
	}
	return "ok"
}

// failureOutcome is the outcome of a call its source could not answer:
// "crash", "timeout" or "unavailable" as the error says, else "".
func failureOutcome(err error) string {
	if err == nil {
		return "" // before c: its allocation would cost every answered call
	}
	var c interface{ Outcome() string }
	if errors.As(err, &c) {
		return c.Outcome()
	}
	return ""
}

// outcome classifies a call for metrics: ok, tool_error, refused, or how
// its source failed to answer (crash, timeout, unavailable).
func outcome(res *mcp.CallToolResult, err error, rec callRecord) string {
	switch {
	case err != nil || !rec.reached:
		return "refused"
	case rec.failed != "":
		return rec.failed
	case res != nil && res.IsError:
		return "tool_error"
	}
	return "ok"
}

// recording gives the call the ticket admitted a recorder the ticket owns,
// in the context it runs under; record takes what it wrote.
func (t *callTicket) recording(ctx context.Context) context.Context {
	t.rec = &callRecorder{}
	return withRecorder(ctx, t.rec)
}

// record is what the call recorded, sealed: audit, metrics and spans read
// this one value. detached, when not nil, is the record of the execution
// that ran the call apart from its request (a call asked for input
// through results), which becomes the ticket's.
func (t *callTicket) record(detached *callRecord) callRecord {
	if t.rec == nil {
		t.rec = &callRecorder{}
	}
	if detached != nil {
		return t.rec.settle(*detached)
	}
	return t.rec.seal()
}
