package gateway_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
)

// listedExtras serve the resources they list, and record every read that
// reaches them.
type listedExtras struct {
	fakeExtras
	mu   sync.Mutex
	read []string
}

func (x *listedExtras) PromptSource(context.Context, string) (string, bool)   { return "", false }
func (x *listedExtras) TemplateSource(context.Context, string) (string, bool) { return "", false }
func (x *listedExtras) ResourceSource(_ context.Context, uri string) (string, bool) {
	x.fakeExtras.mu.Lock()
	defer x.fakeExtras.mu.Unlock()
	return "mem", slices.Contains(x.resources, uri)
}

func (x *listedExtras) ReadResource(ctx context.Context, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	x.mu.Lock()
	x.read = append(x.read, p.URI)
	x.mu.Unlock()
	return x.fakeExtras.ReadResource(ctx, p)
}

// TestUnlistedResourceIsNotForwarded: a resources/read of a URI no source
// lists is refused, naming the URI, and reaches no source.
func TestUnlistedResourceIsNotForwarded(t *testing.T) {
	x := &listedExtras{}
	x.set(nil, []string{"mem://r"})
	g := specGateway(t, catalog.Spec{Tools: []*catalog.Tool{catalogtest.Tool("a")}}, &gateway.Options{Mode: expose.Flat, Extras: x})
	h, err := g.HTTPHandler(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		cs := dialHandler(t, h, protocol)
		if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "mem://r"}); err != nil {
			t.Fatalf("%s: reading a listed resource: %v", protocol, err)
		}
		_, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "file:///etc/passwd"})
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpcErr.Message, "file:///etc/passwd") {
			t.Errorf("%s: reading an unlisted URI: %v; want invalid params naming it", protocol, err)
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if slices.Contains(x.read, "file:///etc/passwd") {
		t.Errorf("the unlisted URI reached the source: %v", x.read)
	}
}
