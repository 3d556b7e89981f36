package gateway

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SourcedExtras are Extras that can say which source serves a prompt, a
// resource or a resource template. A gateway over part of the catalog (a
// limited view, a group endpoint) passes through only what comes from the
// sources of its tools, and needs this to tell; without it, such a
// gateway offers no prompts or resources at all.
type SourcedExtras interface {
	Extras
	// PromptSource names the source of a prompt, by its listed name.
	PromptSource(ctx context.Context, name string) (string, bool)
	// ResourceSource names the source that serves a URI: the one that
	// listed it, or whose template it matches.
	ResourceSource(ctx context.Context, uri string) (string, bool)
	// TemplateSource names the source of a resource template.
	TemplateSource(ctx context.Context, uriTemplate string) (string, bool)
}

// reachExtras serves the prompts and resources of the sources a part of
// the catalog reaches, and refuses the others as if they did not exist.
type reachExtras struct {
	x SourcedExtras
	// reaches reports whether a source has a tool in the part's current
	// catalog.
	reaches func(source string) bool
}

var _ Extras = (*reachExtras)(nil)

// partExtras is what a part of the catalog offers beside tools.
func partExtras(x Extras, reaches func(string) bool) Extras {
	if x == nil {
		return nil
	}
	sx, ok := x.(SourcedExtras)
	if !ok {
		return nil
	}
	r := &reachExtras{x: sx, reaches: reaches}
	if _, ok := x.(SourceListing); ok {
		return r // lists per source too
	}
	return withoutSourceListing{r}
}

func (r *reachExtras) ListPrompts(ctx context.Context) ([]*mcp.Prompt, error) {
	all, err := r.x.ListPrompts(ctx)
	return keep(all, func(p *mcp.Prompt) bool { return r.prompt(ctx, p.Name) }), err
}

func (r *reachExtras) prompt(ctx context.Context, name string) bool {
	s, ok := r.x.PromptSource(ctx, name)
	return ok && r.reaches(s)
}

func (r *reachExtras) resource(ctx context.Context, uri string) bool {
	s, ok := r.x.ResourceSource(ctx, uri)
	return ok && r.reaches(s)
}

func (r *reachExtras) template(ctx context.Context, uriTemplate string) bool {
	s, ok := r.x.TemplateSource(ctx, uriTemplate)
	return ok && r.reaches(s)
}

func (r *reachExtras) GetPrompt(ctx context.Context, p *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	if !r.prompt(ctx, p.Name) {
		return nil, &notFoundError{fmt.Sprintf("there is no prompt %q; prompts/list names them", p.Name)}
	}
	return r.x.GetPrompt(ctx, p)
}

func (r *reachExtras) ListResources(ctx context.Context) ([]*mcp.Resource, error) {
	all, err := r.x.ListResources(ctx)
	return keep(all, func(res *mcp.Resource) bool { return r.resource(ctx, res.URI) }), err
}

func (r *reachExtras) ListResourceTemplates(ctx context.Context) ([]*mcp.ResourceTemplate, error) {
	all, err := r.x.ListResourceTemplates(ctx)
	return keep(all, func(t *mcp.ResourceTemplate) bool { return r.template(ctx, t.URITemplate) }), err
}

func (r *reachExtras) ReadResource(ctx context.Context, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	if !r.resource(ctx, p.URI) {
		return nil, mcp.ResourceNotFoundError(p.URI)
	}
	return r.x.ReadResource(ctx, p)
}

func (r *reachExtras) Complete(ctx context.Context, p *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	if p.Ref == nil {
		return r.x.Complete(ctx, p)
	}
	switch p.Ref.Type {
	case "ref/prompt":
		if !r.prompt(ctx, p.Ref.Name) {
			return nil, &notFoundError{fmt.Sprintf("there is no prompt %q; prompts/list names them", p.Ref.Name)}
		}
	case "ref/resource":
		if !r.template(ctx, p.Ref.URI) {
			return nil, &notFoundError{fmt.Sprintf("no server offers the resource template %q", p.Ref.URI)}
		}
	}
	return r.x.Complete(ctx, p)
}

