package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/toolfold/toolfold/internal/groupsext"
	"github.com/toolfold/toolfold/internal/logtest"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// oidcProvider is a running oidc-provider from npm (e2e/oidc): a real,
// certified OpenID provider on loopback, whose clients alice (groups
// claim "docs"), bob ("code"), admin ("admins") and brief ("docs", tokens
// that expire after one second) get tokens by the client credentials grant.
type oidcProvider struct {
	issuer string
	port   string
	cmd    *exec.Cmd
	done   chan struct{}
}

// requireOIDC returns node, or skips (fails where node is required) when
// the provider's package is not installed.
func requireOIDC(t *testing.T) string {
	t.Helper()
	node := requireNode(t)
	if _, err := os.Stat("oidc/node_modules/oidc-provider/package.json"); err != nil {
		if os.Getenv("TOOLFOLD_REQUIRE_NODE") == "1" {
			t.Fatal("e2e/oidc/node_modules is missing: run npm ci --prefix e2e/oidc")
		}
		t.Skip("skipping: e2e/oidc/node_modules is missing; run npm ci --prefix e2e/oidc")
	}
	return node
}

// startOIDC starts the provider on port ("0" for any) with the signing key
// in keyFile (made when missing) and waits until it says it listens. Once
// in CI a provider hung before it listened (no CPU, no socket, for
// minutes): one that says nothing for a minute is killed and started
// again, a bound for a program that hangs, not a guess at how long a
// start takes (it takes well under a second).
func startOIDC(t *testing.T, port, keyFile string) *oidcProvider {
	t.Helper()
	for try := 1; ; try++ {
		p, ok := launchOIDC(t, port, keyFile)
		if ok {
			return p
		}
		if try == 3 {
			t.Fatalf("oidc-provider said nothing for a minute, %d times", try)
		}
	}
}

// launchOIDC starts the provider once; false means it hung and was killed.
func launchOIDC(t *testing.T, port, keyFile string) (*oidcProvider, bool) {
	t.Helper()
	node := requireOIDC(t)
	cmd := exec.Command(node, "oidc/provider.mjs", port, keyFile)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &logtest.Buffer{} // written by the child's copier, read here
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &oidcProvider{cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); close(p.done) }()
	t.Cleanup(p.stop)
	type said struct {
		line string
		err  error
	}
	first := make(chan said, 1)
	go func() {
		line, err := bufio.NewReader(stdout).ReadString('\n')
		first <- said{line, err}
	}()
	var got said
	select {
	case got = <-first:
	case <-time.After(time.Minute):
		t.Logf("oidc-provider said nothing for a minute; starting it again. Its stderr:\n%s", stderr.String())
		p.stop() // its stdout closes, which ends the reader
		return nil, false
	}
	if got.err != nil {
		t.Fatalf("oidc-provider did not start: %v\n%s", got.err, stderr.String())
	}
	var ready struct{ Issuer string }
	if err := json.Unmarshal([]byte(got.line), &ready); err != nil || ready.Issuer == "" {
		t.Fatalf("oidc-provider said %q: %v", got.line, err)
	}
	p.issuer = ready.Issuer
	u, _ := url.Parse(p.issuer)
	p.port = u.Port()
	return p, true
}

// stop ends the provider and waits until it has gone (its port is free).
func (p *oidcProvider) stop() {
	if p.cmd.Process != nil {
		p.cmd.Process.Kill()
	}
	<-p.done
}

// token gets an access token for client as a client would: the token
// endpoint from the provider's metadata, then the client credentials
// grant with a resource indicator (RFC 8707) naming the MCP server.
func (p *oidcProvider) token(t *testing.T, client, resource string) string {
	t.Helper()
	var meta oauthex.AuthServerMeta
	getJSON(t, p.issuer+"/.well-known/openid-configuration", &meta)
	cc := clientcredentials.Config{
		ClientID: client, ClientSecret: client + "-secret", TokenURL: meta.TokenEndpoint,
		Scopes: []string{"tools:read"}, AuthStyle: oauth2.AuthStyleInHeader,
		EndpointParams: url.Values{"resource": {resource}},
	}
	tok, err := cc.Token(context.Background())
	if err != nil {
		t.Fatalf("getting a token for %s from %s: %v", client, p.issuer, err)
	}
	return tok.AccessToken
}

