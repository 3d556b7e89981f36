package sdkshim_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/sdkshim"
)

// TestSDKAnnouncesPromptChangesOnlyFromItsRegistry: the SDK has no call
// that sends prompts/list_changed; adding and removing a prompt is what
// makes it send one, which RegistryAnnouncer relies on.
func TestSDKAnnouncesPromptChangesOnlyFromItsRegistry(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "bare"}, &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Prompts: &mcp.PromptCapabilities{ListChanged: true}}})
	heard := make(chan struct{}, 4)
	cs, _ := bareServer(t, s, &mcp.ClientOptions{PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) { heard <- struct{}{} }})
	s.AddPrompt(&mcp.Prompt{Name: "placeholder"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	})
	s.RemovePrompts("placeholder")
	<-heard
	res, err := cs.ListPrompts(context.Background(), nil)
	if err != nil || len(res.Prompts) != 0 {
		t.Fatalf("after the placeholder went, prompts/list = %v, %v; want empty", res, err)
	}
}

// TestSDKAnnouncesResourceChangesOnlyFromItsRegistry: as for prompts, the
// SDK sends resources/list_changed only when its registry changes, which
// RegistryAnnouncer's placeholder resource relies on.
func TestSDKAnnouncesResourceChangesOnlyFromItsRegistry(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "bare"}, &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Resources: &mcp.ResourceCapabilities{ListChanged: true}}})
	heard := make(chan struct{}, 4)
	cs, _ := bareServer(t, s, &mcp.ClientOptions{ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { heard <- struct{}{} }})
	s.AddResource(&mcp.Resource{Name: "placeholder", URI: "toolfold://placeholder"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	})
	s.RemoveResources("toolfold://placeholder")
	<-heard
	res, err := cs.ListResources(context.Background(), nil)
	if err != nil || len(res.Resources) != 0 {
		t.Fatalf("after the placeholder went, resources/list = %v, %v; want empty", res, err)
	}
}

// TestRegistryAnnouncerAnnouncesEachList: every Announce of each list
// reaches the client as that list's list_changed, the first (a placeholder
// added) and the second (removed) alike.
func TestRegistryAnnouncerAnnouncesEachList(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "bare"}, &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{
		Tools:     &mcp.ToolCapabilities{ListChanged: true},
		Prompts:   &mcp.PromptCapabilities{ListChanged: true},
		Resources: &mcp.ResourceCapabilities{ListChanged: true},
	}})
	heard := make(chan string, 8)
	bareServer(t, s, &mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { heard <- sdkshim.ToolsListChanged },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { heard <- sdkshim.PromptsListChanged },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { heard <- sdkshim.ResourcesListChanged },
	})
	a := sdkshim.NewRegistryAnnouncer(s)
	for _, method := range []string{sdkshim.PromptsListChanged, sdkshim.ResourcesListChanged, sdkshim.ToolsListChanged} {
		for round := range 2 {
			if err := a.Announce(method); err != nil {
				t.Fatal(err)
			}
			if got := <-heard; got != method {
				t.Fatalf("announcement %d of %s: the client heard %s", round+1, method, got)
			}
		}
	}
	if err := a.Announce("notifications/message"); err == nil || !strings.Contains(err.Error(), "list_changed") {
		t.Errorf("Announce of another method: %v; want an error naming the methods it takes", err)
	}
}
