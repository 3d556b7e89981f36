package gateway

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/relay"
)

// Asking a 2026-07-28 client for input (SEP-2322, multi-round trip).
//
// Such a client receives no requests from its server: a server that needs
// input while serving tools/call, prompts/get or resources/read answers
// with an InputRequiredResult (resultType "input_required", inputRequests,
// requestState), and the client sends the request again with
// inputResponses and that requestState. toolfold offers its upstreams
// 2025-11-25, so they ask the old way: elicitation/create,
// sampling/createMessage and roots/list requests in the middle of the
// request, which block until answered (or, for a second round,
// inputRequests in a result, which the upstream Manager asks through the
// same Downstream).
//
// So for such a client the request runs detached from the client's, with a
// pendingCall as its Downstream. Each question the upstream asks is
// collected; the client's request is answered with an InputRequiredResult
// of the method's result type holding them and a fresh requestState; the
// upstream's requests stay open. The client's retry with that requestState
// and inputResponses hands the answers to the waiting requests, and is
// answered by what happens next: the result, or the next round of
// questions.
//
// A requestState is 128 random bits naming one pending call, used once
// (each round mints a new one), and bound to the method, its params (the
// tool and its arguments, the prompt and its arguments, the resource URI)
// and the Authorization header of the request that began it, so it can be
// neither guessed, replayed, nor used for another request or by another
// client. A pending call waits for its retry for at most Options.InputWait;
// then its questions fail upstream with a message saying so and it is
// forgotten.

// Defaults of the multi-round trip.
const (
	// DefaultInputWait is how long a call waits for its client's retry.
	DefaultInputWait = 5 * time.Minute
	// inputGather is the quiet time gather waits for after a question
	// asked on its own whose source has no reader to watch (see gather):
	// a handler in the gateway's own process (a library's tool, a test's).
	// Questions from an upstream, stdio or HTTP, wait for an event
	// instead, and a round asked whole (RequestInput: a 2026-07-28
	// upstream's inputRequests) goes out at once.
	inputGather = 50 * time.Millisecond
	// settleQuiet is how long a round of an upstream's questions stays
	// open once the upstream has settled, for a question another of its
	// goroutines is about to write. A legacy upstream asks a round's
	// questions concurrently, one request each (the Go SDK sends each
	// from a goroutine of its own), and on a loaded machine the second
	// can be written a few milliseconds after the first was read and
	// settled: without this the round split in two (the conformance
	// suite's input-required-result-multiple-input-requests failed so
	// under load), and a person would be asked twice.
	settleQuiet = 20 * time.Millisecond
	// maxPendingCalls bounds the calls waiting for a retry, so clients that
	// never come back cannot grow the gateway without limit.
	maxPendingCalls = 1024
)

