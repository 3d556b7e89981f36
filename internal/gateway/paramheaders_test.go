package gateway_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/view"
)

// TestParamHeadersAreCheckedForBoundTools: over streamable HTTP on the
// 2026-07-28 protocol, a call to a tool whose schema binds an argument to
// a header (x-mcp-header) is refused when the Mcp-Param header disagrees
// with the argument, and a tool that binds none takes its call whatever
// headers come with it. The per-request server registers only the bound
// tools with the SDK, which checks the headers; this pins that they are
// still checked, in every mode's wire names.
func TestParamHeadersAreCheckedForBoundTools(t *testing.T) {
	answer := func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran " + req.Params.Name}}}, nil
	}
	bound := catalogtest.Tool("bound")
	bound.Def.InputSchema = json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)
	plain := catalogtest.Tool("plain")
	plain.Def.InputSchema = json.RawMessage(`{"type":"object","properties":{"region":{"type":"string"}}}`)
	for _, tl := range []*catalog.Tool{bound, plain} {
		tl.Source, tl.Handler = "src", answer
	}
	for _, mode := range []expose.Mode{expose.Flat, expose.Search} {
		// The bound tool is in the first catalog, or comes with an Update
		// (a server finishing its start, a pending start's catalog).
		for _, later := range []bool{false, true} {
			name := string(mode) + map[bool]string{false: "", true: "/after an update"}[later]
			t.Run(name, func(t *testing.T) {
				checkParamHeaders(t, mode, later, bound, plain)
			})
		}
	}
}

func checkParamHeaders(t *testing.T, mode expose.Mode, later bool, bound, plain *catalog.Tool) {
	t.Helper()
	first := catalog.Spec{Tools: []*catalog.Tool{bound, plain}}
	if later {
		first = catalog.Spec{Tools: []*catalog.Tool{plain}}
	}
	g := specGateway(t, first, &gateway.Options{Mode: mode})
	if later {
		space, err := view.NewSpace(catalogtest.Build(t, catalog.Spec{Tools: []*catalog.Tool{bound, plain}}), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Update(space); err != nil {
			t.Fatal(err)
		}
	}
	h, err := g.HTTPHandler(nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		name, tool, region string
		header             map[string]string
		ran                bool
	}{
		{"bound, matching header", "bound", "eu", map[string]string{"Mcp-Param-Region": "eu"}, true},
		{"bound, header disagrees", "bound", "eu", map[string]string{"Mcp-Param-Region": "us"}, false},
		{"bound, header missing", "bound", "eu", nil, false},
		{"plain, no header", "plain", "eu", nil, true},
	} {
		body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"` + tc.tool + `","arguments":{"region":"` + tc.region + `"},"_meta":{` +
			`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"h","version":"1"},` +
			`"io.modelcontextprotocol/clientCapabilities":{}}}}`
		code, _, got, _ := postMCP(t, srv.URL, body, map[string]string{
			"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tc.tool}, tc.header)
		if ran := strings.Contains(got, "ran "+tc.tool); ran != tc.ran {
			t.Errorf("%s: ran = %v, want %v (%d %s)", tc.name, ran, tc.ran, code, got)
		}
		if !tc.ran && !strings.Contains(got, "header mismatch") {
			t.Errorf("%s: refused without naming the header mismatch: %d %s", tc.name, code, got)
		}
	}
}
