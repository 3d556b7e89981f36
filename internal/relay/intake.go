package relay

import (
	"context"
	"sync"
)

// An Intake is a source connection's account of the requests for input
// (elicitation, sampling, roots) it has read off the wire and not yet
// handed to the Downstream that answers them, and of whether its reader
// has drained: no complete message is buffered, so the next read may
// wait. The two together are the event "the source has nothing more in
// hand": Settled. A round of questions a source wrote together is whole
// then, without waiting for a pause that only guesses at it.
//
// Each reader of the connection (one for stdio; one per event stream on
// HTTP) calls Reading when it gets bytes, Arrived for each request for
// input it hands on, and Drained before a read that may wait, once for
// each Reading (a reader keeps its own flag); the
// code that dispatches a request calls Handoff and marks it Received once
// the Downstream holds it (or could not take it). End is for a connection
// that is over: it is settled for good.
//
// The zero value is ready to use; a nil *Intake is always settled (a
// source with no reader of its own to watch).
type Intake struct {
	mu      sync.Mutex
	busy    int // readers that hold input they have not handed on
	transit int // requests for input handed on, not yet Received
	ended   bool
	waiters []chan struct{}
}

// Reading says a reader got input and is handing it on.
func (in *Intake) Reading() {
	if in == nil {
		return
	}
	in.mu.Lock()
	in.busy++
	in.mu.Unlock()
}

// Drained says a reader that was Reading has handed on all it read and
// its next read may wait.
func (in *Intake) Drained() {
	if in == nil {
		return
	}
	in.mu.Lock()
	if in.busy > 0 {
		in.busy--
	}
	in.wakeLocked()
	in.mu.Unlock()
}

// Arrived counts a request for input the reader hands on; the
// dispatcher's Handoff ends its transit.
func (in *Intake) Arrived() {
	if in == nil {
		return
	}
	in.mu.Lock()
	in.transit++
	in.mu.Unlock()
}

// Handoff is the dispatcher's hold on one request for input the reader
// counted: Received ends its transit, once however often it is called.
func (in *Intake) Handoff() *Handoff {
	return &Handoff{in: in}
}

// Idle forgets the requests still counted in transit: the connection
// has no request in flight that a request for input could belong to, so
// any left were lost on the way (a message the reader counted and the
// dispatcher refused before it saw it) and must not hold up the rounds
// of calls to come.
func (in *Intake) Idle() {
	if in == nil {
		return
	}
	in.mu.Lock()
	in.transit = 0
	in.wakeLocked()
	in.mu.Unlock()
}

// End says the connection is over: nothing more will come.
func (in *Intake) End() {
	if in == nil {
		return
	}
	in.mu.Lock()
	in.ended = true
	in.wakeLocked()
	in.mu.Unlock()
}

// Settled returns a channel that is closed once the source has nothing
// more in hand: its reader has drained and every request for input it
// read has reached its Downstream (or the connection is over).
func (in *Intake) Settled() <-chan struct{} {
	ch := make(chan struct{})
	if in == nil {
		close(ch)
		return ch
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.settledLocked() {
		close(ch)
		return ch
	}
	in.waiters = append(in.waiters, ch)
	return ch
}

func (in *Intake) settledLocked() bool {
	return in.ended || in.busy == 0 && in.transit == 0
}

// wakeLocked closes the waiters' channels if the intake is settled.
func (in *Intake) wakeLocked() {
	if !in.settledLocked() {
		return
	}
	for _, ch := range in.waiters {
		close(ch)
	}
	in.waiters = nil
}

// A Handoff is one request for input on its way from a source's reader
// to the Downstream that answers it. The dispatcher puts it in the
// request's context (WithHandoff); a Downstream that holds questions to
// send them together (a Holder) marks it Received as soon as it holds
// the question, and waits for Settled before it sends what it holds.
type Handoff struct {
	in   *Intake
	once sync.Once
}

// Received ends the request's transit: its Downstream holds it, or it
// failed on the way.
func (h *Handoff) Received() {
	if h == nil || h.in == nil {
		return
	}
	h.once.Do(func() {
		in := h.in
		in.mu.Lock()
		if in.transit > 0 { // Idle may have forgotten it already
			in.transit--
		}
		in.wakeLocked()
		in.mu.Unlock()
	})
}

// Settled is the Settled of the request's source.
func (h *Handoff) Settled() <-chan struct{} {
	if h == nil {
		return (*Intake)(nil).Settled()
	}
	return h.in.Settled()
}

// A Holder is a Downstream that holds the questions it is asked until
// their source is settled, to send them together. It marks each request's
// Handoff Received itself once it holds the question; for any other
// Downstream the dispatcher marks it Received as it calls it, since the
// call itself is the handing over (and may block until a person answers).
type Holder interface {
	HoldsQuestions()
}

type handoffKey struct{}

// WithHandoff returns ctx carrying h, for the Downstream that answers the
// request.
func WithHandoff(ctx context.Context, h *Handoff) context.Context {
	return context.WithValue(ctx, handoffKey{}, h)
}

// HandoffFrom returns the Handoff of the request whose context ctx is, or
// nil when its source has no reader to watch (its questions then have no
// event that says they are all in).
func HandoffFrom(ctx context.Context) *Handoff {
	h, _ := ctx.Value(handoffKey{}).(*Handoff)
	return h
}
