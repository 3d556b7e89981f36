package gateway_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
)

// subscribingExtras records the subscriptions the gateway makes at its
// source; everything else is empty.
type subscribingExtras struct {
	mu    sync.Mutex
	calls []string // "+uri" and "-uri", in order
	event chan struct{}
}

func newSubscribingExtras() *subscribingExtras {
	return &subscribingExtras{event: make(chan struct{}, 64)}
}

func (x *subscribingExtras) record(s string) {
	x.mu.Lock()
	x.calls = append(x.calls, s)
	x.mu.Unlock()
	x.event <- struct{}{}
}

func (x *subscribingExtras) log() []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	return slices.Clone(x.calls)
}

// waitFor waits until the source has seen n subscription changes.
func (x *subscribingExtras) waitFor(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for len(x.log()) < n {
		select {
		case <-x.event:
		case <-deadline:
			t.Fatalf("the source saw %v, want %d changes", x.log(), n)
		}
	}
}

func (x *subscribingExtras) Subscribe(_ context.Context, p *mcp.SubscribeParams) error {
	x.record("+" + p.URI)
	return nil
}

func (x *subscribingExtras) Unsubscribe(_ context.Context, p *mcp.UnsubscribeParams) error {
	x.record("-" + p.URI)
	return nil
}

func (*subscribingExtras) ListPrompts(context.Context) ([]*mcp.Prompt, error) { return nil, nil }
func (*subscribingExtras) GetPrompt(context.Context, *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	return nil, fmt.Errorf("no prompts")
}
func (*subscribingExtras) ListResources(context.Context) ([]*mcp.Resource, error) { return nil, nil }
func (*subscribingExtras) ListResourceTemplates(context.Context) ([]*mcp.ResourceTemplate, error) {
	return nil, nil
}
func (*subscribingExtras) ReadResource(context.Context, *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	return nil, fmt.Errorf("no resources")
}
func (*subscribingExtras) Complete(context.Context, *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	return &mcp.CompleteResult{}, nil
}
func (*subscribingExtras) SetLoggingLevel(context.Context, mcp.LoggingLevel) {}

var _ gateway.Extras = (*subscribingExtras)(nil)

// connectStateful connects a client on 2025-11-25, whose resources/subscribe
// is answered once the subscription is made. (On 2026-07-28 the SDK client
// subscribes through a listen stream it opens in the background, and
// several clients' streams arrive in any order.)
func connectStateful(t *testing.T, g *gateway.Gateway, name string) *mcp.ClientSession {
	t.Helper()
	return connectAt(t, g, name, "2025-11-25", nil)
}

// TestSubscriptionsAreSharedAmongClients checks that the source sees one
// subscriber per resource: subscribed by the first client, unsubscribed
// when the last one leaves, by unsubscribing or by going away, in a mode
// where clients share a server and in one where each has its own.
func TestSubscriptionsAreSharedAmongClients(t *testing.T) {
	for _, mode := range []expose.Mode{expose.Flat, expose.Groups} {
		t.Run(string(mode), func(t *testing.T) {
			x := newSubscribingExtras()
			g := newGateway(t, gateway.Options{Mode: mode, Extras: x}, nil)
			ctx := context.Background()
			a, b := connectStateful(t, g, "a"), connectStateful(t, g, "b")
			sub := func(c *mcp.ClientSession, uri string) {
				t.Helper()
				if err := c.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
					t.Fatal(err)
				}
			}
			sub(a, "mem://x")
			sub(b, "mem://x")
			sub(a, "mem://x") // again: still one subscriber
			sub(b, "mem://y")
			x.waitFor(t, 2)
			if err := a.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "mem://x"}); err != nil {
				t.Fatal(err)
			}
			if got := x.log(); !slices.Equal(got, []string{"+mem://x", "+mem://y"}) {
				t.Fatalf("after one of two clients left mem://x, the source saw %v", got)
			}
			// b goes away without unsubscribing: its resources are given up.
			b.Close()
			x.waitFor(t, 4)
			got := x.log()
			slices.Sort(got[2:])
			if want := []string{"+mem://x", "+mem://y", "-mem://x", "-mem://y"}; !slices.Equal(got, want) {
				t.Fatalf("the source saw %v, want %v", got, want)
			}
			// The resource can be watched again from scratch.
			sub(a, "mem://x")
			x.waitFor(t, 5)
			if got := x.log(); got[4] != "+mem://x" {
				t.Errorf("resubscribing: the source saw %v", got)
			}
		})
	}
}

// TestSubscriptionsAreSharedAcrossEndpoints checks that a client of a
// group's own endpoint (/mcp/<group>) and a client of the main one count
// as two clients of the same source.
func TestSubscriptionsAreSharedAcrossEndpoints(t *testing.T) {
	x := newSubscribingExtras()
	g := newGateway(t, gateway.Options{Mode: expose.Flat, Extras: x}, nil)
	h, err := g.GroupHandler("code", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx := context.Background()
	remote, err := mcp.NewClient(&mcp.Implementation{Name: "r"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer remote.Close()
	local := connectStateful(t, g, "l")
	if err := local.Subscribe(ctx, &mcp.SubscribeParams{URI: "mem://x"}); err != nil {
		t.Fatal(err)
	}
	if err := remote.Subscribe(ctx, &mcp.SubscribeParams{URI: "mem://x"}); err != nil {
		t.Fatal(err)
	}
	if err := remote.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "mem://x"}); err != nil {
		t.Fatal(err)
	}
	if got := x.log(); !slices.Equal(got, []string{"+mem://x"}) {
		t.Errorf("the source saw %v while the main endpoint's client still watches", got)
	}
}

// Every resource comes from the source "" of catalogtest.Tree's tools.
func (x *subscribingExtras) PromptSource(context.Context, string) (string, bool)   { return "", true }
func (x *subscribingExtras) ResourceSource(context.Context, string) (string, bool) { return "", true }
func (x *subscribingExtras) TemplateSource(context.Context, string) (string, bool) { return "", true }
