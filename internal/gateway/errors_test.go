package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/view"
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

// TestHTTPErrorsNeverCarryCodeZero: every error toolfold answers over HTTP
// has a JSON-RPC code: a request that needs a session and has none, an
// unknown prompt on a part of the catalog (both protocols), a prompt whose
// source fails.
func TestHTTPErrorsNeverCarryCodeZero(t *testing.T) {
	gh := catalogtest.Tool("a")
	gh.Source = "gh"
	cat := catalogtest.Build(t, catalog.Spec{Tools: []*catalog.Tool{gh}, Groups: []catalog.GroupSpec{
		{ID: "code", Description: "Code", Members: catalog.Members{Sources: []string{"gh"}}},
	}})
	space, err := view.NewSpace(cat, nil)
	if err != nil {
		t.Fatal(err)
	}
	x := &failingExtras{routedExtras: newRoutedExtras()}
	x.set([]string{"p-gh", "p-broken"}, nil)
	g, err := gateway.New(space, &gateway.Options{Mode: expose.Flat, Extras: x})
	if err != nil {
		t.Fatal(err)
	}
	main, err := g.HTTPHandler(nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(main)
	t.Cleanup(srv.Close)

	code, _, body, _ := postMCP(t, srv.URL, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, map[string]string{"Mcp-Protocol-Version": ""})
	if code != http.StatusBadRequest || !strings.Contains(body, `"code":-32600`) || !strings.Contains(body, "initialize") {
		t.Errorf("tools/list without a session: %d %s; want 400, -32600 and how to open one", code, body)
	}

	limited, _ := partHandlers(t, g, "code")
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		for _, c := range []struct {
			h      http.Handler
			prompt string
			code   int64
		}{{limited, "p-mem", jsonrpc.CodeInvalidParams}, {main, "p-broken", jsonrpc.CodeInternalError}} {
			cs := dialHandler(t, c.h, protocol)
			_, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: c.prompt})
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != c.code {
				t.Errorf("%s: prompts/get %s: %v; want code %d", protocol, c.prompt, err, c.code)
			}
		}
	}
}

// failingExtras is routedExtras whose prompt p-broken fails.
type failingExtras struct{ *routedExtras }

func (x *failingExtras) GetPrompt(ctx context.Context, p *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	if p.Name == "p-broken" {
		return nil, errors.New("the prompt's server is down")
	}
	return x.routedExtras.GetPrompt(ctx, p)
}
