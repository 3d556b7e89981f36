// Package rawcall is the fast path of a forwarded tools/call: the gateway
// reads only what routing needs from the client's message (its id, method,
// tool name and the protocol's per-hop _meta), and the source sends the
// arguments and hands back the result as the bytes they arrived as, with no
// typed decoding in between. Anything the fast path cannot carry exactly
// (progress, input requests asked through results, a source not running
// yet) takes the typed path instead; this package only describes the call
// and reads JSON without decoding it.
package rawcall

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Call is one tools/call forwarded as bytes.
type Call struct {
	// Arguments are the arguments as the client sent them; empty means
	// none (the source sends {}). They are valid only until the Forwarder
	// returns: a forwarder that needs them later keeps a copy.
	Arguments json.RawMessage
	// Meta are members to add to the _meta of the request the source sends,
	// as JSON members without braces (`"traceparent":"00-…"`): the trace
	// context the call carries on. Empty: none. Valid, like Arguments,
	// only until the Forwarder returns.
	Meta []byte
	// Capabilities are what the calling client declared it can answer.
	Capabilities Capabilities
	// Downstream answers the requests the source sends back while serving
	// the call (sampling, elicitation).
	Downstream Downstream
	// Done is called exactly once, unless the call was cancelled: with the
	// source's result object as bytes, or with the error that kept the call
	// from being answered (worded for the client). It may run on the
	// source's reading goroutine: it must not block for long, and result
	// is valid only until it returns (the source reuses the buffer).
	Done func(result json.RawMessage, err error)
	// MapError, if set, turns the error that kept the call from an answer
	// into what Done gets (a result that reports it, or the error to pass
	// on). A forwarder that sets it wraps nothing per call.
	MapError func(err error) (json.RawMessage, error)
	// Err is the error the source ended the call with, before MapError
	// turned it into an answer: the gateway's metrics tell a crash from
	// a timeout by it. Set by Finish.
	Err error
	// Batch, if set by the caller of the Forwarder, lets the source hold
	// the call's request back (Batch.Hold, before the Forwarder returns)
	// until the caller ends the batch: the caller has more calls in hand,
	// and one write can carry them all.
	Batch *Batch
	// Answers, if set by the source before it ends the call from a reader
	// that has more answers in hand, lets Done hold its answer back the
	// same way (Answers.Hold, before Done returns) until the source has
	// handed over the answers it holds and ends the batch.
	Answers *Batch
}

// Finish ends the call: Done gets result, or err as MapError maps it.
// Sources end calls with Finish, not Done.
func (c *Call) Finish(result json.RawMessage, err error) {
	c.Err = err
	if err != nil && c.MapError != nil {
		result, err = c.MapError(err)
	}
	c.Done(result, err)
}

// A Batch collects the writers that hold messages back while their reader
// has more in hand: a relay that writes each message as it reads it pays a
// system call per message, where one that reads several at once can write
// them at once. Whoever reads ends the batch when its input drains (before
// a read that could wait) and before it hands a message another way, and
// every writer held writes what it holds.
//
// Ownership goes one way: a Batch belongs to its reader's goroutine (it is
// not safe for concurrent use), and only End flushes the writers it holds;
// a writer never flushes another, or a batch. A flush that fails does not
// act inside End: it returns what it must do (fail the calls whose
// messages it held), and End runs that once every writer held was flushed
// and the batch is empty, so the calls a failure ends (whose answers go to
// the other side's writer) find no batch half-ended. See
// internal/relay/README.md.
type Batch struct {
	held []Flusher
}

// Flusher is a writer that can hold messages back: Flush writes them and,
// if the write failed, returns what to do about it (fail the calls whose
// messages it held, worded for their clients), or nil. The caller runs it
// after the batch ends.
type Flusher interface {
	Flush() (failed func())
}

// Hold makes the end of the batch flush f; f is flushed once however often
// it is held.
func (b *Batch) Hold(f Flusher) {
	for _, h := range b.held {
		if h == f {
			return
		}
	}
	b.held = append(b.held, f)
}

// End flushes every writer held and empties the batch for the next, then
// handles the flushes that failed, in the order they were held. Anything
// held while those run (a failure's answer held for a batch) is flushed
// before End returns.
func (b *Batch) End() {
	for len(b.held) > 0 {
		var failed []func()
		for i, f := range b.held {
			b.held[i] = nil
			if fail := f.Flush(); fail != nil {
				failed = append(failed, fail)
			}
		}
		b.held = b.held[:0]
		for _, fail := range failed {
			fail()
		}
	}
}

// Capabilities are the client capabilities that matter to a source while it
// serves a call.
type Capabilities struct {
	Sampling bool
	// FormElicitation is set when the client takes form elicitation (a
	// client that names no mode takes forms).
	FormElicitation bool
	Roots           bool
}

// Downstream answers, for the client that made a call, the requests its
// source sends back while serving it; its methods match those of the
// gateway's and the upstream package's Downstream.
type Downstream interface {
	CreateMessage(ctx context.Context, params *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	CreateMessageWithTools(ctx context.Context, params *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error)
	Elicit(ctx context.Context, params *mcp.ElicitParams) (*mcp.ElicitResult, error)
	ListRoots(ctx context.Context, params *mcp.ListRootsParams) (*mcp.ListRootsResult, error)
}

// Forwarder sends a call to the tool's source as bytes. It reports false,
// having done nothing, when it cannot take the call now (the source is not
// running or not ready), and the caller then takes the typed path. On true,
// cancel withdraws the call: the source is told, and Done is not called.
type Forwarder func(call *Call) (cancel func(), ok bool)