// Downstream answers, for the client that made a call, the requests a
// source sends back while serving it: sampling, elicitation, roots. Its
// methods match upstream.Downstream.
type Downstream interface {
	CreateMessage(ctx context.Context, params *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	CreateMessageWithTools(ctx context.Context, params *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error)
	Elicit(ctx context.Context, params *mcp.ElicitParams) (*mcp.ElicitResult, error)
	ListRoots(ctx context.Context, params *mcp.ListRootsParams) (*mcp.ListRootsResult, error)
}

type downstreamKey struct{}

// DownstreamFrom returns the Downstream a source must ask on its client's
// behalf. For a tool handler it is nil when the client's own session (the
// request's Session) can be asked directly. Extras get no request, so for
// prompts/get, resources/read and completion/complete it is always set:
// the client's session, or for a 2026-07-28 client the stand-in that asks
// it through results.
func DownstreamFrom(ctx context.Context) Downstream {
	d, _ := ctx.Value(downstreamKey{}).(Downstream)
	return d
}

func withDownstream(ctx context.Context, d Downstream) context.Context {
	return context.WithValue(ctx, downstreamKey{}, d)
}

// Why a pending call ended before its result.
var (
	errClientGone  = errors.New("the client went away before it was asked for input")
	errTooMany     = errors.New("too many calls are waiting for their clients' input")
	errNoRetry     = errors.New("the client did not call again with the input asked for")
	errNotDeclared = errors.New("the client did not declare the capability")
)

// inputBroker holds the calls waiting for their client's retry.
type inputBroker struct {
	wait time.Duration

	// panicked hears a panic of a request run on its own goroutine
	// (start), which fails that request alone; nil: the panic is only
	// answered.
	panicked func(v any)

	// life ends the detached calls when the gateway shuts down; spawn
	// runs them on goroutines it waits for (lifecycle.goTracked). Unset
	// (a broker of its own in a test), calls run on plain goroutines.
	life  context.Context
	spawn func(func()) bool

	mu      sync.Mutex
	pending map[string]*pendingCall // by requestState
	closed  bool
}

// close ends every call waiting for its client's retry, and their timers;
// calls still running end through life.
func (b *inputBroker) close() {
	b.mu.Lock()
	pending := b.pending
	b.pending = map[string]*pendingCall{}
	b.closed = true
	b.mu.Unlock()
	for _, pc := range pending {
		pc.mu.Lock()
		if pc.timer != nil {
			pc.timer.Stop()
		}
		pc.mu.Unlock()
		pc.cancel(ErrClosed)
	}
}

func newInputBroker(wait time.Duration) *inputBroker {
	if wait <= 0 {
		wait = DefaultInputWait
	}
	return &inputBroker{wait: wait, pending: map[string]*pendingCall{}}
}

// callKey binds a requestState to the request it was minted for.
type callKey [sha256.Size]byte

// inputRequest is what the broker needs of a request whose client is asked
// for input through results: tools/call, prompts/get or resources/read.
type inputRequest struct {
	key       callKey
	responses mcp.InputResponseMap
	state     string
	caps      *mcp.ClientCapabilities
	what      string // the request, for messages: tools/call "x"
	repeat    string // what a retry must repeat, for messages
}

func toolRequest(req *mcp.CallToolRequest) inputRequest {
	return inputRequest{
		key:       keyOf("tools/call", req.Params.Name, canonical(req.Params.Arguments), req.Extra),
		responses: req.Params.InputResponses,
		state:     req.Params.RequestState,
		caps:      req.ClientCapabilities(),
		what:      fmt.Sprintf("tools/call %q", req.Params.Name),
		repeat:    "the tool name and arguments",
	}
}

func promptRequest(req *mcp.GetPromptRequest) inputRequest {
	var args []byte
	if len(req.Params.Arguments) > 0 {
		args, _ = json.Marshal(req.Params.Arguments) // a map: sorted keys
	}
	return inputRequest{
		key:       keyOf("prompts/get", req.Params.Name, args, req.Extra),
		responses: req.Params.InputResponses,
		state:     req.Params.RequestState,
		caps:      req.ClientCapabilities(),
		what:      fmt.Sprintf("prompts/get %q", req.Params.Name),
		repeat:    "the prompt name and arguments",
	}
}

func readRequest(req *mcp.ReadResourceRequest) inputRequest {
	return inputRequest{
		key:       keyOf("resources/read", req.Params.URI, nil, req.Extra),
		responses: req.Params.InputResponses,
		state:     req.Params.RequestState,
		caps:      req.ClientCapabilities(),
		what:      fmt.Sprintf("resources/read %q", req.Params.URI),
		repeat:    "the resource URI",
	}
}

// canonical re-encodes JSON arguments as a canonical value: a client may
// encode its retry differently (key order, spaces).
func canonical(raw json.RawMessage) []byte {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return nil
	}
	out, _ := json.Marshal(v)
	return out
}

// keyOf binds a request: its method, what it names (a tool, a prompt, a
// URI), its canonical arguments, and the credentials it came with.
func keyOf(method, name string, args []byte, extra *mcp.RequestExtra) callKey {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%q\n", method, name)
	h.Write(args)
	h.Write([]byte("\n"))
	if extra != nil && extra.Header != nil {
		h.Write([]byte(extra.Header.Get("Authorization")))
	}
	var k callKey
	h.Sum(k[:0])
	return k
}