// startOAuthToolfold serves echo (say), printf (format) and the reference
// "everything" server (tools, prompts, resources) with OAuth from issuer:
// docs reaches echo, code reaches printf, fmt and everything, admins all.
// fmt holds printf's tools as one grouped tool.
// addr "" picks a free address; the resource is the returned base + "/mcp".
func startOAuthToolfold(t *testing.T, addr string, stateless bool, issuers ...string) string {
	t.Helper()
	return startOAuthToolfoldWith(t, addr, stateless, nil, issuers...)
}

// startOAuthToolfoldWith is startOAuthToolfold with more keys in
// http.auth.oauth.
func startOAuthToolfoldWith(t *testing.T, addr string, stateless bool, more map[string]any, issuers ...string) string {
	t.Helper()
	argsFor := func(addr string) []string { return oauthToolfoldArgs(t, addr, stateless, more, issuers) }
	if addr == "" {
		return startHTTPNaming(t, argsFor)
	}
	return startHTTPAt(t, addr, argsFor(addr)...)
}

// oauthToolfoldArgs writes the config of startOAuthToolfoldWith for addr.
func oauthToolfoldArgs(t *testing.T, addr string, stateless bool, more map[string]any, issuers []string) []string {
	t.Helper()
	cfg := map[string]any{
		"mcpServers": map[string]any{"everything": map[string]any{"command": nodeServer(t, "mcp-server-everything")}},
		"commands": map[string]any{
			"echo": map[string]any{"command": "echo", "description": "Print words", "actions": map[string]any{
				"say": map[string]any{"params": map[string]any{"words": map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "positional": true}}, "readOnly": true}}},
			"printf": map[string]any{"command": "printf", "description": "Format text", "actions": map[string]any{
				"format": map[string]any{"params": map[string]any{"text": map[string]any{"type": "string", "positional": true}}, "readOnly": true}}},
		},
		"groups": map[string]any{
			"fmt": map[string]any{"description": "Formatting, as one tool", "tools": []string{"printf__*"}, "exposition": "grouped"},
		},
		"http": map[string]any{"auth": map[string]any{"oauth": map[string]any{
			"resource": "http://" + addr + "/mcp",
			"issuers":  issuers,
			"scopes":   []string{"tools:read"},
			"rules": []map[string]any{
				// alice and bob may use the operator's routes, which then
				// show only what each reaches.
				{"group": "docs", "groups": []string{"echo"}, "admin": true},
				{"group": "code", "groups": []string{"printf", "fmt", "everything"}, "admin": true},
				{"group": "admins", "groups": []string{"*"}, "admin": true},
			},
		}}},
	}
	oauthCfg := cfg["http"].(map[string]any)["auth"].(map[string]any)["oauth"].(map[string]any)
	for k, v := range more {
		oauthCfg[k] = v
	}
	args := []string{"--config", writeConfig(t, cfg), "--mode", "auto"}
	if stateless {
		args = append(args, "--stateless")
	}
	return args
}

// connectAs opens an MCP session with a bearer token; name picks the mode
// (claude-code: groups, anything else: search).
func connectAs(ctx context.Context, endpoint, token, name, protocol string) (*mcp.ClientSession, error) {
	transport := &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}
	var opts *mcp.ClientSessionOptions
	if protocol != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: protocol}
	}
	return mcp.NewClient(&mcp.Implementation{Name: name, Version: "1.0.0"}, nil).Connect(ctx, transport, opts)
}

// callText calls a tool; ok is false on a protocol error or isError, and
// text is then the error's.
func callText(ctx context.Context, cs *mcp.ClientSession, name string, args any) (ok bool, text string) {
	text, err := toolText(ctx, cs, name, args, nil)
	if err != nil {
		return false, err.Error()
	}
	return true, text
}

// rawRequest sends one request with an Authorization header (if token is
// not empty) and returns the status and the WWW-Authenticate header.
func rawRequest(t *testing.T, method, target, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, res.Header.Get("WWW-Authenticate")
}

// waitExpired waits until toolfold answers a request with token by a 401
// that says it expired. Each round trip is the pause between tries.
func waitExpired(t *testing.T, target, token string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		status, body := get(t, target, map[string]string{"Authorization": "Bearer " + token})
		if status == http.StatusUnauthorized && strings.Contains(body, "expired") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the brief token was still accepted a minute after it was issued (%d %s)", status, body)
		}
		<-time.After(100 * time.Millisecond)
	}
}

