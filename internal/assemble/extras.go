package assemble

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/trust"
	"github.com/toolfold/toolfold/internal/upstream"
)

var (
	_ gateway.Extras        = (*Upstreams)(nil)
	_ gateway.SourceListing = (*Upstreams)(nil)
)

// offers reports whether a server is known to offer a feature, from its
// live or cached capabilities: listing prompts starts the servers that have
// prompts, and no other.
func (u *Upstreams) offers(key string, has func(*mcp.ServerCapabilities) bool) bool {
	info, ok := u.Manager.ServerInfo(key)
	return ok && info.Capabilities != nil && has(info.Capabilities)
}

func (s upstreamServer) qualify(name string) string {
	if s.prefix == "" {
		return name
	}
	return s.prefix + s.sep + name
}

// routes remembers which server answered for a name or URI, so a later
// get, read or complete goes to the right one.
type routes struct {
	mu        sync.Mutex
	prompts   map[string]promptRoute
	resources map[string]string // URI → server
	templates map[string]string // URI template → server
	// held are the refusals of the prompts (by the name clients see) and
	// resources (by URI) the last listings held back (trust.onChange…).
	held map[string]heldRoute
}

// heldRoute is a held prompt's or resource's refusal and its server.
type heldRoute struct{ server, refusal string }

type promptRoute struct{ server, name string }

func (r *routes) set(update func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.prompts == nil {
		r.prompts, r.resources, r.templates, r.held = map[string]promptRoute{}, map[string]string{}, map[string]string{}, map[string]heldRoute{}
	}
	update()
}

// forget drops a server's prompt routes, or its resource and template
// routes, after it announced that those lists changed: a route to a prompt
// it no longer has, or a URI another server now serves, must not outlive
// the change. The next listing records them afresh.
func (r *routes) forget(server string, prompts, resources bool) {
	r.set(func() {
		if prompts {
			for name, pr := range r.prompts {
				if pr.server == server {
					delete(r.prompts, name)
				}
			}
		}
		for key, h := range r.held {
			if h.server == server && (prompts && strings.HasPrefix(key, "prompt:") || resources && !strings.HasPrefix(key, "prompt:")) {
				delete(r.held, key)
			}
		}
		if resources {
			for _, m := range []map[string]string{r.resources, r.templates} {
				for uri, s := range m {
					if s == server {
						delete(m, uri)
					}
				}
			}
		}
	})
}

// ListPrompts lists the prompts of every server that has any, named like
// its tools ("github__review").
func (u *Upstreams) ListPrompts(ctx context.Context) ([]*mcp.Prompt, error) {
	return u.ListPromptsOf(ctx, nil)
}

// ListPromptsOf is ListPrompts of the servers for which from reports true
// (nil: all), for the groups that scope a server's prompts.
func (u *Upstreams) ListPromptsOf(ctx context.Context, from func(server string) bool) ([]*mcp.Prompt, error) {
	return gather(ctx, u, from, hasPrompts, u.Manager.ListPrompts, func(s upstreamServer, prompts []*mcp.Prompt) []*mcp.Prompt {
		held := judgeListingOf(u, s.key, trust.KindPrompt, prompts, func(p *mcp.Prompt) string { return p.Name }, trust.PromptItem)
		out := make([]*mcp.Prompt, 0, len(prompts))
		u.routes.set(func() {
			for _, p := range prompts {
				name := s.qualify(p.Name)
				if h, ok := held[p.Name]; ok {
					delete(u.routes.prompts, name)
					u.routes.held["prompt:"+name] = heldRoute{s.key, h.Refusal()}
					continue
				}
				delete(u.routes.held, "prompt:"+name)
				u.routes.prompts[name] = promptRoute{s.key, p.Name}
				out = append(out, sanitizedPrompt(p, name))
			}
		})
		return out
	})
}

func hasPrompts(c *mcp.ServerCapabilities) bool   { return c.Prompts != nil }
func hasResources(c *mcp.ServerCapabilities) bool { return c.Resources != nil }
func hasLogging(c *mcp.ServerCapabilities) bool   { return c.Logging != nil }

// gather asks every server that offers a feature (of those for which from
// reports true; nil means all) for its list and keeps what keep makes of
// each (routes recorded, names qualified).
func gather[T any](ctx context.Context, u *Upstreams, from func(string) bool, offered func(*mcp.ServerCapabilities) bool,
	list func(context.Context, string) ([]T, error), keep func(upstreamServer, []T) []T) ([]T, error) {
	var out []T
	var errs []error
	// Whether a server still starting offers the feature is known once it
	// has started.
	u.awaitPending(ctx, from)
	for _, s := range u.serverList() {
		if (from != nil && !from(s.key)) || !u.offers(s.key, offered) {
			continue
		}
		items, err := list(ctx, s.key)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, keep(s, items)...)
	}
	return out, partial(out, errs)
}

