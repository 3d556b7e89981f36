package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// errCallTimeout is the cause of a call context that hit the server's timeout,
// telling it apart from the caller's own deadline or cancellation.
var errCallTimeout = errors.New("upstream call timeout")

// errShutdown is the cause of a call context cancelled by Manager.Close.
var errShutdown = errors.New("upstream manager closed")

// requestContext bounds one request: by the caller's ctx, the server's timeout
// (cause errCallTimeout) and the Manager's life (cause errShutdown), so Close
// does not wait for calls that would otherwise run to their timeout.
func (s *server) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	life, cancelLife := context.WithCancelCause(ctx)
	stop := context.AfterFunc(s.m.life, func() { cancelLife(errShutdown) })
	callCtx, cancel := context.WithTimeoutCause(life, s.timeout, errCallTimeout)
	return callCtx, func() {
		cancel()
		stop()
		cancelLife(nil)
	}
}

// endGrace is how long a failed request waits for the connection's end to be
// confirmed (process reaped), so its error can say how the server ended.
const endGrace = 5 * time.Second

// progressDrainMax bounds the wait for progress read before a result to be
// handed over (see progressCount).
const progressDrainMax = time.Second

// Multi-round-trip limits (protocol 2026-07-28): how many times a call may come
// back asking for input, and how often an empty "busy" answer is retried.
const (
	maxInputRounds   = 10
	maxBusyRetries   = 3
	busyRetryPadding = 200 * time.Millisecond
)

// CallTool calls one of a server's tools by its own name, starting the server
// if needed. The call is bounded by the server's timeout; cancelling ctx
// cancels it upstream (the SDK sends notifications/cancelled). opts may be nil.
//
// A tool's own failure is a result with IsError set, not an error. Errors are
// for what kept the call from being answered: the tool is excluded, the server
// failed to start, exited during the call, timed out, or refused the request.
func (m *Manager) CallTool(ctx context.Context, server string, params *mcp.CallToolParams, opts *CallOptions) (*mcp.CallToolResult, error) {
	s, err := m.lookup(server)
	if err != nil {
		return nil, err
	}
	if params == nil || params.Name == "" {
		return nil, fmt.Errorf("calling a tool of upstream %q needs a tool name", server)
	}
	if !s.allowed(params.Name) {
		return nil, newError(ErrExcluded, nil, "tool %q of server %q is excluded by its config (include/exclude)", params.Name, server)
	}
	var o CallOptions
	if opts != nil {
		o = *opts
	}
	res, err := s.callTool(ctx, params, o)
	if sessionLost(err) {
		// The remote server forgot toolfold's session (it restarted, or
		// expired it) and refused the call without running it: the
		// connection is over, and the next connect makes a new session.
		s.log.Info("upstream forgot the session; re-initializing and retrying the call once", "tool", params.Name)
		trace.SpanFromContext(ctx).AddEvent("retry", trace.WithAttributes(attribute.String("toolfold.retry.reason", "session lost")))
		res, err = s.callTool(ctx, params, o)
	}
	return res, err
}

// sessionLost reports an error of a remote server that no longer knows
// toolfold's session (HTTP 404 on a request that carried it).
func sessionLost(err error) bool { return errors.Is(err, mcp.ErrSessionMissing) }

// callTool is one attempt of CallTool.
func (s *server) callTool(ctx context.Context, params *mcp.CallToolParams, o CallOptions) (*mcp.CallToolResult, error) {
	c, err := s.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer s.release(c)
	what := fmt.Sprintf("tools/call %q", params.Name)
	call := &inflightCall{what: what, downstream: o.Downstream, ctx: ctx, onProgress: o.OnProgress, callerToken: params.GetProgressToken()}
	id := c.calls.add(call, "toolfold")
	defer c.calls.remove(id)

	// A copy: the caller's params stay untouched, and the caller's progress
	// token (meaningful on its own connection only) is replaced by one that is
	// unique on this connection, or dropped when nobody listens.
	p := *params
	p.Arguments = nonNullArguments(p.Arguments)
	p.Meta = maps.Clone(params.Meta)
	delete(p.Meta, "progressToken")
	if o.OnProgress != nil {
		p.SetProgressToken(id)
	}

	callCtx, cancel := s.requestContext(ctx)
	defer cancel()
	res, err := withInput(ctx, callCtx, s, c, what, o.Downstream,
		func(ctx context.Context) (*mcp.CallToolResult, error) { return c.session.CallTool(ctx, &p) },
		func(responses mcp.InputResponseMap, state string) {
			p.InputResponses, p.RequestState = responses, state
		})
	if err != nil {
		return nil, err
	}
	c.calls.settle(id)
	if o.OnProgress != nil {
		call.progress.drain(progressDrainMax)
	}
	return res, nil
}