// TestOAuthNegativeMatrix drives toolfold with tokens from a real OpenID
// provider through every path a caller has, with every kind of bad token,
// and with a valid token for a caller who may not reach a group; it counts
// the attempts that succeeded where they must not. That count must be 0.
func TestOAuthNegativeMatrix(t *testing.T) {
	ctx := context.Background()
	keys := t.TempDir()
	addr := freeAddr(t)
	resource := "http://" + addr + "/mcp"

	// A token signed by a key the provider then drops: the provider is
	// restarted on the same port and issuer with a new key, so its JWKS no
	// longer has the old one.
	first := startOIDC(t, "0", filepath.Join(keys, "old.jwk"))
	oldKeyToken := first.token(t, "admin", resource)
	first.stop()
	idp := startOIDC(t, first.port, filepath.Join(keys, "new.jwk"))
	// Another provider, not configured in toolfold: a wrong issuer.
	stranger := startOIDC(t, "0", filepath.Join(keys, "stranger.jwk"))

	base := startOAuthToolfold(t, addr, false, idp.issuer)
	// The SDK serves 2026-07-28 from a stateless endpoint: a second
	// toolfold, its own resource, for the 2026-07-28 leg.
	base2 := startOAuthToolfold(t, "", true, idp.issuer)
	resource2 := base2 + "/mcp"

	// A client discovers where to get a token from the 401 alone.
	status, challenge := rawRequest(t, "POST", base+"/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	challenges, err := oauthex.ParseWWWAuthenticate([]string{challenge})
	if status != 401 || err != nil || len(challenges) != 1 || challenges[0].Params["resource_metadata"] == "" {
		t.Fatalf("no token: %d %q %v, want 401 with resource_metadata", status, challenge, err)
	}
	var prm oauthex.ProtectedResourceMetadata
	getJSON(t, challenges[0].Params["resource_metadata"], &prm)
	if prm.Resource != resource || !slices.Equal(prm.AuthorizationServers, []string{idp.issuer}) {
		t.Fatalf("resource metadata %+v, want resource %s and the provider %s", prm, resource, idp.issuer)
	}

	admin := idp.token(t, "admin", resource)
	bob := idp.token(t, "bob", resource)
	alice := idp.token(t, "alice", resource)
	brief := idp.token(t, "brief", resource)
	bad := []struct{ name, token, why string }{
		{"no token", "", "requires an OAuth access token"},
		{"wrong audience", idp.token(t, "admin", "http://127.0.0.1:1/other-mcp"), "audience"},
		{"wrong issuer", stranger.token(t, "admin", resource), "not one of http.auth.oauth.issuers"},
		{"key the JWKS no longer has", oldKeyToken, "does not publish"},
		{"not a token", "garbage", "not a JWT"},
	}

	// What the admin sees is what the others must not reach.
	adminCS, err := connectAs(ctx, base+"/mcp", admin, "claude-code", "")
	if err != nil {
		t.Fatal(err)
	}
	defer adminCS.Close()
	prompts, err := adminCS.ListPrompts(ctx, nil)
	if err != nil || len(prompts.Prompts) == 0 {
		t.Fatalf("admin lists no prompts (%v): the everything server's must be there", err)
	}
	resources, err := adminCS.ListResources(ctx, nil)
	if err != nil || len(resources.Resources) == 0 {
		t.Fatalf("admin lists no resources (%v)", err)
	}
	prompt, uri := prompts.Prompts[0].Name, resources.Resources[0].URI

	// The brief token expires a second after it was issued. Wait for
	// toolfold itself to refuse it as expired, not for a guessed moment.
	waitExpired(t, base+"/healthz", brief)
	bad = append(bad, struct{ name, token, why string }{"expired", brief, "expired at"})

	attempts, unauthorized := 0, 0
	fail := func(format string, args ...any) {
		unauthorized++
		t.Errorf("UNAUTHORIZED SUCCESS: "+format, args...)
	}

	// Bad tokens: every route and every MCP method must be a 401 with
	// resource_metadata, before anything else looks at the request.
	methods := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"printf__format","arguments":{"text":"x"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"printf__format","arguments":{"text":"x"}}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fmt","arguments":{"action":"printf__format","text":"x"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"find_tools","arguments":{"query":"format"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"describe_tools","arguments":{"names":["printf__format"]}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"prompts/list"}`,
		fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":%q}}`, prompt),
		`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`,
		fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":%q}}`, uri),
		`{"jsonrpc":"2.0","id":1,"method":"groups/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"groups/get","params":{"name":"printf"}}`,
	}
	for _, b := range bad {
		// Refused for the reason the row names, said in the body.
		header := map[string]string{}
		if b.token != "" {
			header["Authorization"] = "Bearer " + b.token
		}
		if status, body := get(t, base+"/api/tools", header); status != 401 || !strings.Contains(body, b.why) {
			t.Errorf("%s: %d %s, want 401 saying %q", b.name, status, body, b.why)
		}
		for _, target := range []string{base + "/mcp", base + "/mcp/printf", base + "/mcp/echo", base2 + "/mcp"} {
			for _, m := range methods {
				attempts++
				if status, challenge := rawRequest(t, "POST", target, b.token, m); status != 401 || !strings.Contains(challenge, "resource_metadata=") {
					fail("%s: POST %s %s = %d %q", b.name, target, m, status, challenge)
				}
			}
		}
		for _, path := range []string{"/api/tools", "/api/groups", "/api/tools?group=printf", "/healthz", "/", "/metrics"} {
			attempts++
			if status, _ := rawRequest(t, "GET", base+path, b.token, ""); status != 401 {
				fail("%s: GET %s = %d", b.name, path, status)
			}
		}
		attempts++
		if cs, err := connectAs(ctx, base+"/mcp", b.token, "e2e", ""); err == nil {
			cs.Close()
			fail("%s: an MCP client connected", b.name)
		}
	}

	// alice may reach echo only. Every path to printf, fmt and the
	// everything server must fail, in the groups mode (claude-code) and in
	// the search mode, for a 2025-11-25 session and a 2026-07-28 client.
	reachFor := func(token, token2 string) []func() (string, bool) {
		var out []func() (string, bool)
		for _, c := range []struct{ name, protocol, base, token string }{
			{"claude-code", "", base, token}, {"e2e", "", base, token}, {"e2e", "2026-07-28", base2, token2},
		} {
			cs, err := connectAs(ctx, c.base+"/mcp", c.token, c.name, c.protocol)
			if err != nil {
				t.Fatalf("%s %s: %v", c.name, c.protocol, err)
			}
			if c.protocol == "2026-07-28" && cs.ID() != "" {
				t.Fatalf("the 2026-07-28 client got a session: it fell back to 2025-11-25")
			}
			t.Cleanup(func() { cs.Close() })
			who := c.name + " " + c.protocol
			call := func(label, tool string, args any) func() (string, bool) {
				return func() (string, bool) {
					ok, text := callText(ctx, cs, tool, args)
					return who + " " + label + ": " + text, ok
				}
			}
			// The paths a client has depend on its mode, which toolfold
			// picks from its name and protocol: try every path its list
			// offers (the same for alice and bob, whose clients match).
			initial := strings.Split(toolNames(t, cs), ",")
			has := func(tool string) bool { return slices.Contains(initial, tool) }
			if has("enable_tools") {
				// The groups mode: enabling comes first, then the list and
				// the tools it would show.
				out = append(out, func() (string, bool) {
					ok, text := callText(ctx, cs, "enable_tools", map[string]any{"groups": []string{"printf", "fmt", "everything"}})
					return who + " enable_tools: " + text, ok && strings.Contains(text, `"printf"`)
				})
			}
			if !has("describe_tools") {
				// The search mode lists no catalog tool; the others do.
				out = append(out, func() (string, bool) {
					names := toolNames(t, cs)
					return who + " tools/list: " + names, strings.Contains(names, "printf") || strings.Contains(names, "fmt") || strings.Contains(names, "everything")
				})
			}
			out = append(out,
				call("direct call", "printf__format", map[string]any{"text": "x"}),
				call("direct call of everything", "everything__echo", map[string]any{"message": "x"}),
			)
			if has("enable_tools") {
				// fmt, once enabled, is one grouped tool with an action.
				out = append(out, call("grouped action", "fmt", map[string]any{"action": "format", "text": "x"}))
			}
			if has("call_tool") {
				out = append(out, call("call_tool", "call_tool", map[string]any{"name": "printf__format", "arguments": map[string]any{"text": "x"}}))
				if !has("describe_tools") {
					out = append(out, call("grouped action through call_tool", "call_tool", map[string]any{"name": "fmt", "arguments": map[string]any{"action": "format", "text": "x"}}))
				}
			}
			if has("find_tools") {
				out = append(out, func() (string, bool) {
					_, text := callText(ctx, cs, "find_tools", map[string]any{"query": "format text printf", "limit": 20})
					return who + " find_tools: " + text, strings.Contains(text, "printf__") || strings.Contains(text, "everything__")
				})
			}
			if has("describe_tools") {
				out = append(out, func() (string, bool) {
					_, text := callText(ctx, cs, "describe_tools", map[string]any{"names": []string{"printf__format", "everything__echo"}})
					return who + " describe_tools: " + text, strings.Contains(text, "Input schema")
				})
			}
			if has("guidance") {
				out = append(out, func() (string, bool) {
					_, text := callText(ctx, cs, "guidance", map[string]any{"topic": "printf"})
					return who + " guidance: " + text, strings.Contains(text, "printf__format")
				})
			}
			out = append(out,
				func() (string, bool) {
					res, err := cs.ListPrompts(ctx, nil)
					return fmt.Sprintf("%s prompts/list: %v", who, err), err == nil && len(res.Prompts) > 0
				},
				func() (string, bool) {
					_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: prompt})
					return fmt.Sprintf("%s prompts/get: %v", who, err), err == nil
				},
				func() (string, bool) {
					res, err := cs.ListResources(ctx, nil)
					return fmt.Sprintf("%s resources/list: %v", who, err), err == nil && len(res.Resources) > 0
				},
				func() (string, bool) {
					_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
					return fmt.Sprintf("%s resources/read: %v", who, err), err == nil
				},
			)
		}
		// A client of the grouping extension (2026-07-28): groups/list and
		// the membership in its lists show only the groups the caller
		// reaches.
		ext := mcp.NewClient(&mcp.Implementation{Name: "e2e-ext", Version: "1.0.0"}, &mcp.ClientOptions{
			Capabilities: &mcp.ClientCapabilities{Extensions: map[string]any{groupsext.ID: map[string]any{}}},
		})
		if err := mcp.AddSendingCustomMethod[*groupsext.ListParams, *groupsext.ListResult](ext, groupsext.MethodList); err != nil {
			t.Fatal(err)
		}
		ecs, err := ext.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
		if err != nil {
			t.Fatalf("grouping extension client: %v", err)
		}
		t.Cleanup(func() { ecs.Close() })
		out = append(out,
			func() (string, bool) {
				res, err := mcp.CallCustomMethod[*groupsext.ListParams, *groupsext.ListResult](ctx, ecs, groupsext.MethodList, &groupsext.ListParams{})
				if err != nil {
					return fmt.Sprintf("groups/list: %v", err), false
				}
				var names []string
				for _, g := range res.Groups {
					names = append(names, g.Name)
				}
				return fmt.Sprintf("groups/list: %v", names), slices.Contains(names, "printf") || slices.Contains(names, "everything")
			},
			func() (string, bool) {
				res, err := ecs.ListTools(ctx, nil)
				if err != nil {
					return fmt.Sprintf("tools/list (grouping): %v", err), false
				}
				return "tools/list (grouping): a tool of printf", slices.ContainsFunc(res.Tools, func(t *mcp.Tool) bool {
					return slices.Contains(groupsext.MetaGroups(t.Meta), "printf")
				})
			},
			func() (string, bool) {
				// The everything server's prompts belong to its group.
				res, err := ecs.ListPrompts(ctx, nil)
				if err != nil {
					return fmt.Sprintf("prompts/list (grouping): %v", err), false
				}
				return "prompts/list (grouping): a prompt of everything", slices.ContainsFunc(res.Prompts, func(p *mcp.Prompt) bool {
					return slices.Contains(groupsext.MetaGroups(p.Meta), "everything")
				})
			},
		)
		http := func(label, method, path, body string, allowed func(int) bool) func() (string, bool) {
			return func() (string, bool) {
				status, _ := rawRequest(t, method, base+path, token, body)
				return fmt.Sprintf("%s %s = %d", label, path, status), allowed(status)
			}
		}
		ok2xx := func(s int) bool { return s/100 == 2 }
		initialize := methods[0]
		out = append(out,
			http("/mcp/<group>", "POST", "/mcp/printf", initialize, ok2xx),
			http("/mcp/<group>", "POST", "/mcp/fmt", initialize, ok2xx),
			http("/mcp/<group>", "POST", "/mcp/everything", initialize, ok2xx),
			http("/api", "GET", "/api/tools?group=printf", "", ok2xx),
			func() (string, bool) {
				_, body := get(t, base+"/api/tools", map[string]string{"Authorization": "Bearer " + token})
				return "/api/tools lists " + body, strings.Contains(body, "printf__") || strings.Contains(body, "everything__")
			},
			func() (string, bool) {
				_, body := get(t, base+"/api/groups", map[string]string{"Authorization": "Bearer " + token})
				return "/api/groups lists " + body, strings.Contains(body, `"printf"`) || strings.Contains(body, `"everything"`)
			},
			func() (string, bool) {
				_, body := get(t, base+"/healthz", map[string]string{"Authorization": "Bearer " + token})
				return "/healthz lists " + body, strings.Contains(body, `"everything"`) || strings.Contains(body, `"printf"`)
			},
			func() (string, bool) {
				_, body := get(t, base+"/", map[string]string{"Authorization": "Bearer " + token})
				return "the dashboard shows printf", strings.Contains(body, "printf") || strings.Contains(body, "everything")
			},
		)
		return out
	}
	aliceAttempts := reachFor(alice, idp.token(t, "alice", resource2))
	for _, a := range aliceAttempts {
		attempts++
		if what, ok := a(); ok {
			fail("alice: %s", what)
		}
	}
	// /metrics covers every source: a limited caller gets none of it.
	attempts++
	if status, _ := rawRequest(t, "GET", base+"/metrics", alice, ""); status/100 == 2 {
		fail("alice: GET /metrics = %d", status)
	}
	if status, _ := rawRequest(t, "GET", base+"/metrics", admin, ""); status != 200 {
		t.Errorf("admin: GET /metrics = %d, want 200", status)
	}
	// Every attempt alice made succeeds for bob, who may reach printf, fmt
	// and everything: so each one would see a hole if there were one.
	succeeded := 0
	for _, a := range reachFor(bob, idp.token(t, "bob", resource2)) {
		if what, ok := a(); ok {
			succeeded++
		} else {
			t.Errorf("bob, who may reach it, failed: %s", what)
		}
	}
	t.Logf("negative matrix: %d attempts, %d unauthorized successes; alice's %d reach attempts made as bob, who may: %d succeeded",
		attempts, unauthorized, len(aliceAttempts), succeeded)
	// alice does reach echo.
	cs, err := connectAs(ctx, base+"/mcp", alice, "e2e", "")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if ok, text := callText(ctx, cs, "call_tool", map[string]any{"name": "echo__say", "arguments": map[string]any{"words": []string{"hi"}}}); !ok || !strings.Contains(text, "hi") {
		t.Errorf("alice cannot call echo__say: %s", text)
	}
}