func (r *reachExtras) SetLoggingLevel(ctx context.Context, level mcp.LoggingLevel) {
	r.x.SetLoggingLevel(ctx, level)
}

func (r *reachExtras) Subscribe(ctx context.Context, p *mcp.SubscribeParams) error {
	if !r.resource(ctx, p.URI) {
		return mcp.ResourceNotFoundError(p.URI)
	}
	return r.x.Subscribe(ctx, p)
}

func (r *reachExtras) Unsubscribe(ctx context.Context, p *mcp.UnsubscribeParams) error {
	return r.x.Unsubscribe(ctx, p)
}

// allowsSubscription refuses, on a part of the catalog, a subscription to
// a resource of a source it does not reach. Subscriptions are counted once
// across all endpoints (see subscriptions), so the check happens here,
// before the count.
func (g *Gateway) allowsSubscription(ctx context.Context, uri string) error {
	r, ok := g.opts.Extras.(*reachExtras)
	if w, wrapped := g.opts.Extras.(withoutSourceListing); wrapped {
		r, ok = w.Extras.(*reachExtras)
	}
	if ok && !r.resource(ctx, uri) {
		return mcp.ResourceNotFoundError(uri)
	}
	return nil
}

func keep[T any](all []T, ok func(T) bool) []T {
	out := []T{}
	for _, x := range all {
		if ok(x) {
			out = append(out, x)
		}
	}
	return out
}

// ListPromptsOf lists the prompts of the sources the part reaches and from
// accepts, so that the groups extension scopes them in a part as on the
// main endpoint. The part offers it only when its source can (see
// partExtras).
func (r *reachExtras) ListPromptsOf(ctx context.Context, from func(string) bool) ([]*mcp.Prompt, error) {
	return r.x.(SourceListing).ListPromptsOf(ctx, r.within(from))
}

// ListResourcesOf is ListPromptsOf for resources.
func (r *reachExtras) ListResourcesOf(ctx context.Context, from func(string) bool) ([]*mcp.Resource, error) {
	return r.x.(SourceListing).ListResourcesOf(ctx, r.within(from))
}

func (r *reachExtras) within(from func(string) bool) func(string) bool {
	return func(s string) bool { return r.reaches(s) && (from == nil || from(s)) }
}

// withoutSourceListing hides ListPromptsOf and ListResourcesOf of a
// reachExtras whose source cannot list per source; it still tells sources.
type withoutSourceListing struct{ Extras }

var _ SourcedExtras = withoutSourceListing{}

func (w withoutSourceListing) PromptSource(ctx context.Context, name string) (string, bool) {
	return w.Extras.(SourcedExtras).PromptSource(ctx, name)
}

func (w withoutSourceListing) ResourceSource(ctx context.Context, uri string) (string, bool) {
	return w.Extras.(SourcedExtras).ResourceSource(ctx, uri)
}

func (w withoutSourceListing) TemplateSource(ctx context.Context, uriTemplate string) (string, bool) {
	return w.Extras.(SourcedExtras).TemplateSource(ctx, uriTemplate)
}

// A part's extras tell sources as the whole catalog's do, for what the part
// reaches, so that a client of the grouping extension on a part (a limited
// view) gets each prompt's and resource's groups too.
var _ SourcedExtras = (*reachExtras)(nil)

// PromptSource names the source of a prompt the part reaches.
func (r *reachExtras) PromptSource(ctx context.Context, name string) (string, bool) {
	s, ok := r.x.PromptSource(ctx, name)
	return s, ok && r.reaches(s)
}

// ResourceSource names the source of a resource the part reaches.
func (r *reachExtras) ResourceSource(ctx context.Context, uri string) (string, bool) {
	s, ok := r.x.ResourceSource(ctx, uri)
	return s, ok && r.reaches(s)
}

// TemplateSource names the source of a resource template the part reaches.
func (r *reachExtras) TemplateSource(ctx context.Context, uriTemplate string) (string, bool) {
	s, ok := r.x.TemplateSource(ctx, uriTemplate)
	return s, ok && r.reaches(s)
}
