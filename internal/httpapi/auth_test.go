package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/config"
)

const (
	fullToken    = "full-access-token-0123456789"
	limitedToken = "limited-token-abcdefghijkl"
	// clientToken and limitedClientToken are no admins: MCP and health only.
	clientToken        = "client-token-mnopqrstuvwx"
	limitedClientToken = "limited-client-token-yz0123"
)

// withTokens gives the fixture an admin token for everything, an admin
// token limited to code.repos and read-only tools, and two client tokens
// (no admin), one of them limited to code.repos.
func withTokens(o *Options) {
	o.Tokens = []config.TokenConfig{
		{Token: fullToken, Admin: true},
		{Token: limitedToken, Groups: []string{"code.repos"}, ReadOnly: true, Admin: true},
		{Token: clientToken},
		{Token: limitedClientToken, Groups: []string{"code.repos"}},
	}
}

// readOnlyTree is catalogtest.Tree with c, e and u read-only.
func readOnlyTree(t *testing.T) *catalog.Catalog {
	t.Helper()
	var tools []*catalog.Tool
	for _, id := range []string{"a", "b", "c", "d", "e", "f", "u"} {
		tl := catalogtest.Tool(id)
		tl.Source = "src-" + id
		if id == "c" || id == "e" || id == "u" {
			tl.Def.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true}
		}
		tools = append(tools, tl)
	}
	return catalogtest.Build(t, catalog.Spec{Tools: tools, Groups: []catalog.GroupSpec{
		{ID: "code", Description: "Code", Members: catalog.Members{Tools: []catalog.ToolID{"a", "b"}}},
		{ID: "code.repos", Parent: "code", Description: "Repositories", Members: catalog.Members{Tools: []catalog.ToolID{"c", "d"}}},
		{ID: "code.repos.br", Parent: "code.repos", Description: "Branches", Members: catalog.Members{Tools: []catalog.ToolID{"e"}}},
		{ID: "docs", Description: "Documents", Members: catalog.Members{Tools: []catalog.ToolID{"a", "f"}}},
		{ID: "secret", Description: "Hidden away", Default: catalog.Excluded, Members: catalog.Members{Tools: []catalog.ToolID{"f"}}},
	}})
}

func TestAuth(t *testing.T) {
	tests := []struct {
		name          string
		authorization string
		status        int
		challenge     string // WWW-Authenticate on a 401
		message       string
	}{
		{"missing", "", 401, `Bearer realm="toolfold"`, `send the header "Authorization: Bearer <token>" with one of the tokens set under http.auth.tokens in toolfold's config. There is no OAuth here`},
		{"wrong", "Bearer wrong-token-value-xyz", 401, `Bearer realm="toolfold", error="invalid_token"`, "not one of http.auth.tokens"},
		{"a prefix of a right one", "Bearer " + fullToken[:10], 401, `error="invalid_token"`, "not one of http.auth.tokens"},
		{"right one with extra", "Bearer " + fullToken + "x", 401, `error="invalid_token"`, "not one of http.auth.tokens"},
		{"empty bearer", "Bearer ", 401, `error="invalid_token"`, "not one of http.auth.tokens"},
		{"another scheme", "Basic " + fullToken, 401, `error="invalid_token"`, "not one of http.auth.tokens"},
		{"800 KiB", "Bearer " + strings.Repeat("a", 800<<10), 401, `error="invalid_token"`, "is 800 KiB, over the 32 KiB"},
		{"right", "Bearer " + fullToken, 200, "", ""},
		{"right, scheme in lower case", "bearer " + fullToken, 200, "", ""},
		{"the limited one", "Bearer " + limitedToken, 200, "", ""},
	}
	f := newFixture(t, withTokens)
	for _, tt := range tests {
		for _, path := range []string{"/healthz", "/api/groups", "/api/tools", "/", "/mcp", "/mcp/code.repos"} {
			t.Run(tt.name+" "+path, func(t *testing.T) {
				h := http.Header{}
				if tt.authorization != "" {
					h.Set("Authorization", tt.authorization)
				}
				w := f.do(t, "GET", path, h)
				if w.Code != tt.status {
					t.Fatalf("%s = %d, want %d: %s", path, w.Code, tt.status, w.Body)
				}
				if tt.status != 401 {
					return
				}
				if got := w.Header().Get("WWW-Authenticate"); !strings.Contains(got, tt.challenge) {
					t.Errorf("WWW-Authenticate = %q, want %q", got, tt.challenge)
				}
				wantError(tt.message)(t, w)
				if _, sent, _ := strings.Cut(tt.authorization, " "); len(sent) > 3 && strings.Contains(w.Body.String(), sent) {
					t.Errorf("the answer echoes the token sent: %s", w.Body)
				}
			})
		}
	}
	for _, secret := range []string{fullToken, limitedToken, "wrong-token-value-xyz", fullToken[:10]} {
		if strings.Contains(f.logs.String(), secret) {
			t.Errorf("a token is in the logs:\n%s", f.logs)
		}
	}
	if !strings.Contains(f.logs.String(), "refused a request without a valid bearer token") {
		t.Errorf("refusals are not logged:\n%s", f.logs)
	}
}

