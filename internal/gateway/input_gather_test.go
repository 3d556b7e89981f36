package gateway_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/gateway"
)

// roundTool asks for a name and a greeting in one round, as an upstream
// of the 2026-07-28 protocol does (its inputRequests).
func roundTool() *catalog.Tool {
	tool := catalogtest.Tool("round")
	tool.Handler = func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		d, ok := gateway.DownstreamFrom(ctx).(interface {
			RequestInput(context.Context, mcp.InputRequestMap) (mcp.InputResponseMap, error)
		})
		if !ok {
			return nil, errors.New("the Downstream cannot ask a round whole")
		}
		_, err := d.RequestInput(ctx, mcp.InputRequestMap{
			"name":  &mcp.ElicitParams{Message: "Your name?", RequestedSchema: map[string]any{"type": "object"}},
			"greet": &mcp.CreateMessageParams{MaxTokens: 5, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "Greet"}}}},
		})
		if err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
	}
	return tool
}

// A round asked whole goes out as soon as it is in; only questions asked
// one by one wait for the upstream to be quiet (inputGather), since
// nothing says when the last of them is in. In a synctest bubble the
// clock moves only when every goroutine waits, so the time a round took
// is exactly the pauses it waited. Before, every round waited the pause.
func TestInputRoundAskedWholeGoesOutAtOnce(t *testing.T) {
	for _, tc := range []struct {
		tool  string
		pause bool // waits for quiet
	}{
		{tool: "round", pause: false},
		{tool: "both", pause: true},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := flatGateway(t, gateway.Options{}, append(askingTools(nil), roundTool()))
				defer g.Close()
				cs := connectAt(t, g, "mrtr", "2026-07-28",
					&mcp.ClientOptions{Capabilities: everything, MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
				defer cs.Close()
				began := time.Now()
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.tool, Arguments: map[string]any{}})
				took := time.Since(began)
				if err != nil || !res.NeedsInput() || len(res.InputRequests) != 2 {
					t.Fatalf("first round: %v %v, %v", res.NeedsInput(), res.InputRequests, err)
				}
				if paused := took > 0; paused != tc.pause {
					t.Errorf("the round took %s of the bubble's clock; want a pause: %v", took, tc.pause)
				}
			})
		})
	}
}
