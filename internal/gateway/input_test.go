package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/logtest"
	"github.com/toolfold/toolfold/internal/view"
)

// askingTools are tools that ask their client the old way, mid-call, as an
// upstream on a session protocol does, through gateway.DownstreamFrom.
func askingTools(asked chan<- error) []*catalog.Tool {
	schema := map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}
	ask := catalogtest.Tool("ask")
	ask.Handler = func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		d := gateway.DownstreamFrom(ctx)
		if d == nil {
			return nil, errors.New("no Downstream in the context")
		}
		r, err := d.Elicit(ctx, &mcp.ElicitParams{Message: "Your name?", RequestedSchema: schema})
		if asked != nil {
			asked <- err
		}
		if err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("hello %v", r.Content["name"])}}}, nil
	}
	// both asks for a name and samples at the same time, as the Go SDK
	// fulfils a round of several input requests.
	both := catalogtest.Tool("both")
	both.Handler = func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		d := gateway.DownstreamFrom(ctx)
		var wg sync.WaitGroup
		var name, text string
		var errE, errS error
		wg.Go(func() {
			var r *mcp.ElicitResult
			if r, errE = d.Elicit(ctx, &mcp.ElicitParams{Message: "Your name?", RequestedSchema: schema}); errE == nil {
				name = fmt.Sprint(r.Content["name"])
			}
		})
		wg.Go(func() {
			var r *mcp.CreateMessageResult
			if r, errS = d.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 5, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "Greet"}}}}); errS == nil {
				text = r.Content.(*mcp.TextContent).Text
			}
		})
		wg.Wait()
		if err := errors.Join(errE, errS); err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text + " " + name}}}, nil
	}
	return []*catalog.Tool{ask, both}
}

// connect2026 connects a 2026-07-28 client that handles input requests
// itself (the SDK's automatic retry is off) and declares caps.
func connect2026(t *testing.T, opts gateway.Options, tools []*catalog.Tool, caps *mcp.ClientCapabilities) *mcp.ClientSession {
	t.Helper()
	return connectAt(t, flatGateway(t, opts, tools), "mrtr", "2026-07-28",
		&mcp.ClientOptions{Capabilities: caps, MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
}

// flatGateway serves tools in the flat mode.
func flatGateway(t *testing.T, opts gateway.Options, tools []*catalog.Tool) *gateway.Gateway {
	t.Helper()
	space, err := view.NewSpace(catalogtest.Build(t, catalog.Spec{Tools: tools}), nil)
	if err != nil {
		t.Fatal(err)
	}
	opts.Mode = expose.Flat
	g, err := gateway.New(space, &opts)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

var everything = &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}, Elicitation: &mcp.ElicitationCapabilities{}}

func callText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func accept(name string) *mcp.ElicitResult {
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": name}}
}

func wantInvalidParams(t *testing.T, err error, want string) {
	t.Helper()
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpcErr.Message, want) {
		t.Fatalf("err = %v, want invalid params saying %q", err, want)
	}
}

// firstRound calls ask and returns the id of its one input request and the
// requestState.
func firstRound(t *testing.T, cs *mcp.ClientSession, args map[string]any) (string, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if !res.NeedsInput() || len(res.InputRequests) != 1 || res.RequestState == "" {
		t.Fatalf("first round: needsInput=%v requests=%v state=%q text=%q", res.NeedsInput(), res.InputRequests, res.RequestState, callText(res))
	}
	for id, r := range res.InputRequests {
		if p, ok := r.(*mcp.ElicitParams); !ok || p.Message != "Your name?" {
			t.Fatalf("input request %q = %#v", id, r)
		}
		return id, res.RequestState
	}
	panic("unreachable")
}

func TestInputRequiredRoundTrip(t *testing.T) {
	cs := connect2026(t, gateway.Options{}, askingTools(nil), everything)
	ctx := context.Background()
	args := map[string]any{"x": "1"}
	id, state := firstRound(t, cs, args)

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: args, InputResponses: mcp.InputResponseMap{id: accept("alice")}, RequestState: state})
	if err != nil || res.NeedsInput() || callText(res) != "hello alice" {
		t.Fatalf("retry: %v %q, %v", res.NeedsInput(), callText(res), err)
	}
	// A requestState is good for one retry.
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: args, InputResponses: mcp.InputResponseMap{id: accept("mallory")}, RequestState: state})
	wantInvalidParams(t, err, "already used")
}

