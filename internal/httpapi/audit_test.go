package httpapi_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/httpapi"
	"github.com/toolfold/toolfold/internal/logtest"
	"github.com/toolfold/toolfold/internal/oauth"
	"github.com/toolfold/toolfold/internal/oauth/oauthtest"
)

type bearerTransport string

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// TestAuditLogNamesTheCaller: every tool call is one log line naming the
// caller (an OAuth sub, or a static token's place in the config), the tool,
// the source and the outcome, and no token nor a name the client made up;
// and a session stays its caller's.
func TestAuditLogNamesTheCaller(t *testing.T) {
	var logs logtest.Buffer
	logger := logs.Logger(slog.LevelInfo)
	gw, mcpHandler := demoGateway(t, &gateway.Options{Mode: expose.Search, Logger: logger})
	idp := oauthtest.New(t)
	srv := httptest.NewUnstartedServer(nil)
	resource := "http://" + srv.Listener.Addr().String() + "/mcp"
	verifier, err := oauth.New(&config.OAuthConfig{Resource: resource, Issuers: []string{idp.URL},
		Rules: []config.OAuthRule{{Group: "docs-team", Groups: []string{"*"}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer verifier.Close()
	api, err := httpapi.New(&httpapi.Options{MCP: mcpHandler, Catalog: gw.Catalog, OAuth: verifier, Logger: logger,
		Tokens: []config.TokenConfig{{Token: "static-secret-token-value"}}})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = api
	srv.Start()
	defer srv.Close()

	aliceToken := idp.Token(t, resource, nil)
	for _, token := range []string{aliceToken, "static-secret-token-value"} {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(),
			&mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport(token)}},
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}) // a session, to try to ride
		if err != nil {
			t.Fatal(err)
		}
		if cs.ID() == "" {
			t.Fatal("no session to try another token on")
		}
		if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "find_tools", Arguments: map[string]any{"query": "read a file"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "calculate", "arguments": map[string]any{"expression": "2^10"}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "no_such_tool\nforged=1", "arguments": map[string]any{}}}); err != nil {
			t.Fatal(err)
		}
		// The session is its caller's: another valid token cannot use it.
		other := idp.Token(t, resource, map[string]any{"sub": "mallory"})
		req, _ := http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
		req.Header.Set("Authorization", "Bearer "+other)
		req.Header.Set("Mcp-Session-Id", cs.ID())
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode/100 == 2 {
			t.Errorf("mallory's token used a session another caller opened: %d", resp.StatusCode)
		}
		cs.Close()
	}
	out := logs.String()
	for _, want := range []string{
		`msg="tool call" caller=alice tool=find_tools source=toolfold outcome=ok`,
		`msg="tool call" caller=alice tool=call_tool source="" outcome=refused`,
		`msg="tool call" caller=alice tool=calculate via=call_tool source=`,
		`msg="tool call" caller=http.auth.tokens[0] tool=find_tools`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, aliceToken) || strings.Contains(out, "static-secret-token-value") || strings.Contains(out, "forged=1") {
		t.Errorf("the log holds a token or a name the client made up:\n%s", out)
	}
}
