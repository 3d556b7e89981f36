package gateway_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/groupsext"
	"github.com/toolfold/toolfold/internal/view"
)

// sourcedExtras serve each source's prompts and resources, named after the
// source ("alpha-p", "res://alpha"), and can list some sources only.
type sourcedExtras struct {
	fakeExtras
	sources []string
}

func (x *sourcedExtras) ListPromptsOf(_ context.Context, from func(string) bool) ([]*mcp.Prompt, error) {
	var out []*mcp.Prompt
	for _, s := range x.sources {
		if from == nil || from(s) {
			out = append(out, &mcp.Prompt{Name: s + "-p", Description: "The prompt of " + s})
		}
	}
	return out, nil
}

func (x *sourcedExtras) ListResourcesOf(_ context.Context, from func(string) bool) ([]*mcp.Resource, error) {
	var out []*mcp.Resource
	for _, s := range x.sources {
		if from == nil || from(s) {
			out = append(out, &mcp.Resource{Name: s, URI: "res://" + s, MIMEType: "text/plain"})
		}
	}
	return out, nil
}

func (x *sourcedExtras) ListPrompts(ctx context.Context) ([]*mcp.Prompt, error) {
	return x.ListPromptsOf(ctx, nil)
}

func (x *sourcedExtras) ListResources(ctx context.Context) ([]*mcp.Resource, error) {
	return x.ListResourcesOf(ctx, nil)
}

// sourcedCatalog has tools of several sources, placed so that each rule of
// scoping is exercised:
//
//	alpha            alpha__1            (source alpha, whole in alpha's subtree)
//	  alpha.sub      alpha__2
//	beta             beta__1             (source beta, beta__2 ungrouped)
//	gamma            delta__1            (source delta, whole: gamma)
//	  gamma.one      gamma__1, gamma__2  (source gamma, whole: gamma.one)
//	eps (enabled)    eps__1              (source eps, top level)
//	both             alpha__1, alpha__2  (a second group taking alpha whole)
//
// and the source "solo" has prompts but no tools. With betaWhole, beta__2
// joins beta, which then takes its source whole.
func sourcedCatalog(t *testing.T, betaWhole bool) *catalog.Catalog {
	t.Helper()
	beta := []catalog.ToolID{"beta__1"}
	if betaWhole {
		beta = append(beta, "beta__2")
	}
	var tools []*catalog.Tool
	for _, id := range []string{"alpha__1", "alpha__2", "beta__1", "beta__2", "delta__1", "gamma__1", "gamma__2", "eps__1"} {
		tl := catalogtest.Tool(id)
		tl.Source, _, _ = strings.Cut(id, "__")
		tools = append(tools, tl)
	}
	return catalogtest.Build(t, catalog.Spec{
		Tools: tools,
		Groups: []catalog.GroupSpec{
			{ID: "alpha", Description: "Alpha", Members: catalog.Members{Tools: []catalog.ToolID{"alpha__1"}}},
			{ID: "alpha.sub", Parent: "alpha", Description: "Alpha's second", Members: catalog.Members{Tools: []catalog.ToolID{"alpha__2"}}},
			{ID: "beta", Description: "Beta", Members: catalog.Members{Tools: beta}},
			{ID: "gamma", Description: "Gamma", Members: catalog.Members{Tools: []catalog.ToolID{"delta__1"}}},
			{ID: "gamma.one", Parent: "gamma", Description: "Gamma one", Members: catalog.Members{Sources: []string{"gamma"}}},
			{ID: "eps", Description: "Eps", Default: catalog.Enabled, Members: catalog.Members{Sources: []string{"eps"}}},
			{ID: "both", Description: "Alpha again", Members: catalog.Members{Sources: []string{"alpha"}}},
		},
	})
}