// serveInput answers one request of a client that must be asked for input
// through results. call serves it; it is run detached from ctx, under a
// context that carries the pending call as the Downstream.
//
// The call records what it does in its own recorder, which the pending
// call owns; serveInput returns what it had recorded by the end of this
// request's round, for this request's ticket.
func serveInput[R mcp.Result](ctx context.Context, b *inputBroker, req inputRequest, call func(context.Context) (R, error)) (R, callRecord, error) {
	var zero R
	var pc *pendingCall
	if req.state != "" {
		var err error
		if pc, err = b.resume(req); err != nil {
			return zero, callRecord{}, err
		}
	} else {
		// inputResponses without a requestState answer nothing toolfold
		// asked: the request starts afresh, and its upstream asks again.
		pc = b.start(ctx, req, func(ctx context.Context) (mcp.Result, error) { return call(ctx) })
	}
	res, qs, state, err := b.round(ctx, pc)
	rec := pc.rec.snapshot()
	switch {
	case err != nil:
		return zero, rec, err
	case qs != nil:
		r, err := inputRequired[R](qs, state)
		return r, rec, err
	}
	r, _ := res.(R) // start stored what call returned: an R
	return r, rec, nil
}

// start runs a request detached from the client's, which ends with the
// first round, and keeps its values (what ties a message to the request)
// for the messages of that round.
func (b *inputBroker) start(ctx context.Context, req inputRequest, call func(context.Context) (mcp.Result, error)) *pendingCall {
	callCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	pc := &pendingCall{
		b:      b,
		key:    req.key,
		caps:   req.caps,
		cancel: cancel,
		wake:   make(chan struct{}, 1),
		whole:  make(chan struct{}, 1),
		done:   make(chan struct{}),
		sent:   map[string]*question{},
	}
	pc.rec = &callRecorder{}
	callCtx = withRecorder(withDownstream(callCtx, pc), pc.rec)
	stopped := func() bool { return true }
	if b.life != nil {
		stopped = context.AfterFunc(b.life, func() { cancel(context.Cause(b.life)) })
	}
	run := func() {
		defer stopped()
		res, err := b.run(callCtx, call)
		if err != nil && callCtx.Err() != nil {
			err = fmt.Errorf("%w: %w", context.Cause(callCtx), err)
		}
		pc.finish(res, err)
		cancel(nil)
	}
	if b.spawn == nil {
		go run()
	} else if !b.spawn(run) {
		stopped()
		cancel(ErrClosed)
		pc.finish(nil, ErrClosed)
	}
	return pc
}

// run calls call, turning a panic into its request's internal error: on
// this goroutine nothing else would recover it.
func (b *inputBroker) run(ctx context.Context, call func(context.Context) (mcp.Result, error)) (res mcp.Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			if b.panicked != nil {
				b.panicked(v)
			}
			res, err = nil, panicError()
		}
	}()
	return call(ctx)
}

// resume takes the pending call a retry names and hands it the answers.
// A state that is unknown, used or expired, or that belongs to another
// call, is refused as invalid params, and a pending call stays as it was
// when the answers do not fit its questions, so the client can correct
// them.
func (b *inputBroker) resume(req inputRequest) (*pendingCall, error) {
	b.mu.Lock()
	pc, ok := b.pending[req.state]
	if !ok {
		b.mu.Unlock()
		return nil, invalidParams("requestState is unknown, already used or expired; send %s again without inputResponses and requestState to start over", req.what)
	}
	if pc.key != req.key {
		b.mu.Unlock()
		return nil, invalidParams("requestState belongs to another call: a retry must repeat the method, %s of the request that returned it", req.repeat)
	}
	answers, err := pc.match(req.responses)
	if err != nil {
		b.mu.Unlock()
		return nil, err
	}
	delete(b.pending, req.state)
	b.mu.Unlock()
	pc.deliver(answers)
	return pc, nil
}

