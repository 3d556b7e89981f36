package upstream

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/config"
)

// askingServer has prompts and resources whose handlers ask their client
// for a name: "legacy" with an elicitation/create request mid-request (the
// session protocols' way), the others in the multi-round-trip style, by
// returning inputRequests and reading the answer from the retry.
func askingServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "asking", Version: "1"}, nil)
	schema := map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}
	ask := &mcp.ElicitParams{Message: "Your name?", RequestedSchema: schema}
	answered := func(responses mcp.InputResponseMap) (string, bool) {
		r, ok := responses["who"].(*mcp.ElicitResult)
		if !ok || r.Action != "accept" {
			return "", false
		}
		return fmt.Sprint(r.Content["name"]), true
	}
	greeting := func(name string) *mcp.GetPromptResult {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello " + name}}}}
	}
	srv.AddPrompt(&mcp.Prompt{Name: "legacy"}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		r, err := req.Session.Elicit(ctx, ask)
		if err != nil {
			return nil, err
		}
		return greeting(fmt.Sprint(r.Content["name"])), nil
	})
	srv.AddPrompt(&mcp.Prompt{Name: "mrtr"}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		if name, ok := answered(req.Params.InputResponses); ok {
			return greeting(name), nil
		}
		return &mcp.GetPromptResult{InputRequests: mcp.InputRequestMap{"who": ask}}, nil
	})
	srv.AddResource(&mcp.Resource{URI: "mem://legacy", Name: "legacy"}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		r, err := req.Session.Elicit(ctx, ask)
		if err != nil {
			return nil, err
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: fmt.Sprint(r.Content["name"])}}}, nil
	})
	srv.AddResource(&mcp.Resource{URI: "mem://mrtr", Name: "mrtr"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		if name, ok := answered(req.Params.InputResponses); ok {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: name}}}, nil
		}
		return &mcp.ReadResourceResult{InputRequests: mcp.InputRequestMap{"who": ask}}, nil
	})
	return srv
}

func promptText(res *mcp.GetPromptResult) string {
	if res == nil || len(res.Messages) == 0 {
		return ""
	}
	if tc, ok := res.Messages[0].Content.(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

// TestPassThroughRequestsAsk: an upstream's questions during prompts/get
// and resources/read reach the caller's Downstream, whether they come as a
// request on the connection (2025-11-25) or in the result (2026-07-28),
// and the request completes with the answer.
func TestPassThroughRequestsAsk(t *testing.T) {
	for _, proto := range []string{"", "2025-11-25"} {
		t.Run("protocol "+proto, func(t *testing.T) {
			m := newTestManager(t, map[string]config.ServerConfig{"mem": memServer(0)},
				&Options{dial: inMemoryDialer(askingServer()), Forward: Forwarding{Elicitation: true}, ProtocolVersion: proto})
			ctx := context.Background()
			alice := &CallOptions{Downstream: &fakeDownstream{name: "alice"}}
			// A request on the connection exists on session protocols only;
			// there, the Go SDK serves a resource read in the multi-round-trip
			// style only to a client that speaks it (it finds no contents).
			prompts, resources := []string{"mrtr"}, []string{"mem://mrtr"}
			if proto != "" {
				prompts, resources = append(prompts, "legacy"), []string{"mem://legacy"}
			}
			for _, name := range prompts {
				res, err := m.GetPrompt(ctx, "mem", &mcp.GetPromptParams{Name: name}, alice)
				if err != nil || promptText(res) != "hello alice" || res.NeedsInput() || len(res.InputRequests) > 0 {
					t.Fatalf("prompt %s: %q, %v", name, promptText(res), err)
				}
			}
			for _, uri := range resources {
				read, err := m.ReadResource(ctx, "mem", &mcp.ReadResourceParams{URI: uri}, alice)
				if err != nil || len(read.Contents) != 1 || read.Contents[0].Text != "alice" {
					t.Fatalf("read %s: %+v, %v", uri, read, err)
				}
			}

			// Without a Downstream the upstream is told the caller cannot
			// answer, and the request fails saying so.
			for _, name := range prompts {
				_, err := m.GetPrompt(ctx, "mem", &mcp.GetPromptParams{Name: name}, nil)
				if err == nil || !strings.Contains(err.Error(), "cannot answer") {
					t.Errorf("prompt %s without a downstream: %v", name, err)
				}
			}
		})
	}
}

// TestPassThroughRequestCountsAsInFlight: a prompt request of one client
// and a tool call of another, in flight together on a session protocol,
// make a question on the connection ambiguous, as two tool calls do: it is
// refused rather than put to the wrong client.
func TestPassThroughRequestCountsAsInFlight(t *testing.T) {
	srv := askingServer()
	entered, release := make(chan struct{}, 1), make(chan struct{})
	addBlockingTool(srv, entered, release)
	m := newTestManager(t, map[string]config.ServerConfig{"mem": memServer(0)},
		&Options{dial: inMemoryDialer(srv), Forward: Forwarding{Elicitation: true}, ProtocolVersion: "2025-11-25"})
	ctx := context.Background()
	done := make(chan error, 1)
	go func() {
		_, err := m.CallTool(ctx, "mem", &mcp.CallToolParams{Name: "block"}, &CallOptions{Downstream: &fakeDownstream{name: "bob"}})
		done <- err
	}()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the blocking tool was not called")
	}
	_, err := m.GetPrompt(ctx, "mem", &mcp.GetPromptParams{Name: "legacy"}, &CallOptions{Downstream: &fakeDownstream{name: "alice"}})
	close(release)
	if err == nil || !strings.Contains(err.Error(), "2 requests from different clients are in flight") {
		t.Errorf("prompt beside another client's call: %v", err)
	}
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("the blocking call: %v", err)
	}
}
