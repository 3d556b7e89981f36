package upstream

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/relay"
)

// Downstream answers the requests an upstream server sends to its client while
// serving a call: sampling, elicitation and roots. The gateway passes the
// downstream client's *mcp.ServerSession, which implements it; anything else
// that does (a test double, a client that cannot sample) works too.
//
// Values must be comparable (pointers are): the Manager compares the
// Downstreams of the calls in flight to tell whether a request can be
// attributed to one client.
type Downstream interface {
	CreateMessage(ctx context.Context, params *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	CreateMessageWithTools(ctx context.Context, params *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error)
	Elicit(ctx context.Context, params *mcp.ElicitParams) (*mcp.ElicitResult, error)
	ListRoots(ctx context.Context, params *mcp.ListRootsParams) (*mcp.ListRootsResult, error)
}

var _ Downstream = (*mcp.ServerSession)(nil)

// InputRequester is a Downstream that takes a whole round of an upstream's
// input requests (multi-round trip) at once, keyed as the upstream keyed
// them: a client that is asked through an InputRequiredResult of its own
// gets every question of the round in one result instead of one per round
// trip. A Downstream without it is asked one request at a time.
type InputRequester interface {
	RequestInput(ctx context.Context, reqs mcp.InputRequestMap) (mcp.InputResponseMap, error)
}

// Forwarding says which server→client requests toolfold offers to forward, and
// so which client capabilities it advertises to upstream servers.
//
// Advertising a capability makes some servers behave differently (the everything
// server registers extra tools; the filesystem server replaces its allowed
// directories with the client's roots), so nothing is advertised unless asked
// for: a gateway sets these when its downstream clients can answer.
type Forwarding struct {
	// Sampling advertises "sampling" and forwards sampling/createMessage.
	Sampling bool
	// Elicitation advertises "elicitation" (form mode) and forwards elicitation/create.
	Elicitation bool
	// Roots advertises "roots" (without listChanged: toolfold cannot tell an
	// upstream when a downstream's roots change) and forwards roots/list.
	Roots bool
	// Fallback answers a request that arrives when no call is in flight on the
	// connection, typically roots/list right after initialize. A gateway serving
	// a single client over stdio sets it to that client; one serving many
	// leaves it nil, and such requests are refused.
	Fallback Downstream
}

// CallOptions are per-call extras for Manager.CallTool, and for the
// pass-through requests during which an upstream may ask its client
// (GetPrompt, ReadResource, Complete), which use only Downstream.
type CallOptions struct {
	// Downstream answers sampling, elicitation and roots requests the upstream
	// sends while serving this request. Nil means the caller cannot answer them.
	Downstream Downstream
	// OnProgress receives the upstream's notifications/progress for this call.
	// Its ProgressToken is the one in the caller's params._meta (nil if none),
	// so it can be relayed to the downstream as is, and its context is the one
	// CallTool was given, so a notification sent with it travels with the
	// caller's request (on streamable HTTP: on that request's response
	// stream, the only one a stateless client has). It runs on the
	// connection's reading goroutine: it should return quickly.
	OnProgress func(ctx context.Context, p *mcp.ProgressNotificationParams)
}

// inflightCall is one request in flight on a connection (a tool call, or
// a pass-through request during which the server may ask its client, such
// as prompts/get): what the server→client routing and the progress relay
// need to know about it.
type inflightCall struct {
	what       string // the request, as errors name it (tools/call "x"); for debugging
	downstream Downstream
	// ctx is the downstream call's context. A request forwarded on the
	// call's behalf travels under it, so that an HTTP client gets it on the
	// response stream of its own call, as it would from the server itself.
	ctx         context.Context
	onProgress  func(context.Context, *mcp.ProgressNotificationParams)
	callerToken any // the caller's own progress token, restored on relay
	progress    progressCount
	// settled is set once the upstream's result is in: the call still
	// relays its last progress notifications, but the server can no longer
	// ask anything on its behalf, so it no longer counts when a request is
	// attributed to the call in flight.
	settled bool
}

// progressCount makes a call's progress arrive before its result. The SDK
// hands notifications to a handler queue but responses straight to the caller,
// so the last notification may still be queued when the result is in. Counting
// notifications as they are read off the wire and as they are handled lets
// CallTool wait for the queue to catch up with what was read before the result.
type progressCount struct {
	mu            sync.Mutex
	read, handled int
	caughtUp      chan struct{} // closed when handled reaches read; nil if nobody waits
}

func (p *progressCount) wasRead() {
	p.mu.Lock()
	p.read++
	p.mu.Unlock()
}

func (p *progressCount) wasHandled() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.handled++
	if p.handled >= p.read && p.caughtUp != nil {
		close(p.caughtUp)
		p.caughtUp = nil
	}
}