func sourcedGateway(t *testing.T, x gateway.Extras) *gateway.Gateway {
	t.Helper()
	space, err := view.NewSpace(sourcedCatalog(t, false), nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := gateway.New(space, &gateway.Options{Extras: x, ExtrasListChanged: true})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestGroupsExtensionScopesPromptsAndResources: groups/get carries the
// prompts and resources of the sources its group takes whole, in the most
// specific group only; a client of the extension no longer lists them but
// still gets and reads them; every other client lists them all.
func TestGroupsExtensionScopesPromptsAndResources(t *testing.T) {
	const all = "alpha-p,beta-p,delta-p,eps-p,gamma-p,solo-p"
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(protocol, func(t *testing.T) {
			g := sourcedGateway(t, &sourcedExtras{sources: []string{"alpha", "beta", "delta", "eps", "gamma", "solo"}})
			c := extClient(t, g, protocol)
			want := map[string]string{
				"alpha":     "alpha-p",
				"alpha-sub": "",
				"both":      "alpha-p",
				"beta":      "", // beta__2 is ungrouped
				"gamma":     "delta-p",
				"gamma-one": "gamma-p",
				"eps":       "", // enabled by default: its tools are top level
			}
			for name, prompts := range want {
				res, err := getGroup(c, name)
				if err != nil {
					t.Fatalf("groups/get %s: %v", name, err)
				}
				var got, uris []string
				for _, p := range res.Contents.Prompts {
					got = append(got, p.Name)
					if p.Description == "" {
						t.Errorf("%s: prompt %s is not a complete definition", name, p.Name)
					}
				}
				for _, r := range res.Contents.Resources {
					uris = append(uris, r.URI)
				}
				if strings.Join(got, ",") != prompts {
					t.Errorf("groups/get %s: prompts %q, want %q", name, got, prompts)
				}
				wantURIs := ""
				if prompts != "" {
					wantURIs = "res://" + strings.TrimSuffix(prompts, "-p")
				}
				if strings.Join(uris, ",") != wantURIs {
					t.Errorf("groups/get %s: resources %q, want %q", name, uris, wantURIs)
				}
			}
			if got := promptNames(t, c.ClientSession); got != "beta-p,eps-p,solo-p" {
				t.Errorf("prompts/list of the extension's client = %q", got)
			}
			if got := resourceURIs(t, c.ClientSession); got != "res://beta,res://eps,res://solo" {
				t.Errorf("resources/list of the extension's client = %q", got)
			}
			// Scoped ones stay usable.
			if res, err := c.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "gamma-p"}); err != nil || res.Description != "gamma-p" {
				t.Errorf("prompts/get of a scoped prompt: %v %+v", err, res)
			}
			if res, err := c.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "res://alpha"}); err != nil || len(res.Contents) != 1 {
				t.Errorf("resources/read of a scoped resource: %v %+v", err, res)
			}
			// A client without the extension lists them all.
			plain := connectAt(t, g, "plain", protocol, nil)
			if got := promptNames(t, plain); got != all {
				t.Errorf("prompts/list without the extension = %q", got)
			}
			if got := resourceURIs(t, plain); !strings.Contains(got, "res://alpha") || !strings.Contains(got, "res://gamma") {
				t.Errorf("resources/list without the extension = %q", got)
			}
		})
	}
}

// Extras that cannot list by source leave every prompt in prompts/list and
// none in groups/get.
func TestGroupsExtensionWithoutSourceListing(t *testing.T) {
	x := &fakeExtras{}
	x.set([]string{"alpha-p", "gamma-p"}, []string{"res://alpha"})
	g := sourcedGateway(t, x)
	c := extClient(t, g, "2026-07-28")
	res, err := getGroup(c, "alpha")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Contents.Prompts) != 0 || len(res.Contents.Resources) != 0 {
		t.Errorf("groups/get alpha: %+v", res.Contents)
	}
	if got := promptNames(t, c.ClientSession); got != "alpha-p,gamma-p" {
		t.Errorf("prompts/list = %q", got)
	}
}

// A catalog update that moves a source's prompts into a group tells the
// clients their prompt and resource lists changed, and the client of the
// extension lists them no more.
func TestScopedPromptsMoveWithTheCatalog(t *testing.T) {
	g := sourcedGateway(t, &sourcedExtras{sources: []string{"alpha", "beta", "solo"}})
	l := &listener{}
	opts := listenerOptions(l)
	opts.Capabilities = &mcp.ClientCapabilities{Extensions: map[string]any{groupsext.ID: map[string]any{}}}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := g.Connect(context.Background(), gateway.ClientInfo{Name: "ext", ProtocolVersion: "2025-11-25", Extension: true}, st)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	l.cs, err = mcp.NewClient(&mcp.Implementation{Name: "ext"}, opts).Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.cs.Close() })
	if got := promptNames(t, l.cs); got != "beta-p,solo-p" {
		t.Fatalf("prompts/list = %q", got)
	}
	space, err := view.NewSpace(sourcedCatalog(t, true), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(space); err != nil {
		t.Fatal(err)
	}
	for what, ch := range map[string]chan struct{}{"prompts": l.prompts, "resources": l.resources} {
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s list_changed after beta's prompts moved into its group", what)
		}
	}
	if got := promptNames(t, l.cs); got != "solo-p" {
		t.Errorf("prompts/list after the update = %q, want solo-p", got)
	}
}