func TestInputRequiredRefusesBadRetries(t *testing.T) {
	cs := connect2026(t, gateway.Options{}, askingTools(nil), everything)
	ctx := context.Background()
	args := map[string]any{"x": "1"}
	id, state := firstRound(t, cs, args)

	tests := []struct {
		name   string
		params *mcp.CallToolParams
		want   string
	}{
		{"tampered state", &mcp.CallToolParams{Name: "ask", Arguments: args, InputResponses: mcp.InputResponseMap{id: accept("bob")}, RequestState: state + "-TAMPERED"}, "unknown"},
		{"other arguments", &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"x": "2"}, InputResponses: mcp.InputResponseMap{id: accept("bob")}, RequestState: state}, "another call"},
		{"wrong kind of answer", &mcp.CallToolParams{Name: "ask", Arguments: args, InputResponses: mcp.InputResponseMap{id: &mcp.ListRootsResult{Roots: []*mcp.Root{}}}, RequestState: state}, "elicitation result"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := cs.CallTool(ctx, tt.params)
			wantInvalidParams(t, err, tt.want)
		})
	}
	// None of those used the state up: the call goes on with a good retry.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: args, InputResponses: mcp.InputResponseMap{id: accept("carol")}, RequestState: state})
	if err != nil || callText(res) != "hello carol" {
		t.Fatalf("good retry after bad ones: %q, %v", callText(res), err)
	}
}

func TestInputRequiredAsksAgainForWhatIsMissing(t *testing.T) {
	cs := connect2026(t, gateway.Options{}, askingTools(nil), everything)
	ctx := context.Background()
	id, state := firstRound(t, cs, map[string]any{})
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}, InputResponses: mcp.InputResponseMap{"not-asked": accept("x")}, RequestState: state})
	if err != nil || !res.NeedsInput() || res.InputRequests[id] == nil || res.RequestState == state {
		t.Fatalf("retry without the answer: needsInput=%v requests=%v state=%q, %v", res.NeedsInput(), res.InputRequests, res.RequestState, err)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}, InputResponses: mcp.InputResponseMap{id: accept("dave")}, RequestState: res.RequestState})
	if err != nil || callText(res) != "hello dave" {
		t.Fatalf("final retry: %q, %v", callText(res), err)
	}
}

func TestInputRequiredGathersARound(t *testing.T) {
	cs := connect2026(t, gateway.Options{}, askingTools(nil), everything)
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "both", Arguments: map[string]any{}})
	if err != nil || !res.NeedsInput() || len(res.InputRequests) != 2 {
		t.Fatalf("first round: %v %v, %v", res.NeedsInput(), res.InputRequests, err)
	}
	answers := mcp.InputResponseMap{}
	for id, r := range res.InputRequests {
		switch r.(type) {
		case *mcp.ElicitParams:
			answers[id] = accept("erin")
		case *mcp.CreateMessageParams, *mcp.CreateMessageWithToolsParams: // the SDK decodes either
			answers[id] = &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "m", Content: []mcp.Content{&mcp.TextContent{Text: "Hi"}}}
		default:
			t.Fatalf("unexpected input request %T", r)
		}
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "both", Arguments: map[string]any{}, InputResponses: answers, RequestState: res.RequestState})
	if err != nil || callText(res) != "Hi erin" {
		t.Fatalf("retry: %q, %v", callText(res), err)
	}
}

func TestInputRequiredWaitIsBounded(t *testing.T) {
	asked := make(chan error, 1)
	cs := connect2026(t, gateway.Options{InputWait: 100 * time.Millisecond}, askingTools(asked), everything)
	id, state := firstRound(t, cs, map[string]any{})
	select {
	case err := <-asked:
		if err == nil || !strings.Contains(err.Error(), "did not call again") {
			t.Fatalf("the question ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the question is still waiting after the wait ran out")
	}
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}, InputResponses: mcp.InputResponseMap{id: accept("late")}, RequestState: state})
	wantInvalidParams(t, err, "expired")
}

func TestInputRequiredNeedsTheCapability(t *testing.T) {
	cs := connect2026(t, gateway.Options{}, askingTools(nil), &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}})
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}})
	if err != nil || res.NeedsInput() || !res.IsError || !strings.Contains(callText(res), `did not declare the capability "elicitation"`) {
		t.Fatalf("got needsInput=%v isError=%v %q, %v", res.NeedsInput(), res.IsError, callText(res), err)
	}
}

// TestInputRequiredRetryIsAudited: the retry that carries the answers is
// the request that gets the result, so its audit line names the tool's
// source and the outcome the source gave, not "refused" with no source.
func TestInputRequiredRetryIsAudited(t *testing.T) {
	logs := &logtest.Buffer{}
	tools := askingTools(nil)
	for _, tool := range tools {
		tool.Source = "asker"
	}
	cs := connect2026(t, gateway.Options{Logger: logs.Logger(slog.LevelInfo)}, tools, everything)
	args := map[string]any{"x": "1"}
	id, state := firstRound(t, cs, args)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask", Arguments: args, InputResponses: mcp.InputResponseMap{id: accept("alice")}, RequestState: state})
	if err != nil || callText(res) != "hello alice" {
		t.Fatalf("retry: %q, %v", callText(res), err)
	}
	var lines []string
	for line := range strings.Lines(logs.String()) {
		if strings.Contains(line, `msg="tool call"`) {
			lines = append(lines, line)
		}
	}
	if len(lines) != 2 {
		t.Fatalf("audit lines = %q, want one per round", lines)
	}
	if last := lines[1]; !strings.Contains(last, "outcome=ok") || !strings.Contains(last, "source=asker") {
		t.Errorf("the retry's audit line = %q, want outcome=ok source=asker", last)
	}
}