// withInput sends a request that the upstream may answer with questions
// (tools/call, prompts/get, resources/read) and answers them through the
// caller's Downstream, sending the request again with the answers until
// the upstream gives its result. send sends the request as its params
// stand; answer puts one round's answers and the upstream's requestState
// into them. ctx is the caller's context, callCtx the one bounded by the
// server's timeout; every error is explained for the caller.
func withInput[R any](ctx, callCtx context.Context, s *server, c *connection, what string, d Downstream,
	send func(context.Context) (R, error), answer func(mcp.InputResponseMap, string)) (R, error) {
	var zero R
	busy := 0
	for round := 1; ; round++ {
		res, err := send(callCtx)
		if err != nil {
			return zero, s.requestError(ctx, callCtx, c, what, err)
		}
		// An upstream on a session protocol (2025-11-25, as toolfold offers)
		// whose handlers ask in the multi-round-trip style gets its first
		// round answered by its SDK with requests on the connection, but a
		// second round comes back as a plain result carrying inputRequests
		// (no resultType: the old protocol has none). It is a question all
		// the same, and answered here like one.
		reqs, state, asks := questionsOf(res)
		if !asks {
			return res, nil
		}
		if round >= maxInputRounds {
			return zero, fmt.Errorf("upstream %q asked for input %d times during %s; giving up", s.name, round, what)
		}
		if len(reqs) == 0 { // the server is shedding load
			busy++
			if busy > maxBusyRetries {
				return zero, fmt.Errorf("upstream %q is too busy to answer %s; try again later", s.name, what)
			}
			// The caller's trace shows each retry (a no-op when untraced).
			trace.SpanFromContext(ctx).AddEvent("retry", trace.WithAttributes(attribute.String("toolfold.retry.reason", "busy"), attribute.Int("toolfold.retry.attempt", busy)))
			if err := sleep(callCtx, time.Duration(busy)*busyRetryPadding); err != nil {
				return zero, s.requestError(ctx, callCtx, c, what, err)
			}
		}
		responses, err := fulfillInputRequests(callCtx, s.name, d, reqs)
		if err != nil {
			if callCtx.Err() != nil {
				return zero, s.requestError(ctx, callCtx, c, what, err)
			}
			return zero, err
		}
		answer(responses, state)
	}
}

// questionsOf reads what a multi-round-trip result asks: its input
// requests, the state to send back with the answers, and whether it asks
// at all (an input-required result with no requests is a busy server).
func questionsOf(res any) (mcp.InputRequestMap, string, bool) {
	switch r := res.(type) {
	case *mcp.CallToolResult:
		if r != nil {
			return r.InputRequests, r.RequestState, r.NeedsInput() || len(r.InputRequests) > 0
		}
	case *mcp.GetPromptResult:
		if r != nil {
			return r.InputRequests, r.RequestState, r.NeedsInput() || len(r.InputRequests) > 0
		}
	case *mcp.ReadResourceResult:
		if r != nil {
			return r.InputRequests, r.RequestState, r.NeedsInput() || len(r.InputRequests) > 0
		}
	}
	return nil, "", false
}