// round waits for what the call does next: finish (its result or error),
// or ask (the questions to send, under a new requestState).
func (b *inputBroker) round(ctx context.Context, pc *pendingCall) (mcp.Result, []*question, string, error) {
	for {
		select {
		case <-pc.done:
			return pc.res, nil, "", pc.err
		case <-ctx.Done():
			// Nobody will learn a requestState: the call cannot go on.
			pc.cancel(errClientGone)
			return nil, nil, "", ctx.Err()
		case <-pc.wake:
		}
		if !pc.gather(ctx) {
			continue
		}
		qs := pc.take()
		if len(qs) == 0 {
			continue
		}
		state, err := b.park(pc, qs)
		if err != nil {
			pc.cancel(err)
			return nil, nil, "", &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("toolfold cannot keep this request waiting for input: %v; try again later", err)}
		}
		return nil, qs, state, nil
	}
}

// park records the round sent to the client under a new requestState and
// starts the wait for the retry.
func (b *inputBroker) park(pc *pendingCall, qs []*question) (string, error) {
	var raw [16]byte
	_, _ = rand.Read(raw[:]) // never fails (crypto/rand)
	state := base64.RawURLEncoding.EncodeToString(raw[:])
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return "", ErrClosed
	}
	if len(b.pending) >= maxPendingCalls {
		b.mu.Unlock()
		return "", errTooMany
	}
	b.pending[state] = pc
	b.mu.Unlock()
	pc.mu.Lock()
	for _, q := range qs {
		pc.sent[q.id] = q
	}
	pc.timer = time.AfterFunc(b.wait, func() { b.expire(pc, state) })
	pc.mu.Unlock()
	return state, nil
}

// expire ends a call whose client did not come back in time.
func (b *inputBroker) expire(pc *pendingCall, state string) {
	b.mu.Lock()
	mine := b.pending[state] == pc
	if mine {
		delete(b.pending, state)
	}
	b.mu.Unlock()
	if mine {
		pc.cancel(fmt.Errorf("%w within %s", errNoRetry, b.wait))
	}
}

// inputRequired is the result (of the method's own type) that asks the
// client: the SDK sets resultType only on results it decodes, hence the
// round through JSON.
func inputRequired[R mcp.Result](qs []*question, state string) (R, error) {
	reqs := make(mcp.InputRequestMap, len(qs))
	for _, q := range qs {
		reqs[q.id] = q.req
	}
	wire, err := json.Marshal(struct {
		ResultType    string              `json:"resultType"`
		InputRequests mcp.InputRequestMap `json:"inputRequests"`
		RequestState  string              `json:"requestState"`
	}{"input_required", reqs, state})
	var res R // a pointer: Unmarshal allocates what it points to
	if err == nil {
		err = json.Unmarshal(wire, &res)
	}
	if err != nil { // only an input request that cannot be encoded
		var zero R
		return zero, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("toolfold could not pass on the source's request for input: %v", err)}
	}
	return res, nil
}

func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// pendingCall is one call of a client asked through results: the
// Downstream its source asks, and the questions between rounds.
type pendingCall struct {
	b      *inputBroker
	key    callKey
	caps   *mcp.ClientCapabilities
	cancel context.CancelCauseFunc
	// rec is the call's own record of what it reached, apart from the
	// ticket of each request that waits on a round of it.
	rec *callRecorder

	wake chan struct{} // a question was asked (capacity 1)
	// whole says that a round asked whole is in (capacity 1): no more
	// questions are coming, so gather need not wait for quiet.
	whole chan struct{}
	done  chan struct{} // closed when res and err are set
	res   mcp.Result    // of the type the request's method answers with
	err   error

	mu    sync.Mutex
	next  int
	asked []*question          // not sent to the client yet
	sent  map[string]*question // sent in the last round, by id
	timer *time.Timer          // the wait for the retry
}

// question is one input request waiting for its answer.
type question struct {
	id     string
	req    mcp.InputRequest
	answer chan mcp.InputResponse // capacity 1
	// from is the question's way from its source (nil: a source with
	// no reader to watch, or a round asked whole), whose Settled says
	// when the source has nothing more in hand.
	from *relay.Handoff
}

var (
	_ Downstream   = (*pendingCall)(nil)
	_ relay.Holder = (*pendingCall)(nil)
)

// HoldsQuestions says that a pendingCall holds its questions for a round
// and marks their Handoff received itself (relay.Holder).
func (*pendingCall) HoldsQuestions() {}