// getJSON reads a JSON document.
func getJSON(t *testing.T, target string, v any) {
	t.Helper()
	res, err := http.Get(target)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("GET %s = %s", target, res.Status)
	}
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
}

// TestOAuthIntrospection: an opaque token from the real provider is
// checked at its introspection endpoint (found in its metadata), with
// toolfold's own client credentials from the environment; its claims give
// the reach as a JWT's would.
func TestOAuthIntrospection(t *testing.T) {
	t.Setenv("TOOLFOLD_E2E_INTROSPECTION_SECRET", "toolfold-secret")
	idp := startOIDC(t, "0", filepath.Join(t.TempDir(), "key.jwk"))
	base := startOAuthToolfoldWith(t, "", false, map[string]any{"introspection": map[string]any{
		"clientId": "toolfold", "clientSecret": "${TOOLFOLD_E2E_INTROSPECTION_SECRET}",
	}}, idp.issuer)
	resource := base + "/mcp"
	carol := idp.token(t, "carol", resource)
	if strings.Count(carol, ".") == 2 {
		t.Fatalf("carol's token is a JWT; the provider must give her opaque ones")
	}
	auth := func(token string) map[string]string { return map[string]string{"Authorization": "Bearer " + token} }
	status, body := get(t, base+"/api/groups", auth(carol))
	if status != 200 || !strings.Contains(body, `"printf"`) || strings.Contains(body, `"echo"`) {
		t.Errorf("carol (code) with an opaque token: %d %s, want printf's groups and not echo", status, body)
	}
	cs, err := connectAs(context.Background(), base+"/mcp", carol, "e2e", "")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if ok, text := callText(context.Background(), cs, "call_tool", map[string]any{"name": "printf__format", "arguments": map[string]any{"text": "opaque"}}); !ok || !strings.Contains(text, "opaque") {
		t.Errorf("carol's call: %s", text)
	}
	for _, c := range []struct{ name, token, why string }{
		{"unknown opaque token", "made-up-opaque-token-value", "not active"},
		{"opaque token for another resource", idp.token(t, "carol", "http://127.0.0.1:1/other-mcp"), "audience"},
	} {
		if status, body := get(t, base+"/api/groups", auth(c.token)); status != 401 || !strings.Contains(body, c.why) {
			t.Errorf("%s: %d %s, want 401 saying %q", c.name, status, body, c.why)
		}
	}
}