// partial fails a listing only when every server failed; a listing that
// lost some servers is still useful, and their errors are in /healthz.
func partial[T any](got []T, errs []error) error {
	if len(got) == 0 && len(errs) > 0 {
		return errors.Join(errs...)
	}
	return nil
}

func (u *Upstreams) promptRoute(ctx context.Context, name string) (promptRoute, error) {
	u.routes.mu.Lock()
	r, ok := u.routes.prompts[name]
	u.routes.mu.Unlock()
	if ok {
		return r, nil
	}
	// Listed afresh even when the last listing held it: the server may
	// have gone back to its pinned text, or an operator approved it.
	if _, err := u.ListPrompts(ctx); err != nil {
		return promptRoute{}, err
	}
	u.routes.mu.Lock()
	defer u.routes.mu.Unlock()
	if r, ok := u.routes.prompts[name]; ok {
		return r, nil
	}
	if h, ok := u.routes.held["prompt:"+name]; ok {
		return promptRoute{}, errors.New(h.refusal)
	}
	return promptRoute{}, fmt.Errorf("there is no prompt %q; prompts/list names them", name)
}

// GetPrompt gets a prompt from the server that offers it.
func (u *Upstreams) GetPrompt(ctx context.Context, params *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	r, err := u.promptRoute(ctx, params.Name)
	if err != nil {
		return nil, err
	}
	p := *params
	p.Name, p.Meta = r.name, hopMeta(params.Meta)
	return u.Manager.GetPrompt(ctx, r.server, &p, askVia(ctx))
}

// askVia is where an upstream's questions during a prompt, a read or a
// completion go: the Downstream the gateway put in the request's context,
// the client's own session or its stand-in that asks through results. The
// Manager registers the request with it, so a question the upstream sends
// meanwhile reaches the client that caused it.
func askVia(ctx context.Context) *upstream.CallOptions {
	if d := gateway.DownstreamFrom(ctx); d != nil {
		return &upstream.CallOptions{Downstream: d}
	}
	return nil
}

// ListResources lists the resources of every server that has any. URIs
// are kept as the servers gave them: they are addresses, not names.
func (u *Upstreams) ListResources(ctx context.Context) ([]*mcp.Resource, error) {
	return u.ListResourcesOf(ctx, nil)
}

// ListResourcesOf is ListResources of the servers for which from reports
// true (nil: all).
func (u *Upstreams) ListResourcesOf(ctx context.Context, from func(server string) bool) ([]*mcp.Resource, error) {
	return gather(ctx, u, from, hasResources, u.Manager.ListResources, func(s upstreamServer, resources []*mcp.Resource) []*mcp.Resource {
		held := judgeListingOf(u, s.key, trust.KindResource, resources, func(r *mcp.Resource) string { return r.URI }, trust.ResourceItem)
		out := make([]*mcp.Resource, 0, len(resources))
		u.routes.set(func() {
			for _, r := range resources {
				if h, ok := held[r.URI]; ok {
					if u.routes.resources[r.URI] == s.key {
						delete(u.routes.resources, r.URI)
					}
					u.routes.held["resource:"+r.URI] = heldRoute{s.key, h.Refusal()}
					continue
				}
				if u.routes.held["resource:"+r.URI].server == s.key {
					delete(u.routes.held, "resource:"+r.URI)
				}
				if _, taken := u.routes.resources[r.URI]; !taken {
					u.routes.resources[r.URI] = s.key
				}
				out = append(out, sanitizedResource(r))
			}
		})
		return out
	})
}

// ListResourceTemplates lists every server's resource templates.
func (u *Upstreams) ListResourceTemplates(ctx context.Context) ([]*mcp.ResourceTemplate, error) {
	return gather(ctx, u, nil, hasResources, u.Manager.ListResourceTemplates, func(s upstreamServer, templates []*mcp.ResourceTemplate) []*mcp.ResourceTemplate {
		held := judgeListingOf(u, s.key, trust.KindTemplate, templates, func(t *mcp.ResourceTemplate) string { return t.URITemplate }, trust.TemplateItem)
		out := make([]*mcp.ResourceTemplate, 0, len(templates))
		u.routes.set(func() {
			for _, t := range templates {
				if _, ok := held[t.URITemplate]; ok {
					if u.routes.templates[t.URITemplate] == s.key {
						delete(u.routes.templates, t.URITemplate)
					}
					continue
				}
				if _, taken := u.routes.templates[t.URITemplate]; !taken {
					u.routes.templates[t.URITemplate] = s.key
				}
				out = append(out, sanitizedTemplate(t))
			}
		})
		return out
	})
}