func (pc *pendingCall) finish(res mcp.Result, err error) {
	pc.res, pc.err = res, err
	close(pc.done)
}

// gather waits until the questions asked so far are a round, and reports
// false if the call finished meanwhile. A legacy upstream asks a round's
// questions one by one, as requests of its own (concurrently: the Go
// SDK's handlers do), and nothing in them says which is the last. So:
//
//   - a round asked whole (RequestInput) is one at once;
//   - a question from an upstream carries its relay.Handoff, and the
//     round is whole once that upstream has nothing more in hand: its
//     readers have drained (no complete message buffered: stdout on
//     stdio, each event stream on HTTP) and every question they read has
//     reached this call (relay.Intake.Settled), and no other question has
//     come for settleQuiet after that. Questions the upstream wrote
//     together, or within settleQuiet of each other, are then in one
//     round; one it writes later goes in the next round: correct, at
//     worst one more round trip for the client;
//   - a question from a source with no reader to watch (a handler in
//     this process, asking from goroutines of its own) falls back to a
//     quiet time, inputGather: nothing there says the last of them is in.
func (pc *pendingCall) gather(ctx context.Context) bool {
	for {
		select {
		case <-pc.whole:
			return true
		default:
		}
		settled, ok := pc.settled()
		if !ok {
			return pc.gatherQuiet(ctx)
		}
		select {
		case <-pc.done:
			return false
		case <-ctx.Done():
			return true // round sees ctx.Done next
		case <-pc.whole:
			return true
		case <-pc.wake: // another question: its source too must settle
		case <-settled:
			select {
			case <-pc.wake:
				// Asked while this wait ended: look at its source.
			default:
				if quiet, finished := pc.quietFor(ctx, settleQuiet); quiet || finished {
					return !finished
				}
				// Another question came meanwhile: its source too must
				// settle.
			}
		}
	}
}

// quietFor waits d for another question: quiet reports that none came,
// finished that the call finished meanwhile. A cancelled ctx counts as
// quiet: the round sees ctx.Done next.
func (pc *pendingCall) quietFor(ctx context.Context, d time.Duration) (quiet, finished bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-pc.done:
		return false, true
	case <-ctx.Done():
		return true, false
	case <-pc.whole:
		return true, false
	case <-pc.wake:
		return false, false
	case <-t.C:
		return true, false
	}
}

// settled returns a channel closed once the source of every question not
// yet sent is settled (one source at a time: gather looks again), and
// false when a question's source has no event to wait for.
func (pc *pendingCall) settled() (<-chan struct{}, bool) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	for _, q := range pc.asked {
		if q.from == nil {
			return nil, false
		}
		ch := q.from.Settled()
		select {
		case <-ch:
		default:
			return ch, true
		}
	}
	done := make(chan struct{})
	close(done)
	return done, true
}

// gatherQuiet is gather for questions whose source has no event to say
// they are all in: it waits until no question has come for inputGather.
func (pc *pendingCall) gatherQuiet(ctx context.Context) bool {
	for {
		if quiet, finished := pc.quietFor(ctx, inputGather); quiet || finished {
			return !finished
		}
	}
}

// take hands over the questions not yet sent.
func (pc *pendingCall) take() []*question {
	select {
	case <-pc.whole: // said of the questions taken now
	default:
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	qs := pc.asked
	pc.asked = nil
	return qs
}

// match checks a retry's answers against the questions sent: each answer
// must be of the kind its question asks for. Answers to questions not
// asked are ignored; questions left unanswered are asked again.
func (pc *pendingCall) match(responses mcp.InputResponseMap) (map[*question]mcp.InputResponse, error) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	out := map[*question]mcp.InputResponse{}
	for id, q := range pc.sent {
		r, ok := responses[id]
		if !ok || r == nil {
			continue
		}
		if want := answers(q.req, r); want != "" {
			return nil, invalidParams("inputResponses[%q] must be %s", id, want)
		}
		out[q] = r
	}
	return out, nil
}

