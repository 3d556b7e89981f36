package assemble

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/trust/hostilefixture"
)

// TestTrustHoldsPromptsAndResourcesChangedMidSession: while a client is
// connected, the fixture poisons its prompt's and its resource's
// descriptions and announces it; the client hears that its prompts and
// resources changed, the poisoned ones leave its lists, and getting or
// reading them is refused with the approve command. The first listing,
// before the rug pull, is the control: the same items were served.
func TestTrustHoldsPromptsAndResourcesChangedMidSession(t *testing.T) {
	if testing.Short() {
		t.Skip("starts upstream servers")
	}
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			r := newTrustRig(t, transport)
			p, b := r.start(t, true)
			p.Follow(b)
			promptsChanged := make(chan struct{}, 64)
			resourcesChanged := make(chan struct{}, 64)
			srv := httptest.NewServer(mustHandler(t, b))
			t.Cleanup(srv.Close)
			c := mcp.NewClient(&mcp.Implementation{Name: "trust-test"}, &mcp.ClientOptions{
				PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { promptsChanged <- struct{}{} },
				ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { resourcesChanged <- struct{}{} },
			})
			cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.URL}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close() })
			prompts, resources, _ := listExtras(t, cs)
			if !slices.Equal(prompts, []string{"mail__draft_reply"}) || !slices.Equal(resources, []string{hostilefixture.SignatureURI}) {
				t.Fatalf("before the rug pull: prompts %v, resources %v", prompts, resources)
			}

			if text, isErr := callText(t, cs, "mail__rug_pull"); isErr {
				t.Fatal(text)
			}
			// Each change is announced; wait for the one after which the
			// poisoned item is gone.
			waitGone := func(what string, changed chan struct{}, present func() bool) {
				for present() {
					select {
					case <-changed:
					case <-t.Context().Done():
						t.Fatalf("the changed %s was never held", what)
					}
				}
			}
			waitGone("prompt", promptsChanged, func() bool { p, _, _ := listExtras(t, cs); return len(p) > 0 })
			waitGone("resource", resourcesChanged, func() bool { _, r, _ := listExtras(t, cs); return len(r) > 0 })

			_, err = cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "mail__draft_reply"})
			if err == nil || !strings.Contains(err.Error(), "toolfold pins approve mail prompt:draft_reply") {
				t.Errorf("getting the held prompt: %v", err)
			}
			_, err = cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: hostilefixture.SignatureURI})
			if err == nil || !strings.Contains(err.Error(), "toolfold pins approve mail resource:mail://signature") {
				t.Errorf("reading the held resource: %v", err)
			}
			held := r.lock(t).Servers["mail"].Held
			for _, key := range []string{"prompt:draft_reply", "resource:" + hostilefixture.SignatureURI} {
				if _, ok := held[key]; !ok {
					t.Errorf("the lock does not hold %s", key)
				}
			}
		})
	}
}
