package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/logtest"
)

// askingExtras are prompts and resources whose source asks the client for
// a name the old way, mid-request, through gateway.DownstreamFrom, as an
// upstream on a session protocol does.
type askingExtras struct {
	fakeExtras
	mu   sync.Mutex
	seen []mcp.InputResponseMap // the inputResponses each request reached the source with
}

func (x *askingExtras) ask(ctx context.Context, responses mcp.InputResponseMap) (string, error) {
	x.mu.Lock()
	x.seen = append(x.seen, responses)
	x.mu.Unlock()
	d := gateway.DownstreamFrom(ctx)
	if d == nil {
		return "", errors.New("no Downstream in the context")
	}
	schema := map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}
	r, err := d.Elicit(ctx, &mcp.ElicitParams{Message: "Your name?", RequestedSchema: schema})
	if err != nil {
		return "", err
	}
	return fmt.Sprint(r.Content["name"]), nil
}

func (x *askingExtras) GetPrompt(ctx context.Context, p *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	name, err := x.ask(ctx, p.InputResponses)
	if err != nil {
		return nil, err
	}
	return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello " + name + " from " + p.Name}}}}, nil
}

func (x *askingExtras) ReadResource(ctx context.Context, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	name, err := x.ask(ctx, p.InputResponses)
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: p.URI, Text: name}}}, nil
}

func promptText(res *mcp.GetPromptResult) string {
	if res == nil || len(res.Messages) == 0 {
		return ""
	}
	tc, _ := res.Messages[0].Content.(*mcp.TextContent)
	if tc == nil {
		return ""
	}
	return tc.Text
}

// onlyRequest returns the id of a result's one input request, an
// elicitation.
func onlyRequest(t *testing.T, reqs mcp.InputRequestMap) string {
	t.Helper()
	if len(reqs) != 1 {
		t.Fatalf("input requests = %v, want one", reqs)
	}
	for id, r := range reqs {
		if p, ok := r.(*mcp.ElicitParams); !ok || p.Message != "Your name?" {
			t.Fatalf("input request %q = %#v", id, r)
		}
		return id
	}
	panic("unreachable")
}

func TestInputRequiredForPrompts(t *testing.T) {
	x := &askingExtras{}
	cs := connect2026(t, gateway.Options{Extras: x}, askingTools(nil), everything)
	ctx := context.Background()
	args := map[string]string{"topic": "go"}
	res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: args})
	if err != nil || !res.NeedsInput() || res.RequestState == "" {
		t.Fatalf("first round: needsInput=%v state=%q text=%q, %v", res.NeedsInput(), res.RequestState, promptText(res), err)
	}
	id := onlyRequest(t, res.InputRequests)
	state := res.RequestState

	res, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: args, InputResponses: mcp.InputResponseMap{id: accept("alice")}, RequestState: state})
	if err != nil || res.NeedsInput() || promptText(res) != "hello alice from greet" {
		t.Fatalf("retry: needsInput=%v %q, %v", res.NeedsInput(), promptText(res), err)
	}
	_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: args, InputResponses: mcp.InputResponseMap{id: accept("mallory")}, RequestState: state})
	wantInvalidParams(t, err, "already used")

	// Answers without a requestState answer nothing toolfold asked: the
	// request starts afresh, the source asks again, and never sees them.
	res, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: args, InputResponses: mcp.InputResponseMap{id: accept("mallory")}})
	if err != nil || !res.NeedsInput() {
		t.Fatalf("answers without a requestState: needsInput=%v %q, %v", res.NeedsInput(), promptText(res), err)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.seen) != 2 || x.seen[0] != nil || x.seen[1] != nil {
		t.Errorf("the source saw inputResponses %v, want two requests without any", x.seen)
	}
}

// TestInputRequiredForResources also checks the audit: the round that asks
// is no line, the request that gets the resource is one.
func TestInputRequiredForResources(t *testing.T) {
	logs := &logtest.Buffer{}
	cs := connect2026(t, gateway.Options{Extras: &askingExtras{}, Logger: logs.Logger(slog.LevelInfo)}, askingTools(nil), everything)
	ctx := context.Background()
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mem://whoami"})
	if err != nil || !res.NeedsInput() || res.RequestState == "" {
		t.Fatalf("first round: needsInput=%v state=%q, %v", res.NeedsInput(), res.RequestState, err)
	}
	if n := strings.Count(logs.String(), `msg="resource read"`); n != 0 {
		t.Fatalf("the round that asks wrote %d audit lines:\n%s", n, logs.String())
	}
	id := onlyRequest(t, res.InputRequests)
	res, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mem://whoami", InputResponses: mcp.InputResponseMap{id: accept("bob")}, RequestState: res.RequestState})
	if err != nil || res.NeedsInput() || len(res.Contents) != 1 || res.Contents[0].Text != "bob" {
		t.Fatalf("retry: needsInput=%v %+v, %v", res.NeedsInput(), res.Contents, err)
	}
	if n := strings.Count(logs.String(), `msg="resource read" caller=anonymous uri=mem://whoami source="" outcome=ok`); n != 1 {
		t.Fatalf("the request that read the resource wrote %d audit lines, want 1:\n%s", n, logs.String())
	}
}

// TestInputRequiredStateIsBoundToTheRequest: a requestState minted for a
// prompt is refused for another prompt, other arguments, a resource read
// or a tool call, and stays good for its own retry.
func TestInputRequiredStateIsBoundToTheRequest(t *testing.T) {
	cs := connect2026(t, gateway.Options{Extras: &askingExtras{}}, askingTools(nil), everything)
	ctx := context.Background()
	args := map[string]string{"topic": "go"}
	res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "ask", Arguments: args})
	if err != nil || !res.NeedsInput() {
		t.Fatalf("first round: %v, %v", res.NeedsInput(), err)
	}
	id, state := onlyRequest(t, res.InputRequests), res.RequestState
	answers := mcp.InputResponseMap{id: accept("eve")}

	_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "other", Arguments: args, InputResponses: answers, RequestState: state})
	wantInvalidParams(t, err, "another call")
	_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "ask", Arguments: map[string]string{"topic": "rust"}, InputResponses: answers, RequestState: state})
	wantInvalidParams(t, err, "another call")
	_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ask", InputResponses: answers, RequestState: state})
	wantInvalidParams(t, err, "another call")
	// The tool of the same name: the method is bound too.
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"topic": "go"}, InputResponses: answers, RequestState: state})
	wantInvalidParams(t, err, "another call")

	res, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "ask", Arguments: args, InputResponses: answers, RequestState: state})
	if err != nil || promptText(res) != "hello eve from ask" {
		t.Fatalf("good retry after bad ones: %q, %v", promptText(res), err)
	}
}

// TestPromptAsksAStatefulClient: a client on a session protocol is asked
// directly, with an elicitation/create request during its prompts/get, and
// gets a plain result.
func TestPromptAsksAStatefulClient(t *testing.T) {
	g := flatGateway(t, gateway.Options{Extras: &askingExtras{}}, askingTools(nil))
	ctx := context.Background()
	cs := connectAt(t, g, "old", "2025-11-25", &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return accept("carol"), nil
		},
	})
	res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet"})
	if err != nil || res.NeedsInput() || promptText(res) != "hello carol from greet" {
		t.Fatalf("prompt: %q, %v", promptText(res), err)
	}
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mem://whoami"})
	if err != nil || len(read.Contents) != 1 || read.Contents[0].Text != "carol" {
		t.Fatalf("read: %+v, %v", read, err)
	}
}
