package gateway_test

import (
	"context"
	"errors"
	"net/http"
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

// badParams are client-supplied params no handler may meet: each is
// answered invalid params, with a message that says what to send.
var badParams = []struct {
	name, method, params, says string
}{
	{"tools/list short cursor", "tools/list", `{"cursor":"x"}`, "nextCursor"},
	{"tools/list cursor of no list", "tools/list", `{"cursor":"eHl6"}`, "nextCursor"},
	{"tools/list cursor not base64", "tools/list", `{"cursor":"../etc/passwd"}`, "nextCursor"},
	{"tools/list huge cursor", "tools/list", `{"cursor":"` + strings.Repeat("A", 64<<10) + `"}`, "nextCursor"},
	{"prompts/list cursor", "prompts/list", `{"cursor":"x"}`, "cursor"},
	{"resources/list cursor", "resources/list", `{"cursor":"eHl6"}`, "cursor"},
	{"templates/list cursor", "resources/templates/list", `{"cursor":"x"}`, "cursor"},
	{"tools/call without a name", "tools/call", `{"arguments":{}}`, "params.name"},
	{"tools/call control name", "tools/call", `{"name":"a\u0000b","arguments":{}}`, "control characters"},
	{"tools/call huge name", "tools/call", `{"name":"` + strings.Repeat("n", 4<<10) + `"}`, "over the"},
	{"prompts/get without a name", "prompts/get", `{}`, "params.name"},
	{"resources/read without a uri", "resources/read", `{}`, "params.uri"},
	{"resources/read control uri", "resources/read", `{"uri":"gh://r\u0007"}`, "control characters"},
}

func paramsGateway(t *testing.T) *gateway.Gateway {
	t.Helper()
	gh := catalogtest.Tool("a")
	gh.Source = "gh"
	cat := catalogtest.Build(t, catalog.Spec{Tools: []*catalog.Tool{gh}, Groups: []catalog.GroupSpec{
		{ID: "code", Description: "Code", Members: catalog.Members{Sources: []string{"gh"}}},
	}})
	space, err := view.NewSpace(cat, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := gateway.New(space, &gateway.Options{Mode: expose.Flat, Extras: newRoutedExtras()})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestBadParamsAreRefusedOnStdio: a bad cursor once killed the process
// (a nil result read after the SDK refused it); now each bad parameter is
// an invalid-params answer and the session goes on.
func TestBadParamsAreRefusedOnStdio(t *testing.T) {
	p := startStdio(t, paramsGateway(t), nil)
	p.initialize()
	for i, tt := range badParams {
		t.Run(tt.name, func(t *testing.T) {
			p.t = t
			id := string(rune('a' + i))
			p.send(`{"jsonrpc":"2.0","id":"` + id + `","method":"` + tt.method + `","params":` + tt.params + `}`)
			r := p.recv()
			if r.Error == nil || r.Error.Code != jsonrpc.CodeInvalidParams || string(r.ID) != `"`+id+`"` || !strings.Contains(r.Error.Message, tt.says) {
				t.Errorf("got id %s error %+v result %s; want invalid params saying %q", r.ID, r.Error, r.Result, tt.says)
			}
			p.alive(id + "-alive")
		})
	}
}

// TestBadParamsAreRefusedOnHTTP: the same on every HTTP way in, both
// protocol eras: the whole catalog, a token-limited view, a group's own
// endpoint.
func TestBadParamsAreRefusedOnHTTP(t *testing.T) {
	g := paramsGateway(t)
	main, err := g.HTTPHandler(nil)
	if err != nil {
		t.Fatal(err)
	}
	limited, own := partHandlers(t, g, "code")
	type call func(context.Context, *mcp.ClientSession) error
	calls := []struct {
		name string
		do   call
	}{
		{"tools/list", func(ctx context.Context, cs *mcp.ClientSession) error {
			_, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: "x"})
			return err
		}},
		{"prompts/list", func(ctx context.Context, cs *mcp.ClientSession) error {
			_, err := cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: "x"})
			return err
		}},
		{"resources/list", func(ctx context.Context, cs *mcp.ClientSession) error {
			_, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: "eHl6"})
			return err
		}},
		{"tools/call", func(ctx context.Context, cs *mcp.ClientSession) error {
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: strings.Repeat("n", 2<<10)})
			return err
		}},
	}
	for _, h := range []struct {
		name string
		h    http.Handler
	}{{"main", main}, {"limited", limited}, {"group", own}} {
		for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
			cs := dialHandler(t, h.h, protocol)
			for _, c := range calls {
				t.Run(h.name+"/"+protocol+"/"+c.name, func(t *testing.T) {
					err := c.do(context.Background(), cs)
					var rpcErr *jsonrpc.Error
					if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
						t.Fatalf("got %v; want invalid params", err)
					}
					if _, err := cs.ListTools(context.Background(), nil); err != nil {
						t.Fatalf("tools/list after a refused request: %v", err)
					}
				})
			}
		}
	}
}