func TestAuthRunsAfterOriginCheck(t *testing.T) {
	// A page that may not talk to toolfold must not learn whether a token
	// it guessed is right: the Origin refusal comes first.
	f := newFixture(t, withTokens)
	w := f.do(t, "GET", "/api/tools", http.Header{"Origin": {"https://evil.example"}, "Authorization": {"Bearer " + fullToken}})
	if w.Code != http.StatusForbidden {
		t.Errorf("a right token from a foreign origin = %d, want 403", w.Code)
	}
}

func TestLimitedTokenSeesItsGroupsAlone(t *testing.T) {
	f := newFixture(t, withTokens)
	f.cat.Store(readOnlyTree(t))
	f.sources = []SourceStatus{
		{Name: "src-c", Kind: KindMCP, State: StateFailed, Error: "exited", StderrTail: "private output"},
		{Name: "src-a", Kind: KindMCP, State: StateReady},
	}
	auth := func(token string) http.Header { return http.Header{"Authorization": {"Bearer " + token}} }
	limited := auth(limitedToken)

	tree := decode[GroupTree](t, f.do(t, "GET", "/api/groups", limited))
	if got := fmt.Sprint(names(tree.Groups, groupName)); got != "[code.repos code.repos.br]" {
		t.Errorf("limited token's groups = %s, want code.repos and the group inside it", got)
	}
	if len(tree.Excluded) != 0 {
		t.Errorf("limited token sees excluded groups %v", tree.Excluded)
	}
	if got := fmt.Sprint(names(decode[[]ToolRow](t, f.do(t, "GET", "/api/tools", limited)), toolName)); got != "[c e u]" {
		t.Errorf("limited token's tools = %s, want the read-only tools of its groups and the ungrouped one", got)
	}
	if w := f.do(t, "GET", "/api/tools?group=docs", limited); w.Code != 404 {
		t.Errorf("limited token asking for another group's tools = %d, want 404", w.Code)
	}
	h := decode[Health](t, f.do(t, "GET", "/healthz", limited))
	if len(h.Sources) != 1 || h.Sources[0].Name != "src-c" || h.Sources[0].StderrTail != "" || h.Tools != 3 || h.Groups != 2 {
		t.Errorf("limited token's health = %+v, want src-c alone without its stderr, 3 tools, 2 groups", h)
	}
	if h.Status != StatusServing {
		t.Errorf("status = %q: the status sums up every source, whoever asks", h.Status)
	}
	page := f.do(t, "GET", "/", limited).Body.String()
	if strings.Contains(page, "Documents") || strings.Contains(page, "private output") || !strings.Contains(page, "limited to code.repos") {
		t.Errorf("limited token's dashboard shows more than its groups, or does not say it is limited:\n%s", page)
	}

	// The token's group limit is enforced here; the read-only limit is
	// handed to the gateway, which builds the group's handler.
	if w := f.do(t, "POST", "/mcp/code.repos.br", limited); w.Code != 200 || w.Body.String() != "MCP for code.repos.br (read-only true)" {
		t.Errorf("/mcp/code.repos.br with the limited token = %d %s", w.Code, w.Body)
	}
	if w := f.do(t, "POST", "/mcp/docs", limited); w.Code != 404 || strings.Contains(w.Body.String(), `"docs"?`) {
		t.Errorf("/mcp/docs with the limited token = %d %s, want 404 that suggests no group it may not reach", w.Code, w.Body)
	}
	if w := f.do(t, "POST", "/mcp/secret", auth(fullToken)); w.Code != 404 || !strings.Contains(w.Body.String(), "excluded") {
		t.Errorf("/mcp/secret = %d %s, want 404 saying the group is excluded", w.Code, w.Body)
	}

	full := decode[GroupTree](t, f.do(t, "GET", "/api/groups", auth(fullToken)))
	if len(full.Groups) != 4 || fmt.Sprint(full.Excluded) != "[secret]" {
		t.Errorf("full token's tree = %+v", full)
	}
}

