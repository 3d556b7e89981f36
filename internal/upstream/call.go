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
	c, err := s.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer s.release(c)
	var o CallOptions
	if opts != nil {
		o = *opts
	}
	call := &inflightCall{tool: params.Name, downstream: o.Downstream, ctx: ctx, onProgress: o.OnProgress, callerToken: params.GetProgressToken()}
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
	what := fmt.Sprintf("tools/call %q", params.Name)
	busy := 0
	for round := 1; ; round++ {
		res, err := c.session.CallTool(callCtx, &p)
		if err != nil {
			return nil, s.requestError(ctx, callCtx, c, what, err)
		}
		// An upstream on a session protocol (2025-11-25, as toolfold offers)
		// whose handlers ask in the multi-round-trip style gets its first
		// round answered by its SDK with requests on the connection, but a
		// second round comes back as a plain result carrying inputRequests
		// (no resultType: the old protocol has none). It is a question all
		// the same, and answered here like one.
		if !res.NeedsInput() && len(res.InputRequests) == 0 {
			c.calls.settle(id)
			if o.OnProgress != nil {
				call.progress.drain(progressDrainMax)
			}
			return res, nil
		}
		if round >= maxInputRounds {
			return nil, fmt.Errorf("upstream %q asked for input %d times during %s; giving up", server, round, what)
		}
		if len(res.InputRequests) == 0 { // the server is shedding load
			busy++
			if busy > maxBusyRetries {
				return nil, fmt.Errorf("upstream %q is too busy to answer %s; try again later", server, what)
			}
			if err := sleep(callCtx, time.Duration(busy)*busyRetryPadding); err != nil {
				return nil, s.requestError(ctx, callCtx, c, what, err)
			}
		}
		responses, err := fulfillInputRequests(callCtx, server, o.Downstream, res.InputRequests)
		if err != nil {
			if callCtx.Err() != nil {
				return nil, s.requestError(ctx, callCtx, c, what, err)
			}
			return nil, err
		}
		p.InputResponses, p.RequestState = responses, res.RequestState
	}
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
		return newError(ErrClosed, err, "upstream %q was stopped during %s: toolfold is shutting down", s.name, what)
	case parent.Err() != nil:
		return newError(nil, err, "the request %s to upstream %q was cancelled by the caller: %v", what, s.name, context.Cause(parent))
	case errors.Is(context.Cause(callCtx), errCallTimeout):
		return newError(ErrTimeout, err, "upstream %q did not answer %s within %s", s.name, what, humanDuration(s.timeout))
	}
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		return newError(nil, err, "upstream %q answered %s with an error: %s", s.name, what, rpcErr.Message)
	}
	// Anything else means the connection broke. Wait for the watcher to reap
	// the process so the error can say how it ended and what it last said.
	t := time.NewTimer(endGrace)
	defer t.Stop()
	select {
	case <-c.ended:
	case <-t.C:
		return newError(nil, err, "upstream %q failed to answer %s: %v", s.name, what, err)
	}
	if c.stopping.Load() {
		return newError(ErrClosed, err, "upstream %q was stopped during %s", s.name, what)
	}
	return newError(ErrExited, err, "upstream %q %s during %s (%s)%s; it will be restarted on the next call", s.name, c.endVerb, what, c.endDetail, c.stderrSuffix())
}

// do runs one pass-through request on a server that offers the feature,
// starting the server if needed and bounding the request by its timeout.
func do[T any](ctx context.Context, m *Manager, server, what, feature string, offers func(*mcp.ServerCapabilities) bool, f func(context.Context, *mcp.ClientSession) (T, error)) (T, error) {
	var zero T
	s, err := m.lookup(server)
	if err != nil {
		return zero, err
	}
	c, err := s.connect(ctx)
	if err != nil {
		return zero, err
	}
	defer s.release(c)
	caps := &mcp.ServerCapabilities{}
	if ir := c.session.InitializeResult(); ir != nil && ir.Capabilities != nil {
		caps = ir.Capabilities
	}
	if !offers(caps) {
		return zero, newError(ErrUnsupported, nil, "upstream %q does not offer %s", server, feature)
	}
	callCtx, cancel := s.requestContext(ctx)
	defer cancel()
	res, err := f(callCtx, c.session)
	if err != nil {
		return zero, s.requestError(ctx, callCtx, c, what, err)
	}
	return res, nil
}

