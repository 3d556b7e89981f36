package sdkshim_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// titledMultiSelect is a multi-select enum with titles whose items also say
// their type, as the protocol allows and the conformance fixture sends.
const titledMultiSelect = `{"type":"object","properties":{"colours":{"type":"array","items":{"type":"string","anyOf":[{"const":"r","title":"Red"},{"const":"g","title":"Green"}]}}}}`

// TestSDKClientRefusesTitledMultiSelectWithAType: the SDK client refuses
// an elicitation whose titled multi-select items carry "type":"string",
// before its handler runs; a receiving middleware sees the request first
// and can answer it. The upstream package's elicitationMiddleware
// (internal/upstream/server.go) relies on the second to forward such
// requests to the client that answers. When the first half fails, the SDK
// takes the schema and the middleware's bypass may go.
func TestSDKClientRefusesTitledMultiSelectWithAType(t *testing.T) {
	elicit := func(t *testing.T, middleware bool) (answer string, handled bool) {
		var ran atomic.Bool
		c := mcp.NewClient(&mcp.Implementation{Name: "pin", Version: "1"}, &mcp.ClientOptions{
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				ran.Store(true)
				return &mcp.ElicitResult{Action: "decline"}, nil
			},
		})
		if middleware {
			c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					if method == "elicitation/create" {
						return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"colours": []any{"r"}}}, nil
					}
					return next(ctx, method, req)
				}
			})
		}
		write, read := scripted(t, c, `{}`)
		if err := write(`{"jsonrpc":"2.0","id":"e1","method":"elicitation/create","params":{"message":"pick","requestedSchema":` + titledMultiSelect + `}}`); err != nil {
			t.Fatal(err)
		}
		answer = read()
		return answer, ran.Load()
	}
	if answer, handled := elicit(t, false); !strings.Contains(answer, `"error"`) || handled || !strings.Contains(answer, "colours") {
		t.Fatalf("the bare client answered %s (handler ran: %v); the SDK now takes a titled multi-select with a type, so elicitationMiddleware's bypass may go", answer, handled)
	}
	if answer, _ := elicit(t, true); !strings.Contains(answer, `"action":"accept"`) {
		t.Fatalf("with a receiving middleware the client answered %s; the middleware no longer sees elicitation/create before the SDK's check", answer)
	}
}
