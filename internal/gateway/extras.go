package gateway

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/sdkshim"
)

// Extras are the MCP features beside tools that the gateway passes through
// from its sources: prompts, resources, resource templates and completion.
// The gateway answers these requests from Extras for every client, in every
// mode: they cost no model context until a client uses them, so there is
// nothing to fold.
type Extras interface {
	ListPrompts(ctx context.Context) ([]*mcp.Prompt, error)
	GetPrompt(ctx context.Context, params *mcp.GetPromptParams) (*mcp.GetPromptResult, error)
	ListResources(ctx context.Context) ([]*mcp.Resource, error)
	ListResourceTemplates(ctx context.Context) ([]*mcp.ResourceTemplate, error)
	ReadResource(ctx context.Context, params *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error)
	Complete(ctx context.Context, params *mcp.CompleteParams) (*mcp.CompleteResult, error)
	// SetLoggingLevel learns a client's wish for log messages; the gateway
	// still filters per client.
	SetLoggingLevel(ctx context.Context, level mcp.LoggingLevel)
	Subscribe(ctx context.Context, params *mcp.SubscribeParams) error
	Unsubscribe(ctx context.Context, params *mcp.UnsubscribeParams) error
}

// extrasMiddleware answers the pass-through methods from g.opts.Extras.
func (g *Gateway) extrasMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	x := g.opts.Extras
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "prompts/list", "resources/list", "resources/templates/list":
			// These lists are one page each: no cursor of ours names a
			// later one, and serving the first again would loop a client.
			if cursorOf(req.GetParams()) != "" {
				return nil, invalidParams("invalid cursor for %s: its answer is one page with no nextCursor; send it without a cursor", method)
			}
		}
		switch method {
		case "prompts/list":
			prompts, err := g.listPrompts(ctx, req)
			if err != nil {
				return nil, err
			}
			return &mcp.ListPromptsResult{Prompts: nonNil(prompts), Cacheable: g.listCacheable()}, nil
		case "prompts/get":
			if r, ok := req.(*mcp.GetPromptRequest); ok {
				return g.getPrompt(ctx, x, r)
			}
		case "resources/list":
			resources, err := g.listResources(ctx, req)
			if err != nil {
				return nil, err
			}
			return &mcp.ListResourcesResult{Resources: nonNil(resources), Cacheable: g.listCacheable()}, nil
		case "resources/templates/list":
			templates, err := g.listTemplates(ctx, req)
			if err != nil {
				return nil, err
			}
			return &mcp.ListResourceTemplatesResult{ResourceTemplates: nonNil(templates), Cacheable: g.listCacheable()}, nil
		case "resources/read":
			if r, ok := req.(*mcp.ReadResourceRequest); ok {
				return g.readResource(ctx, x, r)
			}
		case "completion/complete":
			if r, ok := req.(*mcp.CompleteRequest); ok {
				// A completion result cannot ask, so a 2026-07-28 client is
				// not asked through results: its session, which cannot be
				// sent requests, refuses the source's questions.
				return x.Complete(withSession(ctx, r.Session), r.Params)
			}
		case "logging/setLevel":
			if p, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok && p != nil {
				x.SetLoggingLevel(ctx, p.Level)
			}
		}
		return next(ctx, method, req)
	}
}

// getPrompt serves prompts/get from x, with its audit line.
func (g *Gateway) getPrompt(ctx context.Context, x Extras, r *mcp.GetPromptRequest) (mcp.Result, error) {
	params := *r.Params
	// The client's answers are to toolfold's questions (see
	// input.go), not the source's.
	params.InputResponses, params.RequestState = nil, ""
	start := time.Now()
	res, err := askingRequest(ctx, g.inputs, r, promptRequest, func(ctx context.Context) (*mcp.GetPromptResult, error) {
		return x.GetPrompt(ctx, &params)
	})
	if res == nil || !res.NeedsInput() {
		name, source := "(unknown)", ""
		if sx, sourced := x.(SourcedExtras); sourced {
			if src, listed := sx.PromptSource(ctx, r.Params.Name); listed {
				name, source = r.Params.Name, src
			}
		}
		g.auditRead(ctx, r.Extra, "prompt get", "prompt", name, source, err, start)
	}
	return res, err
}

// readResource serves resources/read from x, with its audit line.
func (g *Gateway) readResource(ctx context.Context, x Extras, r *mcp.ReadResourceRequest) (mcp.Result, error) {
	// A URI no source lists, nor any template matches, is
	// not guessed at: no source is sent it.
	start := time.Now()
	var source string
	if sx, sourced := x.(SourcedExtras); sourced {
		src, listed := sx.ResourceSource(ctx, r.Params.URI)
		if !listed {
			err := invalidParams("no resource %q is served here: read a URI that resources/list lists, or one that matches a template of resources/templates/list", r.Params.URI)
			g.auditRead(ctx, r.Extra, "resource read", "uri", "(unknown)", "", err, start)
			return nil, err
		}
		source = src
	}
	params := *r.Params
	params.InputResponses, params.RequestState = nil, ""
	res, err := askingRequest(ctx, g.inputs, r, readRequest, func(ctx context.Context) (*mcp.ReadResourceResult, error) {
		return x.ReadResource(ctx, &params)
	})
	if res == nil || !res.NeedsInput() {
		g.auditRead(ctx, r.Extra, "resource read", "uri", r.Params.URI, source, err, start)
	}
	return res, err
}

// askingRequest serves a pass-through request during which the source may
// ask the client for input (prompts/get, resources/read), with the
// Downstream that asks it in the context: for a 2026-07-28 client the
// broker's stand-in, which asks through an InputRequiredResult and
// completes the request on the client's retry (see input.go); for any
// other, the client's own session.
func askingRequest[P mcp.Params, R mcp.Result](ctx context.Context, b *inputBroker, req *mcp.ServerRequest[P], bind func(*mcp.ServerRequest[P]) inputRequest, serve func(context.Context) (R, error)) (R, error) {
	if req.ProtocolVersion() < statelessProtocol {
		return serve(withSession(ctx, req.Session))
	}
	res, _, err := serveInput(ctx, b, bind(req), serve) // no tools/call: nothing to record
	if err != nil {
		return res, err
	}
	return sdkshim.Complete(res), nil
}

// withSession makes the client's session the Downstream of a request.
func withSession(ctx context.Context, ss *mcp.ServerSession) context.Context {
	if ss == nil {
		return ctx
	}
	return withDownstream(ctx, ss)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Log sends a log message from a source to every connected client; the SDK
// drops it for clients that asked for a higher level.
func (g *Gateway) Log(ctx context.Context, msg *mcp.LoggingMessageParams) {
	for _, s := range g.sessions() {
		for ss := range s.server.Sessions() {
			_ = ss.Log(ctx, msg)
		}
	}
}

// ResourceUpdated tells the clients subscribed to a resource that it
// changed.
func (g *Gateway) ResourceUpdated(ctx context.Context, params *mcp.ResourceUpdatedNotificationParams) {
	for _, s := range g.sessions() {
		_ = s.server.ResourceUpdated(ctx, params)
	}
}

// sessions are the shared sessions, the live groups-mode ones and those of
// the group endpoints, which pass the same prompts, resources and logs
// through.
func (g *Gateway) sessions() []*session {
	out := []*session{g.perRequest}
	for _, s := range g.sharedSessions() {
		out = append(out, s)
	}
	out = append(out, g.liveSessions()...)
	g.groups.mu.Lock()
	defer g.groups.mu.Unlock()
	for _, ep := range g.groups.by {
		out = append(out, ep.gw.sessions()...)
	}
	return out
}
