package gateway_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
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

// The sources: "alpha-p" and "res://alpha" come from alpha.
func (x *sourcedExtras) PromptSource(_ context.Context, name string) (string, bool) {
	return strings.CutSuffix(name, "-p")
}

func (x *sourcedExtras) ResourceSource(_ context.Context, uri string) (string, bool) {
	return strings.CutPrefix(uri, "res://")
}

func (x *sourcedExtras) TemplateSource(_ context.Context, uriTemplate string) (string, bool) {
	src, _, ok := strings.Cut(strings.TrimPrefix(uriTemplate, "res://"), "/")
	return src, ok
}

func (x *sourcedExtras) ListResourceTemplates(context.Context) ([]*mcp.ResourceTemplate, error) {
	var out []*mcp.ResourceTemplate
	for _, s := range x.sources {
		out = append(out, &mcp.ResourceTemplate{Name: s, URITemplate: "res://" + s + "/{id}"})
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

// TestGroupingMembershipOfPromptsAndResources: for a client of the
// grouping extension, a source's prompts, resources and templates name the
// groups that take its tools whole, the most specific only; every other
// client gets them unchanged.
func TestGroupingMembershipOfPromptsAndResources(t *testing.T) {
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(protocol, func(t *testing.T) {
			g := sourcedGateway(t, &sourcedExtras{sources: []string{"alpha", "beta", "delta", "eps", "gamma", "solo"}})
			c := extClient(t, g, protocol)
			// beta__2 is ungrouped, solo has no tools: theirs are in no group.
			const want = "alpha[alpha+both],beta[],delta[gamma],eps[eps],gamma[gamma-one],solo[]"
			if got := promptMemberships(t, c.ClientSession); got != want {
				t.Errorf("prompts/list = %q, want %q", got, want)
			}
			if got := resourceMemberships(t, c.ClientSession); got != want {
				t.Errorf("resources/list = %q, want %q", got, want)
			}
			if got := templateMemberships(t, c.ClientSession); got != want {
				t.Errorf("resources/templates/list = %q, want %q", got, want)
			}
			plain := connectAt(t, g, "plain", protocol, nil)
			const none = "alpha[],beta[],delta[],eps[],gamma[],solo[]"
			if got := promptMemberships(t, plain); got != none {
				t.Errorf("prompts/list without the extension = %q", got)
			}
			if got := resourceMemberships(t, plain); got != none {
				t.Errorf("resources/list without the extension = %q", got)
			}
		})
	}
}

func promptMemberships(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	res, err := cs.ListPrompts(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range res.Prompts {
		out = append(out, strings.TrimSuffix(p.Name, "-p")+"["+strings.Join(groupsext.MetaGroups(p.Meta), "+")+"]")
	}
	return strings.Join(out, ",")
}

func resourceMemberships(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	res, err := cs.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range res.Resources {
		out = append(out, r.Name+"["+strings.Join(groupsext.MetaGroups(r.Meta), "+")+"]")
	}
	return strings.Join(out, ",")
}

func templateMemberships(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	res, err := cs.ListResourceTemplates(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range res.ResourceTemplates {
		out = append(out, r.Name+"["+strings.Join(groupsext.MetaGroups(r.Meta), "+")+"]")
	}
	return strings.Join(out, ",")
}

// A catalog update that moves a source's prompts into a group tells the
// clients their prompt and resource lists changed, and the client of the
// extension reads their new groups.
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
	if got := promptMemberships(t, l.cs); got != "alpha[alpha+both],beta[],solo[]" {
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
	if got := promptMemberships(t, l.cs); got != "alpha[alpha+both],beta[beta],solo[]" {
		t.Errorf("prompts/list after the update = %q", got)
	}
}

// A catalog update that moves a source with no prompts and no resources
// (a lazy server's tools arriving) changes nothing a client sees: no
// client hears list_changed, of the extension or not.
func TestMovingASourceWithoutExtrasTellsNobody(t *testing.T) {
	for _, ext := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "extension"}[ext], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				// beta, which the update moves, has no prompts or resources.
				g := sourcedGateway(t, &sourcedExtras{sources: []string{"alpha", "solo"}})
				l := &listener{}
				opts := listenerOptions(l)
				if ext {
					opts.Capabilities = &mcp.ClientCapabilities{Extensions: map[string]any{groupsext.ID: map[string]any{}}}
				}
				ct, st := mcp.NewInMemoryTransports()
				ss, err := g.Connect(context.Background(), gateway.ClientInfo{Name: "c", ProtocolVersion: "2025-11-25", Extension: ext}, st)
				if err != nil {
					t.Fatal(err)
				}
				defer ss.Close()
				l.cs, err = mcp.NewClient(&mcp.Implementation{Name: "c"}, opts).Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
				if err != nil {
					t.Fatal(err)
				}
				defer l.cs.Close()
				space, err := view.NewSpace(sourcedCatalog(t, true), nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := g.Update(space); err != nil {
					t.Fatal(err)
				}
				// A virtual second (the bubble's clock): past the gateway's delay
				// and the SDK's debounce, with no real wait.
				time.Sleep(time.Second)
				synctest.Wait()
				silent(t, "c", "prompts", l.prompts)
				silent(t, "c", "resources", l.resources)
			})
		})
	}
}