func offersResources(c *mcp.ServerCapabilities) bool   { return c.Resources != nil }
func offersPrompts(c *mcp.ServerCapabilities) bool     { return c.Prompts != nil }
func offersCompletions(c *mcp.ServerCapabilities) bool { return c.Completions != nil }
func offersLogging(c *mcp.ServerCapabilities) bool     { return c.Logging != nil }

// ListResources returns every resource of a server (all pages).
func (m *Manager) ListResources(ctx context.Context, server string) ([]*mcp.Resource, error) {
	return do(ctx, m, server, "resources/list", "resources", offersResources, func(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Resource, error) {
		return collect(cs.Resources(ctx, nil))
	})
}

// ListResourceTemplates returns every resource template of a server (all pages).
func (m *Manager) ListResourceTemplates(ctx context.Context, server string) ([]*mcp.ResourceTemplate, error) {
	return do(ctx, m, server, "resources/templates/list", "resources", offersResources, func(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.ResourceTemplate, error) {
		return collect(cs.ResourceTemplates(ctx, nil))
	})
}

// ReadResource reads one resource of a server.
func (m *Manager) ReadResource(ctx context.Context, server string, params *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	what := "resources/read"
	if params != nil {
		what = fmt.Sprintf("resources/read %q", params.URI)
	}
	return do(ctx, m, server, what, "resources", offersResources, func(ctx context.Context, cs *mcp.ClientSession) (*mcp.ReadResourceResult, error) {
		return cs.ReadResource(ctx, params)
	})
}

// ListPrompts returns every prompt of a server (all pages).
func (m *Manager) ListPrompts(ctx context.Context, server string) ([]*mcp.Prompt, error) {
	return do(ctx, m, server, "prompts/list", "prompts", offersPrompts, func(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Prompt, error) {
		return collect(cs.Prompts(ctx, nil))
	})
}

// GetPrompt gets one prompt of a server.
func (m *Manager) GetPrompt(ctx context.Context, server string, params *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	what := "prompts/get"
	if params != nil {
		what = fmt.Sprintf("prompts/get %q", params.Name)
	}
	return do(ctx, m, server, what, "prompts", offersPrompts, func(ctx context.Context, cs *mcp.ClientSession) (*mcp.GetPromptResult, error) {
		return cs.GetPrompt(ctx, params)
	})
}

// Complete asks a server for argument completions.
func (m *Manager) Complete(ctx context.Context, server string, params *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	return do(ctx, m, server, "completion/complete", "completions", offersCompletions, func(ctx context.Context, cs *mcp.ClientSession) (*mcp.CompleteResult, error) {
		return cs.Complete(ctx, params)
	})
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
		m.servers[server].subscribed(params.URI, 1)
		return struct{}{}, nil
	})
	return err
}

// Unsubscribe cancels a Subscribe.
func (m *Manager) Unsubscribe(ctx context.Context, server string, params *mcp.UnsubscribeParams) error {
	// The client gives the subscription up whatever happens to the request.
	if s, ok := m.servers[server]; ok {
		s.subscribed(params.URI, -1)
	}
	_, err := do(ctx, m, server, fmt.Sprintf("resources/unsubscribe %q", params.URI), "resource subscriptions", offersSubscribe, func(ctx context.Context, cs *mcp.ClientSession) (struct{}, error) {
		return struct{}{}, cs.Unsubscribe(ctx, params)
	})
	return err
}