func TestAccessReachesTheHandlers(t *testing.T) {
	var seen []Access
	f := newFixture(t, func(o *Options) {
		withTokens(o)
		o.MCP = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			a, ok := AccessFromContext(r.Context())
			if !ok {
				t.Error("no access in the context of an authenticated request")
			}
			seen = append(seen, a)
		})
	})
	f.do(t, "POST", "/mcp", http.Header{"Authorization": {"Bearer " + limitedToken}})
	f.do(t, "POST", "/mcp", http.Header{"Authorization": {"Bearer " + fullToken}})
	want := `[{http.auth.tokens[1]  [code.repos] true true} {http.auth.tokens[0]  [] false true}]`
	if got := fmt.Sprint(seen); got != want {
		t.Errorf("accesses = %s, want %s", got, want)
	}
	if seen[1].Limited() || !seen[0].Limited() {
		t.Error("Limited is wrong")
	}
	if _, ok := AccessFromContext(context.Background()); ok {
		t.Error("AccessFromContext reports an access on a bare context")
	}
}

func TestNoAccessWithoutAuth(t *testing.T) {
	f := newFixture(t, func(o *Options) {
		o.MCP = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if a, ok := AccessFromContext(r.Context()); ok || a.Limited() {
				t.Errorf("without auth the context holds %+v", a)
			}
		})
	})
	f.do(t, "POST", "/mcp", nil)
}

// TestMCPClientThroughTheAPI connects the SDK's client to the SDK's
// streamable handler mounted behind the API, with a token.
func TestMCPClientThroughTheAPI(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "hello"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil, nil
	})
	f := newFixture(t, func(o *Options) {
		withTokens(o)
		o.MCP = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	})
	srv := newLoopbackServer(t, f.api)

	connect := func(token string) (*mcp.ClientSession, error) {
		client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
		return client.Connect(t.Context(), &mcp.StreamableClientTransport{
			Endpoint:   srv.URL + "/mcp",
			HTTPClient: &http.Client{Transport: bearer{token, srv.Client().Transport}},
		}, nil)
	}
	cs, err := connect(fullToken)
	if err != nil {
		t.Fatalf("connecting with the right token: %v", err)
	}
	defer cs.Close()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; text != "hi" {
		t.Errorf("hello = %q", text)
	}
	if _, err := connect("not-the-token"); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Errorf("connecting with a wrong token: %v, want Unauthorized", err)
	}
}