// nonNullArguments turns absent arguments (nil, a nil map, JSON null) into {}:
// servers validate arguments as an object and refuse null.
func nonNullArguments(a any) any {
	switch v := a.(type) {
	case nil:
		return map[string]any{}
	case map[string]any:
		if v == nil {
			return map[string]any{}
		}
	case json.RawMessage:
		if len(bytes.TrimSpace(v)) == 0 || string(bytes.TrimSpace(v)) == "null" {
			return map[string]any{}
		}
	}
	return a
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// requestError explains why a request got no answer. parent is the caller's
// context, callCtx the one bounded by the server's timeout.
func (s *server) requestError(parent, callCtx context.Context, c *connection, what string, err error) error {
	switch {
	case errors.Is(context.Cause(callCtx), errShutdown):
		return s.errorf(ErrClosed, err, "upstream %q was stopped during %s: toolfold is shutting down", s.name, what)
	case parent.Err() != nil:
		return s.errorf(nil, err, "the request %s to upstream %q was cancelled by the caller: %v", what, s.name, context.Cause(parent))
	case errors.Is(context.Cause(callCtx), errCallTimeout):
		return s.errorf(ErrTimeout, err, "upstream %q did not answer %s within %s", s.name, what, humanDuration(s.timeout))
	}
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) && isTooLarge(rpcErr) {
		return s.tooLargeError(what, err)
	}
	if errors.As(err, &rpcErr) && isInvalidAnswer(rpcErr) {
		return s.invalidAnswerError(what, err)
	}
	if errors.As(err, &rpcErr) {
		return s.errorf(nil, err, "upstream %q answered %s with an error: %s", s.name, what, rpcErr.Message)
	}
	if sessionLost(err) {
		// The request was refused unread; the caller retries it on a new
		// session, which it must get whatever the watcher is doing.
		s.dropLostSession(c)
		return s.errorf(ErrExited, err, "upstream %q forgot toolfold's session during %s (it answered 404 session not found, as after a restart)", s.name, what)
	}
	// Anything else means the connection broke. Wait for the watcher to reap
	// the process so the error can say how it ended and what it last said.
	t := time.NewTimer(endGrace)
	defer t.Stop()
	select {
	case <-c.ended:
	case <-t.C:
		return s.errorf(nil, err, "upstream %q failed to answer %s: %v", s.name, what, err)
	}
	if c.stopping.Load() {
		return s.errorf(ErrClosed, err, "upstream %q was stopped during %s", s.name, what)
	}
	return s.errorf(ErrExited, err, "upstream %q %s during %s (%s)%s; it will be restarted on the next call", s.name, c.endVerb, what, c.endDetail, c.stderrSuffix())
}

// do runs one pass-through request on a server that offers the feature,
// starting the server if needed and bounding the request by its timeout.
func do[T any](ctx context.Context, m *Manager, server, what, feature string, offers func(*mcp.ServerCapabilities) bool, f func(context.Context, *mcp.ClientSession) (T, error)) (T, error) {
	res, err := doOnce(ctx, m, server, what, feature, offers, f)
	if sessionLost(err) {
		// As for CallTool: the request was refused unread; once more on a
		// new session.
		res, err = doOnce(ctx, m, server, what, feature, offers, f)
	}
	return res, err
}

func doOnce[T any](ctx context.Context, m *Manager, server, what, feature string, offers func(*mcp.ServerCapabilities) bool, f func(context.Context, *mcp.ClientSession) (T, error)) (T, error) {
	var zero T
	s, c, err := passThrough(ctx, m, server, feature, offers)
	if err != nil {
		return zero, err
	}
	defer s.release(c)
	callCtx, cancel := s.requestContext(ctx)
	defer cancel()
	res, err := f(callCtx, c.session)
	if err != nil {
		return zero, s.requestError(ctx, callCtx, c, what, err)
	}
	return res, nil
}