// drain waits until every notification read so far has been handled, at most
// max: a notification that takes longer is dropped rather than sent after the
// result.
func (p *progressCount) drain(max time.Duration) {
	p.mu.Lock()
	if p.handled >= p.read {
		p.mu.Unlock()
		return
	}
	ch := make(chan struct{})
	p.caughtUp = ch
	p.mu.Unlock()
	t := time.NewTimer(max)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	}
}

// calls tracks a connection's calls in flight. The key of a call is its
// progress token on the upstream connection, unique per Manager.
type calls struct {
	mu     sync.Mutex
	byID   map[string]*inflightCall
	lastID uint64
	// intake, if set, is told when the last call leaves (relay.Intake.Idle).
	intake *relay.Intake
}

func (cs *calls) add(c *inflightCall, prefix string) string {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.byID == nil {
		cs.byID = map[string]*inflightCall{}
	}
	cs.lastID++
	id := prefix + "-" + strconv.FormatUint(cs.lastID, 10)
	cs.byID[id] = c
	return id
}

// settle marks a call whose result is in (see inflightCall.settled).
func (cs *calls) settle(id string) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if c, ok := cs.byID[id]; ok {
		c.settled = true
	}
}

func (cs *calls) remove(id string) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	delete(cs.byID, id)
	if len(cs.byID) == 0 {
		cs.intake.Idle()
	}
}

func (cs *calls) get(id string) *inflightCall {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.byID[id]
}

// Waiter is a Downstream that can tell that its call is waiting for its
// client: the client was sent the call's questions and has yet to come back
// with the answers (a 2026-07-28 client asked through an
// InputRequiredResult, which may take minutes or never happen).
//
// Such a call is left out when a request on the connection is attributed:
// its upstream handler is blocked on the questions already sent (a round's
// questions are asked together, and the gateway gathers them into one
// round), so a new request comes from another call. Counting it would make
// every request ambiguous while it waits, and making it the target would
// pile another call's question onto a client that is not there.
type Waiter interface {
	WaitingForClient() bool
}

func waitingForClient(d Downstream) bool {
	w, ok := d.(Waiter)
	return ok && w.WaitingForClient()
}

// open counts the calls in flight whose result is not in yet.
func (cs *calls) open() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	n := 0
	for _, c := range cs.byID {
		if !c.settled {
			n++
		}
	}
	return n
}

// attribute finds the Downstream that should answer a server→client request
// that arrived on the connection outside any call's own context (the legacy
// protocol: a request on the connection, not tied to a call on the wire).
// It succeeds only when every call in flight came from the same client.
func (cs *calls) attribute(server, method string, fallback Downstream) (Downstream, context.Context, error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	open := 0
	for _, c := range cs.byID {
		if !c.settled && !waitingForClient(c.downstream) {
			open++
		}
	}
	if open == 0 {
		if fallback != nil {
			return fallback, nil, nil
		}
		return nil, nil, fmt.Errorf("toolfold cannot forward %s from upstream %q: no request that could ask is in flight (a tool call, prompts/get, resources/read or completion/complete), so there is no client to ask", method, server)
	}
	var only Downstream
	var onlyCtx context.Context
	first := true
	for _, c := range cs.byID {
		if c.settled || waitingForClient(c.downstream) {
			continue
		}
		if first {
			only, onlyCtx, first = c.downstream, c.ctx, false
			continue
		}
		if !sameDownstream(only, c.downstream) {
			return nil, nil, fmt.Errorf("toolfold cannot forward %s from upstream %q: %d requests from different clients are in flight and the request does not say which one it belongs to; retry when the server serves one request at a time", method, server, open)
		}
	}
	if only == nil {
		return nil, nil, fmt.Errorf("toolfold cannot forward %s from upstream %q: the client that made the request cannot answer it", method, server)
	}
	return only, onlyCtx, nil
}