// answers says what kind of response a request needs, or "" if r is one.
func answers(req mcp.InputRequest, r mcp.InputResponse) string {
	switch req.(type) {
	case *mcp.ElicitParams:
		if _, ok := r.(*mcp.ElicitResult); !ok {
			return "an elicitation result (action, content)"
		}
	case *mcp.CreateMessageParams, *mcp.CreateMessageWithToolsParams:
		switch r.(type) {
		case *mcp.CreateMessageWithToolsResult, *mcp.CreateMessageResult:
		default:
			return "a sampling result (role, content, model)"
		}
	case *mcp.ListRootsParams:
		if _, ok := r.(*mcp.ListRootsResult); !ok {
			return "a roots result (roots)"
		}
	}
	return ""
}

// deliver hands the answers to the waiting requests; the questions left
// unanswered go out again in the next round.
func (pc *pendingCall) deliver(answers map[*question]mcp.InputResponse) {
	pc.mu.Lock()
	if pc.timer != nil {
		pc.timer.Stop()
	}
	var again []*question
	for id, q := range pc.sent {
		if r, ok := answers[q]; ok {
			q.answer <- r
		} else {
			again = append(again, q)
		}
		delete(pc.sent, id)
	}
	pc.asked = append(again, pc.asked...)
	pc.mu.Unlock()
	if len(again) > 0 {
		// What is asked again is a round known whole.
		select {
		case pc.whole <- struct{}{}:
		default:
		}
		pc.signal()
	}
}

func (pc *pendingCall) signal() {
	select {
	case pc.wake <- struct{}{}:
	default:
	}
}

// ask puts questions to the client and waits for their answers, keyed as
// given (an id already waiting gets a suffix).
// whole says reqs are a round asked whole.
func (pc *pendingCall) ask(ctx context.Context, reqs map[string]mcp.InputRequest, whole bool) (map[string]mcp.InputResponse, error) {
	byKey := map[string]*question{}
	var from *relay.Handoff
	if !whole {
		from = relay.HandoffFrom(ctx)
	}
	pc.mu.Lock()
	for key, r := range reqs {
		id := key
		for pc.taken(id) {
			pc.next++
			id = fmt.Sprintf("%s-%d", key, pc.next)
		}
		q := &question{id: id, req: r, answer: make(chan mcp.InputResponse, 1), from: from}
		pc.asked = append(pc.asked, q)
		byKey[key] = q
	}
	pc.mu.Unlock()
	// Held: its source may settle now. After the question is among those
	// asked, so that a round never closes between the two.
	from.Received()
	if whole {
		select {
		case pc.whole <- struct{}{}:
		default:
		}
	}
	pc.signal()
	out := make(map[string]mcp.InputResponse, len(byKey))
	for key, q := range byKey {
		select {
		case r := <-q.answer:
			out[key] = r
		case <-ctx.Done():
			pc.withdraw(byKey)
			return nil, fmt.Errorf("toolfold asked its client for input and got no answer: %w", context.Cause(ctx))
		}
	}
	return out, nil
}

// taken reports whether a question id is in use. The caller holds pc.mu.
func (pc *pendingCall) taken(id string) bool {
	if _, ok := pc.sent[id]; ok {
		return true
	}
	for _, q := range pc.asked {
		if q.id == id {
			return true
		}
	}
	return false
}

// withdraw forgets questions whose asker gave up, so they are not sent.
func (pc *pendingCall) withdraw(qs map[string]*question) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	gone := map[*question]bool{}
	for _, q := range qs {
		gone[q] = true
		if pc.sent[q.id] == q {
			delete(pc.sent, q.id)
		}
	}
	kept := pc.asked[:0]
	for _, q := range pc.asked {
		if !gone[q] {
			kept = append(kept, q)
		}
	}
	pc.asked = kept
}

// askOne asks one question of a kind the client must have declared.
func (pc *pendingCall) askOne(ctx context.Context, kind string, declared bool, r mcp.InputRequest) (mcp.InputResponse, error) {
	if !declared {
		return nil, fmt.Errorf("%w %q", errNotDeclared, kind)
	}
	pc.mu.Lock()
	pc.next++
	id := fmt.Sprintf("%s-%d", kind, pc.next)
	pc.mu.Unlock()
	out, err := pc.ask(ctx, map[string]mcp.InputRequest{id: r}, false)
	if err != nil {
		return nil, err
	}
	return out[id], nil
}