// doAsking runs a pass-through request during which the upstream may ask
// its client for input (prompts/get, resources/read, completion/complete).
// Like a tool call it is registered as a request in flight with the
// caller's Downstream, so an elicitation, sampling or roots request the
// upstream sends meanwhile reaches that caller; and a result that asks
// (multi-round trip) is answered through the same Downstream and the
// request sent again (see withInput). answer is nil for a request whose
// result cannot ask.
func doAsking[T any](ctx context.Context, m *Manager, server, what, feature string, offers func(*mcp.ServerCapabilities) bool, opts *CallOptions,
	send func(context.Context, *mcp.ClientSession) (T, error), answer func(mcp.InputResponseMap, string)) (T, error) {
	var zero T
	s, c, err := passThrough(ctx, m, server, feature, offers)
	if err != nil {
		return zero, err
	}
	defer s.release(c)
	var d Downstream
	if opts != nil {
		d = opts.Downstream
	}
	id := c.calls.add(&inflightCall{what: what, downstream: d, ctx: ctx}, "toolfold-req")
	defer c.calls.remove(id)
	callCtx, cancel := s.requestContext(ctx)
	defer cancel()
	if answer == nil {
		res, err := send(callCtx, c.session)
		if err != nil {
			return zero, s.requestError(ctx, callCtx, c, what, err)
		}
		return res, nil
	}
	return withInput(ctx, callCtx, s, c, what, d, func(ctx context.Context) (T, error) { return send(ctx, c.session) }, answer)
}

// passThrough connects to a server for a pass-through request, which it
// must offer. The caller gives the lease back with s.release(c).
func passThrough(ctx context.Context, m *Manager, server, feature string, offers func(*mcp.ServerCapabilities) bool) (*server, *connection, error) {
	s, err := m.lookup(server)
	if err != nil {
		return nil, nil, err
	}
	c, err := s.connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	caps := &mcp.ServerCapabilities{}
	if ir := c.session.InitializeResult(); ir != nil && ir.Capabilities != nil {
		caps = ir.Capabilities
	}
	if !offers(caps) {
		s.release(c)
		return nil, nil, newError(ErrUnsupported, nil, "upstream %q does not offer %s", server, feature)
	}
	return s, c, nil
}

func offersResources(c *mcp.ServerCapabilities) bool   { return c.Resources != nil }
func offersPrompts(c *mcp.ServerCapabilities) bool     { return c.Prompts != nil }
func offersCompletions(c *mcp.ServerCapabilities) bool { return c.Completions != nil }
func offersLogging(c *mcp.ServerCapabilities) bool     { return c.Logging != nil }

// ListResources returns every resource of a server (all pages).
func (m *Manager) ListResources(ctx context.Context, server string) ([]*mcp.Resource, error) {
	list, err := do(ctx, m, server, "resources/list", "resources", offersResources, func(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Resource, error) {
		return collect(cs.Resources(ctx, nil))
	})
	return maskedList(m, server, list, err)
}

// ListResourceTemplates returns every resource template of a server (all pages).
func (m *Manager) ListResourceTemplates(ctx context.Context, server string) ([]*mcp.ResourceTemplate, error) {
	list, err := do(ctx, m, server, "resources/templates/list", "resources", offersResources, func(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.ResourceTemplate, error) {
		return collect(cs.ResourceTemplates(ctx, nil))
	})
	return maskedList(m, server, list, err)
}

// ReadResource reads one resource of a server. opts (may be nil) carries
// the Downstream that answers what the server asks while serving the read.
func (m *Manager) ReadResource(ctx context.Context, server string, params *mcp.ReadResourceParams, opts *CallOptions) (*mcp.ReadResourceResult, error) {
	if params == nil {
		return nil, fmt.Errorf("reading a resource of upstream %q needs a URI", server)
	}
	p := *params // the caller's params stay untouched across rounds
	res, err := doAsking(ctx, m, server, fmt.Sprintf("resources/read %q", params.URI), "resources", offersResources, opts,
		func(ctx context.Context, cs *mcp.ClientSession) (*mcp.ReadResourceResult, error) {
			return cs.ReadResource(ctx, &p)
		},
		func(responses mcp.InputResponseMap, state string) {
			p.InputResponses, p.RequestState = responses, state
		})
	return maskedResult(m, server, res, err)
}