// sameDownstream compares two Downstreams without panicking on values of an
// incomparable type (which then never count as the same).
func sameDownstream(a, b Downstream) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

// fulfillInputRequests answers a multi-round-trip result's input requests
// (protocol 2026-07-28) through the call's own Downstream: here the request
// is part of the call's result, so it is always attributed exactly.
func fulfillInputRequests(ctx context.Context, server string, d Downstream, reqs mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	if d == nil {
		return nil, fmt.Errorf("upstream %q asked the client for input (sampling, elicitation or roots) and the client that made the call cannot answer", server)
	}
	if r, ok := d.(InputRequester); ok {
		out, err := r.RequestInput(ctx, reqs)
		if err != nil {
			return nil, fmt.Errorf("the client could not answer the input requests of upstream %q: %w", server, err)
		}
		return out, nil
	}
	out := make(mcp.InputResponseMap, len(reqs))
	// One at a time: an elicitation is a question to a person, and asking two at
	// once helps no one.
	for id, r := range reqs {
		var (
			res mcp.InputResponse
			err error
		)
		switch p := r.(type) {
		case *mcp.ElicitParams:
			res, err = d.Elicit(ctx, p)
		case *mcp.CreateMessageParams:
			res, err = d.CreateMessage(ctx, p)
		case *mcp.CreateMessageWithToolsParams:
			res, err = d.CreateMessageWithTools(ctx, p)
		case *mcp.ListRootsParams:
			res, err = d.ListRoots(ctx, p)
		default:
			err = fmt.Errorf("unknown kind of input request %T", r)
		}
		if err != nil {
			return nil, fmt.Errorf("the client could not answer input request %q of upstream %q: %w", id, server, err)
		}
		out[id] = res
	}
	return out, nil
}

// questionMethods are the server→client requests that ask a client for
// input: the ones a Downstream answers.
var questionMethods = map[string]bool{
	"elicitation/create":     true,
	"sampling/createMessage": true,
	"roots/list":             true,
}

// intakeMiddleware puts in the context of each request for input that
// the connection's reader counted (relay.Intake.Arrived) the Handoff that
// ends its transit: handOver, or at the latest the request's end, marks
// it received, whatever the request's fate (refused, answered, failed).
func (c *connection) intakeMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	if c.intake == nil {
		return next
	}
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if !questionMethods[method] {
			return next(ctx, method, req)
		}
		h := c.intake.Handoff()
		defer h.Received()
		return next(relay.WithHandoff(ctx, h), method, req)
	}
}

// handOver returns the context to forward a request for input to d under
// (underCall), and ends the request's transit on the connection unless d
// holds questions and says itself when it holds this one (relay.Holder):
// any other Downstream holds it once it is called.
func handOver(handler, call context.Context, d Downstream) (context.Context, context.CancelFunc) {
	h := relay.HandoffFrom(handler)
	ctx, done := underCall(handler, call)
	if _, holds := d.(relay.Holder); !holds || h == nil {
		h.Received()
		return ctx, done
	}
	return relay.WithHandoff(ctx, h), done
}

// underCall returns a context for forwarding a request on a call's behalf:
// the call's values (which tie the request to the client's own stream),
// cancelled when either the call or the upstream's request ends.
func underCall(handler, call context.Context) (context.Context, context.CancelFunc) {
	if call == nil {
		return handler, func() {}
	}
	ctx, cancel := context.WithCancel(call)
	stop := context.AfterFunc(handler, cancel)
	return ctx, func() { stop(); cancel() }
}
