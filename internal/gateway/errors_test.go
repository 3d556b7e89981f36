package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
)

// TestHandlerErrorsReachTheClient: a JSON-RPC error from a source is a
// protocol answer the client must see as such (code and data intact, as a
// missing client capability must be); any other error is a tool error.
func TestHandlerErrorsReachTheClient(t *testing.T) {
	rpcTool := catalogtest.Tool("needs_sampling")
	rpcTool.Handler = func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: "sampling required", Data: json.RawMessage(`{"requiredCapabilities":{"sampling":{}}}`)}
	}
	plainTool := catalogtest.Tool("broken")
	plainTool.Handler = func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("the disk is full")
	}
	g := specGateway(t, catalog.Spec{Tools: []*catalog.Tool{rpcTool, plainTool}}, &gateway.Options{Mode: expose.Flat})
	c := connect(t, g, "errors-test")

	tests := []struct {
		tool     string
		wantCode int64 // 0: a tool error result
		wantText string
	}{
		{"needs_sampling", mcp.CodeMissingRequiredClientCapabilities, "sampling required"},
		{"broken", 0, "broken failed: the disk is full"},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			res, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: tt.tool, Arguments: map[string]any{}})
			if tt.wantCode != 0 {
				var rpcErr *jsonrpc.Error
				if !errors.As(err, &rpcErr) || rpcErr.Code != tt.wantCode || !strings.Contains(rpcErr.Message, tt.wantText) {
					t.Fatalf("got %v, %v; want JSON-RPC error %d", res, err, tt.wantCode)
				}
				if !strings.Contains(string(rpcErr.Data), `"sampling"`) {
					t.Errorf("the error's data was lost: %s", rpcErr.Data)
				}
				return
			}
			if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, tt.wantText) {
				t.Fatalf("got %v, %v; want a tool error saying %q", res, err, tt.wantText)
			}
		})
	}
}
