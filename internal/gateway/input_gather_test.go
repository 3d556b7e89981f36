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
	"github.com/toolfold/toolfold/internal/relay"
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

// readerTool asks as the questions of a stdio upstream reach the gateway:
// its connection's reader counts each question it hands on (Arrived) and
// passes it with its Handoff, and drains once it has handed on what the
// server wrote. together: the server wrote both questions in one write,
// so both are read before the reader drains; else it wrote the first
// alone (the second would come later, after the client's answer). held
// is told, before the reader drains, whether a round went out already.
func readerTool(together bool, held chan<- bool, roundOut <-chan struct{}) *catalog.Tool {
	tool := catalogtest.Tool("reader")
	tool.Handler = func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		d := gateway.DownstreamFrom(ctx)
		in := &relay.Intake{}
		in.Reading()
		asks := []func(context.Context) error{
			func(ctx context.Context) error {
				_, err := d.Elicit(ctx, &mcp.ElicitParams{Message: "Your name?", RequestedSchema: map[string]any{"type": "object"}})
				return err
			},
			func(ctx context.Context) error {
				_, err := d.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 5, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "Greet"}}}})
				return err
			},
		}
		if !together {
			asks = asks[:1]
		}
		errs := make(chan error, len(asks))
		for _, ask := range asks {
			in.Arrived()
			h := in.Handoff()
			go func() { errs <- ask(relay.WithHandoff(ctx, h)) }()
		}
		synctest.Wait() // every question held, the round waiting
		select {
		case <-roundOut:
			held <- false
		default:
			held <- true
		}
		in.Drained()
		for range asks {
			if err := <-errs; err != nil {
				return nil, err
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
	}
	return tool
}

// Questions from a stdio upstream go out when its reader has nothing more
// in hand, an event: those it wrote together in one round, and no timer
// fires for it (the bubble's clock stands still between the call and its
// round). A round does not go out while the reader still holds input.
func TestInputRoundClosesOnTheReadersDrain(t *testing.T) {
	for _, tc := range []struct {
		name      string
		together  bool
		questions int
	}{
		{"written together", true, 2},
		{"written alone", false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				held := make(chan bool, 1)
				roundOut := make(chan struct{})
				g := flatGateway(t, gateway.Options{}, []*catalog.Tool{readerTool(tc.together, held, roundOut)})
				defer g.Close()
				cs := connectAt(t, g, "mrtr", "2026-07-28",
					&mcp.ClientOptions{Capabilities: everything, MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
				defer cs.Close()
				began := time.Now()
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "reader", Arguments: map[string]any{}})
				close(roundOut)
				took := time.Since(began)
				if err != nil || !res.NeedsInput() || len(res.InputRequests) != tc.questions {
					t.Fatalf("first round: %v %v, %v; want %d questions", res.NeedsInput(), res.InputRequests, err, tc.questions)
				}
				if took != gateway.SettleQuiet {
					t.Errorf("the round took %s of the bubble's clock, want the %s kept open after the reader's drain: a timer closed it, not the drain", took, gateway.SettleQuiet)
				}
				if !<-held {
					t.Error("the round went out before the reader drained")
				}
			})
		})
	}
}