func (pc *pendingCall) declares(kind string) bool {
	c := pc.caps
	if c == nil {
		return false
	}
	switch kind {
	case "sampling":
		return c.Sampling != nil
	case "elicitation":
		return c.Elicitation != nil
	case "roots":
		return c.RootsV2 != nil || c.Roots.ListChanged
	}
	return false
}

func kindOf(r mcp.InputRequest) string {
	switch r.(type) {
	case *mcp.ElicitParams:
		return "elicitation"
	case *mcp.CreateMessageParams, *mcp.CreateMessageWithToolsParams:
		return "sampling"
	case *mcp.ListRootsParams:
		return "roots"
	}
	return fmt.Sprintf("%T", r)
}

// WaitingForClient reports that the call's questions went to the client,
// which has yet to come back with the answers (upstream.Waiter): until then
// the call is not the origin of a new request from its upstream.
func (pc *pendingCall) WaitingForClient() bool {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return len(pc.sent) > 0 && len(pc.asked) == 0
}

// Elicit asks the client through the next InputRequiredResult.
func (pc *pendingCall) Elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	r, err := pc.askOne(ctx, "elicitation", pc.declares("elicitation"), p)
	if err != nil {
		return nil, err
	}
	return r.(*mcp.ElicitResult), nil // match checked the kind
}

// CreateMessageWithTools asks the client through the next InputRequiredResult.
func (pc *pendingCall) CreateMessageWithTools(ctx context.Context, p *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	r, err := pc.askOne(ctx, "sampling", pc.declares("sampling"), p)
	if err != nil {
		return nil, err
	}
	return samplingWithTools(r), nil
}

// CreateMessage asks the client through the next InputRequiredResult.
func (pc *pendingCall) CreateMessage(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	r, err := pc.askOne(ctx, "sampling", pc.declares("sampling"), p)
	if err != nil {
		return nil, err
	}
	if res, ok := r.(*mcp.CreateMessageResult); ok {
		return res, nil
	}
	res := samplingWithTools(r)
	if len(res.Content) > 1 {
		return nil, fmt.Errorf("the client answered a sampling request that takes one content block with %d", len(res.Content))
	}
	out := &mcp.CreateMessageResult{Meta: res.Meta, Model: res.Model, Role: res.Role, StopReason: res.StopReason}
	if len(res.Content) == 1 {
		out.Content = res.Content[0]
	}
	return out, nil
}

// samplingWithTools is a sampling answer in its many-content form.
func samplingWithTools(r mcp.InputResponse) *mcp.CreateMessageWithToolsResult {
	switch v := r.(type) {
	case *mcp.CreateMessageWithToolsResult:
		return v
	case *mcp.CreateMessageResult:
		out := &mcp.CreateMessageWithToolsResult{Meta: v.Meta, Model: v.Model, Role: v.Role, StopReason: v.StopReason}
		if v.Content != nil {
			out.Content = []mcp.Content{v.Content}
		}
		return out
	}
	return &mcp.CreateMessageWithToolsResult{}
}

// ListRoots asks the client through the next InputRequiredResult.
func (pc *pendingCall) ListRoots(ctx context.Context, p *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	r, err := pc.askOne(ctx, "roots", pc.declares("roots"), p)
	if err != nil {
		return nil, err
	}
	return r.(*mcp.ListRootsResult), nil
}

// RequestInput asks a whole multi-round-trip round at once, keyed as the
// upstream keyed it (upstream.InputRequester).
func (pc *pendingCall) RequestInput(ctx context.Context, reqs mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	ask := make(map[string]mcp.InputRequest, len(reqs))
	for key, r := range reqs {
		if kind := kindOf(r); !pc.declares(kind) {
			return nil, fmt.Errorf("input request %q: %w %q", key, errNotDeclared, kind)
		}
		ask[key] = r
	}
	got, err := pc.ask(ctx, ask, true)
	if err != nil {
		return nil, err
	}
	// Passed on as the client sent them: the upstream decodes each answer
	// from its JSON, whichever sampling form it takes.
	return mcp.InputResponseMap(got), nil
}
