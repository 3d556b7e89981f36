package assemble

import (
	"context"

	"github.com/toolfold/toolfold/internal/gateway"
)

// Upstreams say which server serves a prompt or a resource, so that a
// gateway over part of the catalog passes through only its own servers'.
var _ gateway.SourcedExtras = (*Upstreams)(nil)

// PromptSource names the server of a listed prompt.
// A held prompt has its source too: getting it is refused by GetPrompt,
// which says why.
func (u *Upstreams) PromptSource(ctx context.Context, name string) (string, bool) {
	r, err := u.promptRoute(ctx, name)
	if err == nil {
		return r.server, true
	}
	u.routes.mu.Lock()
	defer u.routes.mu.Unlock()
	h, held := u.routes.held["prompt:"+name]
	return h.server, held
}

// ResourceSource names the server that listed a URI or whose template it
// matches, listing them first if no route is known yet.
func (u *Upstreams) ResourceSource(ctx context.Context, uri string) (string, bool) {
	if s, ok := u.resourceServer(uri); ok {
		return s, true
	}
	u.ListResources(ctx)
	u.ListResourceTemplates(ctx)
	if s, ok := u.resourceServer(uri); ok {
		return s, true
	}
	// A held resource has a source, which refuses to read it saying why
	// (ReadResource), rather than a reader being told it does not exist.
	u.routes.mu.Lock()
	defer u.routes.mu.Unlock()
	h, held := u.routes.held["resource:"+uri]
	return h.server, held
}

// TemplateSource names the server of a listed resource template.
func (u *Upstreams) TemplateSource(ctx context.Context, uriTemplate string) (string, bool) {
	lookup := func() (string, bool) {
		u.routes.mu.Lock()
		defer u.routes.mu.Unlock()
		s, ok := u.routes.templates[uriTemplate]
		return s, ok
	}
	if s, ok := lookup(); ok {
		return s, true
	}
	u.ListResourceTemplates(ctx)
	return lookup()
}