// ListPrompts returns every prompt of a server (all pages).
func (m *Manager) ListPrompts(ctx context.Context, server string) ([]*mcp.Prompt, error) {
	list, err := do(ctx, m, server, "prompts/list", "prompts", offersPrompts, func(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Prompt, error) {
		return collect(cs.Prompts(ctx, nil))
	})
	return maskedList(m, server, list, err)
}

// GetPrompt gets one prompt of a server. opts (may be nil) carries the
// Downstream that answers what the server asks while serving the prompt.
func (m *Manager) GetPrompt(ctx context.Context, server string, params *mcp.GetPromptParams, opts *CallOptions) (*mcp.GetPromptResult, error) {
	if params == nil {
		return nil, fmt.Errorf("getting a prompt of upstream %q needs a prompt name", server)
	}
	p := *params // the caller's params stay untouched across rounds
	res, err := doAsking(ctx, m, server, fmt.Sprintf("prompts/get %q", params.Name), "prompts", offersPrompts, opts,
		func(ctx context.Context, cs *mcp.ClientSession) (*mcp.GetPromptResult, error) {
			return cs.GetPrompt(ctx, &p)
		},
		func(responses mcp.InputResponseMap, state string) {
			p.InputResponses, p.RequestState = responses, state
		})
	return maskedResult(m, server, res, err)
}

// Complete asks a server for argument completions. A completion result
// cannot ask for input, but a server on a session protocol may still send
// its client a request while it completes: opts (may be nil) carries the
// Downstream that answers it.
func (m *Manager) Complete(ctx context.Context, server string, params *mcp.CompleteParams, opts *CallOptions) (*mcp.CompleteResult, error) {
	return doAsking(ctx, m, server, "completion/complete", "completions", offersCompletions, opts,
		func(ctx context.Context, cs *mcp.ClientSession) (*mcp.CompleteResult, error) {
			return cs.Complete(ctx, params)
		}, nil)
}

// SetLoggingLevel sets the level of the log messages a server sends (to
// Options.OnLog).
func (m *Manager) SetLoggingLevel(ctx context.Context, server string, level mcp.LoggingLevel) error {
	_, err := do(ctx, m, server, "logging/setLevel", "logging", offersLogging, func(ctx context.Context, cs *mcp.ClientSession) (struct{}, error) {
		return struct{}{}, cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level})
	})
	return err
}

func collect[T any](seq func(yield func(*T, error) bool)) ([]*T, error) {
	out := []*T{}
	for v, err := range seq {
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func offersSubscribe(c *mcp.ServerCapabilities) bool {
	return c.Resources != nil && c.Resources.Subscribe
}

// Subscribe asks a server to announce changes of one resource; they arrive
// through Options.OnResourceUpdated.
func (m *Manager) Subscribe(ctx context.Context, server string, params *mcp.SubscribeParams) error {
	_, err := do(ctx, m, server, fmt.Sprintf("resources/subscribe %q", params.URI), "resource subscriptions", offersSubscribe, func(ctx context.Context, cs *mcp.ClientSession) (struct{}, error) {
		if err := cs.Subscribe(ctx, params); err != nil {
			return struct{}{}, err
		}
		// Counted before the lease is given back, so the server cannot be
		// stopped for idleness between the two.
		if s, err := m.lookup(server); err == nil {
			s.subscribed(params.URI, 1)
		}
		return struct{}{}, nil
	})
	return err
}

// Unsubscribe cancels a Subscribe.
func (m *Manager) Unsubscribe(ctx context.Context, server string, params *mcp.UnsubscribeParams) error {
	// The client gives the subscription up whatever happens to the request.
	if s, err := m.lookup(server); err == nil {
		s.subscribed(params.URI, -1)
	}
	_, err := do(ctx, m, server, fmt.Sprintf("resources/unsubscribe %q", params.URI), "resource subscriptions", offersSubscribe, func(ctx context.Context, cs *mcp.ClientSession) (struct{}, error) {
		return struct{}{}, cs.Unsubscribe(ctx, params)
	})
	return err
}