// bearer adds a token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func TestErrorBodiesAreJSON(t *testing.T) {
	f := newFixture(t, withTokens)
	w := f.do(t, "GET", "/api/tools", nil)
	var body map[string]string
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body["error"] == "" || w.Header().Get("Content-Type") != "application/json" {
		t.Errorf("401 body = %q (%v), want {\"error\": ...} as application/json", w.Body, err)
	}
}

// TestNoTokenSuggestsNoOAuth: the MCP Inspector (the TypeScript SDK with an
// auth provider) answers a 401 with OAuth discovery: it reads the
// challenge's resource_metadata, then fetches the well-known metadata
// documents. With static tokens the challenge names no metadata, and the
// documents answer, without a token, that there is no OAuth and where the
// token is configured.
func TestNoTokenSuggestsNoOAuth(t *testing.T) {
	f := newFixture(t, withTokens)
	w := f.do(t, "POST", "/mcp", http.Header{})
	if w.Code != 401 {
		t.Fatalf("POST /mcp without a token = %d", w.Code)
	}
	challenge := w.Header().Get("WWW-Authenticate")
	if !strings.HasPrefix(challenge, "Bearer ") || strings.Contains(challenge, "resource_metadata") || strings.Contains(challenge, "scope") {
		t.Errorf("the challenge %q must ask for a bearer token and point at no OAuth metadata", challenge)
	}
	var body struct{ Error string }
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || !strings.Contains(body.Error, "bearer token") || !strings.Contains(body.Error, "http.auth.tokens") {
		t.Errorf("the body must say a bearer token is needed and where it is configured: %s", w.Body)
	}
	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"} {
		w := f.do(t, "GET", path, http.Header{})
		if w.Code != 404 || !strings.Contains(w.Body.String(), "does not use OAuth") || !strings.Contains(w.Body.String(), "http.auth.tokens") {
			t.Errorf("GET %s = %d %s; want 404 saying there is no OAuth", path, w.Code, w.Body)
		}
	}
}

// TestOperatorRoutesNeedAnAdminToken checks that /metrics, /api/* and the
// dashboard, which show every source, tool and call count, are refused to
// tokens not marked admin, limited or not, while MCP and health stay open
// to them.
func TestOperatorRoutesNeedAnAdminToken(t *testing.T) {
	f := newFixture(t, func(o *Options) {
		withTokens(o)
		o.Metrics = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "toolfold_sessions_total 1") })
		o.MCP = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) })
	})
	auth := func(token string) http.Header { return http.Header{"Authorization": {"Bearer " + token}} }
	for _, path := range []string{"/metrics", "/api/groups", "/api/tools", "/"} {
		for _, token := range []string{clientToken, limitedClientToken} {
			w := f.do(t, "GET", path, auth(token))
			if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), `"admin\": true`) || strings.Contains(w.Body.String(), token) {
				t.Errorf("%s with a client token = %d %s; want 403 naming the admin flag, without the token", path, w.Code, w.Body)
			}
		}
		if w := f.do(t, "GET", path, auth(fullToken)); w.Code != http.StatusOK {
			t.Errorf("%s with an admin token = %d %s", path, w.Code, w.Body)
		}
	}
	if w := f.do(t, "GET", "/healthz", auth(clientToken)); w.Code != http.StatusOK {
		t.Errorf("/healthz with a client token = %d", w.Code)
	}
	if w := f.do(t, "POST", "/mcp", auth(clientToken)); w.Code != http.StatusAccepted {
		t.Errorf("/mcp with a client token = %d", w.Code)
	}
	// Without auth, everything stays open, as on loopback.
	open := newFixture(t, func(o *Options) {
		o.Metrics = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "m") })
	})
	for _, path := range []string{"/metrics", "/api/groups", "/api/tools", "/"} {
		if w := open.do(t, "GET", path, nil); w.Code != http.StatusOK {
			t.Errorf("%s without auth = %d", path, w.Code)
		}
	}
}