// ReadResource reads from the server that listed the URI, or whose
// template's fixed start it has; failing that, from each server with
// resources in turn.
func (u *Upstreams) ReadResource(ctx context.Context, params *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	p := *params
	p.Meta = hopMeta(params.Meta)
	opts := askVia(ctx)
	u.routes.mu.Lock()
	h, held := u.routes.held["resource:"+params.URI]
	_, listed := u.routes.resources[params.URI]
	u.routes.mu.Unlock()
	if held && !listed {
		return nil, errors.New(h.refusal)
	}
	if server, ok := u.resourceServer(params.URI); ok {
		return u.Manager.ReadResource(ctx, server, &p, opts)
	}
	var errs []error
	u.awaitPending(ctx, nil)
	for _, s := range u.serverList() {
		if !u.offers(s.key, hasResources) {
			continue
		}
		res, err := u.Manager.ReadResource(ctx, s.key, &p, opts)
		if err == nil {
			return res, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("no server offers resource %q; resources/list names them", params.URI)
	}
	return nil, errors.Join(errs...)
}

func (u *Upstreams) resourceServer(uri string) (string, bool) {
	u.routes.mu.Lock()
	defer u.routes.mu.Unlock()
	if s, ok := u.routes.resources[uri]; ok {
		return s, true
	}
	best, bestLen := "", 0
	for tmpl, s := range u.routes.templates {
		fixed, _, _ := strings.Cut(tmpl, "{")
		if fixed != "" && strings.HasPrefix(uri, fixed) && len(fixed) > bestLen {
			best, bestLen = s, len(fixed)
		}
	}
	return best, best != ""
}

// Complete asks the server behind the prompt or resource template.
func (u *Upstreams) Complete(ctx context.Context, params *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	if params.Ref == nil {
		return nil, fmt.Errorf("completion/complete needs a ref (a prompt or a resource template)")
	}
	p := *params
	p.Meta = hopMeta(params.Meta)
	ref := *params.Ref
	p.Ref = &ref
	var server string
	switch ref.Type {
	case "ref/prompt":
		r, err := u.promptRoute(ctx, ref.Name)
		if err != nil {
			return nil, err
		}
		server, ref.Name = r.server, r.name
	case "ref/resource":
		u.routes.mu.Lock()
		server = u.routes.templates[ref.URI]
		u.routes.mu.Unlock()
		if server == "" {
			if _, err := u.ListResourceTemplates(ctx); err != nil {
				return nil, err
			}
			u.routes.mu.Lock()
			server = u.routes.templates[ref.URI]
			u.routes.mu.Unlock()
		}
		if server == "" {
			return nil, fmt.Errorf("no server offers the resource template %q", ref.URI)
		}
	default:
		return nil, fmt.Errorf("unknown completion reference type %q: use ref/prompt or ref/resource", ref.Type)
	}
	return u.Manager.Complete(ctx, server, &p, askVia(ctx))
}

// SetLoggingLevel asks every running server that logs for the most verbose
// level any client has asked for; each client still gets only what its own
// level allows. Servers started later keep their default.
func (u *Upstreams) SetLoggingLevel(ctx context.Context, level mcp.LoggingLevel) {
	u.mu.Lock()
	if severity(level) >= severity(u.logLevel) && u.logLevel != "" {
		u.mu.Unlock()
		return
	}
	u.logLevel = level
	u.mu.Unlock()
	for _, s := range u.serverList() {
		if u.offers(s.key, hasLogging) {
			_ = u.Manager.SetLoggingLevel(ctx, s.key, level)
		}
	}
}

// severity orders the protocol's log levels, most verbose first.
func severity(l mcp.LoggingLevel) int {
	for i, name := range []mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"} {
		if l == name {
			return i
		}
	}
	return 99
}

// Subscribe forwards a subscription to the server that has the resource.
func (u *Upstreams) Subscribe(ctx context.Context, params *mcp.SubscribeParams) error {
	server, err := u.subscriptionServer(ctx, params.URI)
	if err != nil {
		return err
	}
	return u.Manager.Subscribe(ctx, server, params)
}

// Unsubscribe forwards the end of a subscription.
func (u *Upstreams) Unsubscribe(ctx context.Context, params *mcp.UnsubscribeParams) error {
	server, err := u.subscriptionServer(ctx, params.URI)
	if err != nil {
		return err
	}
	return u.Manager.Unsubscribe(ctx, server, params)
}

func (u *Upstreams) subscriptionServer(ctx context.Context, uri string) (string, error) {
	if server, ok := u.resourceServer(uri); ok {
		return server, nil
	}
	if _, err := u.ListResources(ctx); err == nil {
		if server, ok := u.resourceServer(uri); ok {
			return server, nil
		}
	}
	if _, err := u.ListResourceTemplates(ctx); err == nil {
		if server, ok := u.resourceServer(uri); ok {
			return server, nil
		}
	}
	return "", fmt.Errorf("no server offers resource %q; resources/list names them", uri)
}
