package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/view"
)

// routedExtras offers one prompt and one resource per source: "p-gh" and
// "gh://r" from gh, "p-mem" and "mem://r" from mem.
type routedExtras struct{ fakeExtras }

func newRoutedExtras() *routedExtras {
	x := &routedExtras{}
	x.set([]string{"p-gh", "p-mem"}, []string{"gh://r", "mem://r"})
	return x
}

func (x *routedExtras) PromptSource(_ context.Context, name string) (string, bool) {
	return strings.CutPrefix(name, "p-")
}

func (x *routedExtras) ResourceSource(_ context.Context, uri string) (string, bool) {
	s, _, ok := strings.Cut(uri, "://")
	return s, ok
}

func (x *routedExtras) TemplateSource(context.Context, string) (string, bool) { return "", false }

// partHandlers returns the two handlers that serve only group: a view
// limited to it, and its own endpoint.
func partHandlers(t *testing.T, g *gateway.Gateway, group string) (limited, own http.Handler) {
	t.Helper()
	limited, err := g.LimitedHandler([]string{group}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	own, err = g.GroupHandler(group, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	return limited, own
}

// dialHandler serves h over HTTP and connects a client to it on protocol
// ("": the SDK's newest); both close with the test.
func dialHandler(t *testing.T, h http.Handler, protocol string) *mcp.ClientSession {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	var opts *mcp.ClientSessionOptions
	if protocol != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: protocol}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "x"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestPartsOfferOnlyTheirSourcesExtras: a view limited to the code group
// (gh's tools) lists, gets, reads and subscribes to gh's prompts and
// resources alone; mem's are as if they did not exist.
func TestPartsOfferOnlyTheirSourcesExtras(t *testing.T) {
	gh, mem := catalogtest.Tool("a"), catalogtest.Tool("b")
	gh.Source, mem.Source = "gh", "mem"
	cat := catalogtest.Build(t, catalog.Spec{Tools: []*catalog.Tool{gh, mem}, Groups: []catalog.GroupSpec{
		{ID: "code", Description: "Code", Members: catalog.Members{Sources: []string{"gh"}}},
		{ID: "notes", Description: "Notes", Members: catalog.Members{Sources: []string{"mem"}}},
	}})
	space, err := view.NewSpace(cat, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := gateway.New(space, &gateway.Options{Mode: expose.Flat, Extras: newRoutedExtras()})
	if err != nil {
		t.Fatal(err)
	}
	limited, group := partHandlers(t, g, "code")
	ctx := context.Background()
	for _, c := range []struct {
		name     string
		h        http.Handler
		protocol string
	}{
		{"limited view", limited, "2025-11-25"}, {"group endpoint", group, "2025-11-25"},
		{"limited view (2026-07-28)", limited, "2026-07-28"}, {"group endpoint (2026-07-28)", group, "2026-07-28"},
	} {
		name := c.name
		cs := dialHandler(t, c.h, c.protocol)
		if got := promptNames(t, cs); got != "p-gh" {
			t.Errorf("%s lists prompts %q, want p-gh alone", name, got)
		}
		res, err := cs.ListResources(ctx, nil)
		if err != nil || len(res.Resources) != 1 || res.Resources[0].URI != "gh://r" {
			t.Errorf("%s lists resources %v %v, want gh://r alone", name, res, err)
		}
		if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "p-gh"}); err != nil {
			t.Errorf("%s: getting its own prompt: %v", name, err)
		}
		if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "p-mem"}); err == nil {
			t.Errorf("%s got mem's prompt", name)
		}
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mem://r"}); err == nil {
			t.Errorf("%s read mem's resource", name)
		}
		// Subscriptions belong to sessions (2025-11-25).
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "mem://r"}); err == nil && c.protocol == "2025-11-25" {
			t.Errorf("%s subscribed to mem's resource", name)
		}
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "gh://r"}); err != nil {
			t.Errorf("%s: reading its own resource: %v", name, err)
		}
	}
}

// TestLimitedListsArePrivate: a view limited to a caller's reach answers
// its lists cacheScope private (they depend on who asks); a group's own
// endpoint, the same for everyone, public. On both protocols: a session's
// list is the SDK's, which marks every list public.
func TestLimitedListsArePrivate(t *testing.T) {
	g := newGateway(t, gateway.Options{Mode: expose.Flat, Extras: &fakeExtras{}}, nil)
	limited, group := partHandlers(t, g, "docs")
	ctx := context.Background()
	for _, c := range []struct {
		name     string
		h        http.Handler
		scope    string
		protocol string
	}{
		{"limited view", limited, "private", "2026-07-28"}, {"group endpoint", group, "public", "2026-07-28"},
		{"limited view (session)", limited, "private", "2025-11-25"}, {"group endpoint (session)", group, "public", "2025-11-25"},
	} {
		cs := dialHandler(t, c.h, c.protocol)
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		prompts, err := cs.ListPrompts(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tools.CacheScope != c.scope || prompts.CacheScope != c.scope {
			t.Errorf("%s: tools/list cacheScope %q, prompts/list %q, want %q", c.name, tools.CacheScope, prompts.CacheScope, c.scope)
		}
		// A session's list changes with its calls and the catalog, and
		// list_changed says so: a client must not keep it.
		if c.protocol == "2025-11-25" && tools.TTLMs != 0 {
			t.Errorf("%s: a session's tools/list says ttlMs %d, want 0", c.name, tools.TTLMs)
		}
	}
}
