package httpapi

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/oauth"
	"github.com/toolfold/toolfold/internal/oauth/oauthtest"
)

const oauthResource = "http://127.0.0.1:8080/mcp"

// withOAuth accepts tokens of the fake IdP besides the static ones:
// docs-team reaches docs, admins everything.
func withOAuth(t testing.TB, p *oauthtest.IdP) func(*Options) {
	return func(o *Options) {
		withTokens(o)
		s, err := oauth.New(&config.OAuthConfig{
			Resource: oauthResource,
			Issuers:  []string{p.URL},
			Rules: []config.OAuthRule{
				{Group: "docs-team", Groups: []string{"docs"}, Admin: true},
				{Group: "admins", Groups: []string{"*"}, Admin: true},
				{Group: "viewers", Groups: []string{"docs"}},
			},
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		o.OAuth = s
		o.Metrics = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("metrics")) })
	}
}

func TestOAuthRefusals(t *testing.T) {
	p := oauthtest.New(t)
	f := newFixture(t, withOAuth(t, p))
	const metadata = `resource_metadata="http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"`
	cases := []struct {
		name      string
		token     string
		status    int
		challenge string
		message   string
	}{
		{"no token", "", 401, `Bearer ` + metadata, "requires an OAuth access token"},
		{"expired", p.Token(t, oauthResource, map[string]any{"exp": time.Now().Add(-time.Hour).Unix()}), 401, metadata + `, error="invalid_token"`, "expired"},
		{"wrong audience", p.Token(t, "https://elsewhere.example.com/mcp", nil), 401, `error="invalid_token"`, "audience"},
		{"wrong issuer", p.Token(t, oauthResource, map[string]any{"iss": "https://evil.example.com"}), 401, `error="invalid_token"`, "issuers"},
		{"unknown static token", "not-a-token-we-know", 401, `error="invalid_token"`, "not a JWT"},
		{"no rule", p.Token(t, oauthResource, map[string]any{"groups": "sales"}), 403, `error="insufficient_scope"`, "no rule"},
	}
	for _, c := range cases {
		for _, path := range []string{"/mcp", "/mcp/docs", "/api/tools", "/api/groups", "/healthz", "/", "/metrics"} {
			h := http.Header{}
			if c.token != "" {
				h.Set("Authorization", "Bearer "+c.token)
			}
			w := f.do(t, "POST", path, h)
			if w.Code != c.status || !strings.Contains(w.Header().Get("WWW-Authenticate"), c.challenge) || !strings.Contains(w.Body.String(), c.message) {
				t.Errorf("%s on %s: %d %q %s", c.name, path, w.Code, w.Header().Get("WWW-Authenticate"), w.Body)
			}
			if !strings.Contains(w.Header().Get("WWW-Authenticate"), metadata) {
				t.Errorf("%s on %s: the challenge lacks resource_metadata", c.name, path)
			}
			if c.token != "" && (strings.Contains(w.Body.String(), c.token) || strings.Contains(f.logs.String(), c.token)) {
				t.Fatalf("%s: the token was echoed or logged", c.name)
			}
		}
	}
}

// TestOAuthIntrospectionRateLimit: past the introspection rate, a token
// that is not a JWT gets 503 with Retry-After, and no challenge (the token
// may be good).
func TestOAuthIntrospectionRateLimit(t *testing.T) {
	p := oauthtest.New(t)
	p.Introspect = func(string) map[string]any { return map[string]any{"active": false} }
	now := time.Now()
	s, err := oauth.New(&config.OAuthConfig{
		Resource:      oauthResource,
		Issuers:       []string{p.URL},
		Rules:         []config.OAuthRule{{Group: "docs-team", Groups: []string{"docs"}}},
		Introspection: &config.IntrospectionConfig{ClientID: "toolfold", ClientSecret: "s3cret"},
	}, &oauth.Options{Now: func() time.Time { return now }, Introspection: oauth.IntrospectionLimits{PerSecond: 0.01, Burst: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	f := newFixture(t, func(o *Options) { o.OAuth = s })
	cases := []struct {
		token      string
		status     int
		retryAfter string
	}{
		{"junk-1", 401, ""},
		{"junk-2", 503, "100"}, // one request per 100 s, and it is spent
		{"junk-1", 401, ""},    // refused before: not asked again
	}
	for _, c := range cases {
		w := f.do(t, "POST", "/mcp", http.Header{"Authorization": {"Bearer " + c.token}})
		if w.Code != c.status || w.Header().Get("Retry-After") != c.retryAfter {
			t.Errorf("%s: %d Retry-After %q, want %d %q: %s", c.token, w.Code, w.Header().Get("Retry-After"), c.status, c.retryAfter, w.Body)
		}
		if c.status == 503 && w.Header().Get("WWW-Authenticate") != "" {
			t.Errorf("%s: a 503 with a challenge", c.token)
		}
	}
}

func TestOAuthCallerSeesItsReach(t *testing.T) {
	p := oauthtest.New(t)
	var seen []Access
	f := newFixture(t, func(o *Options) {
		withOAuth(t, p)(o)
		o.MCP = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			a, _ := AccessFromContext(r.Context())
			seen = append(seen, a)
		})
	})
	docs := http.Header{"Authorization": {"Bearer " + p.Token(t, oauthResource, nil)}}
	admin := http.Header{"Authorization": {"Bearer " + p.Token(t, oauthResource, map[string]any{"sub": "root", "groups": []string{"admins"}})}}

	if got := names(decode[GroupTree](t, f.do(t, "GET", "/api/groups", docs)).Groups, groupName); strings.Join(got, ",") != "docs" {
		t.Errorf("alice's groups = %v, want docs alone", got)
	}
	if w := f.do(t, "POST", "/mcp/code", docs); w.Code != 404 {
		t.Errorf("alice on /mcp/code = %d, want 404", w.Code)
	}
	if w := f.do(t, "POST", "/mcp/docs", docs); w.Code != 200 {
		t.Errorf("alice on /mcp/docs = %d %s", w.Code, w.Body)
	}
	if w := f.do(t, "GET", "/metrics", docs); w.Code != 403 {
		t.Errorf("alice on /metrics = %d, want 403: metrics cover every source", w.Code)
	}
	if w := f.do(t, "GET", "/metrics", admin); w.Code != 200 {
		t.Errorf("an admin on /metrics = %d %s", w.Code, w.Body)
	}
	if got := len(decode[GroupTree](t, f.do(t, "GET", "/api/groups", admin)).Groups); got != 4 {
		t.Errorf("an admin sees %d groups, want 4", got)
	}
	// A caller no admin rule matches uses /mcp, not the operator's routes.
	viewer := http.Header{"Authorization": {"Bearer " + p.Token(t, oauthResource, map[string]any{"sub": "vic", "groups": "viewers"})}}
	for _, path := range []string{"/api/groups", "/api/tools", "/", "/metrics"} {
		if w := f.do(t, "GET", path, viewer); w.Code != 403 || !strings.Contains(w.Body.String(), `"admin\": true must match \"vic\"`) {
			t.Errorf("a viewer on %s = %d %s, want 403 naming the admin rule", path, w.Code, w.Body)
		}
	}
	// Static tokens still work beside OAuth.
	if w := f.do(t, "GET", "/api/groups", http.Header{"Authorization": {"Bearer " + fullToken}}); w.Code != 200 {
		t.Errorf("a static token with OAuth on = %d %s", w.Code, w.Body)
	}
	f.do(t, "POST", "/mcp", docs)
	f.do(t, "POST", "/mcp", admin)
	if len(seen) != 2 || seen[0].Subject != "alice" || strings.Join(seen[0].Groups, ",") != "docs" || seen[1].Subject != "root" || seen[1].Limited() {
		t.Errorf("accesses handed to /mcp: %+v", seen)
	}
}

func TestOAuthMetadataIsPublic(t *testing.T) {
	p := oauthtest.New(t)
	f := newFixture(t, withOAuth(t, p))
	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		w := f.do(t, "GET", path, http.Header{"Origin": {"https://app.example.com"}})
		if w.Code != 200 || !strings.Contains(w.Body.String(), `"authorization_servers":["`+p.URL+`"]`) || !strings.Contains(w.Body.String(), `"resource":"`+oauthResource+`"`) {
			t.Errorf("%s = %d %s", path, w.Code, w.Body)
		}
	}
}

// BenchmarkAuthenticatedRequest is one /healthz request with a static token
// and with an OAuth JWT: the difference is what validating the JWT adds to
// every request (keys already fetched).
func BenchmarkAuthenticatedRequest(b *testing.B) {
	p := oauthtest.New(b)
	for _, c := range []struct{ name, token string }{
		{"static", fullToken},
		{"jwt", p.Token(b, oauthResource, map[string]any{"groups": "admins"})},
	} {
		b.Run(c.name, func(b *testing.B) {
			f := newFixture(b, withOAuth(b, p))
			h := http.Header{"Authorization": {"Bearer " + c.token}}
			if w := f.do(b, "GET", "/healthz", h); w.Code != 200 {
				b.Fatalf("%d %s", w.Code, w.Body)
			}
			b.ReportAllocs()
			for b.Loop() {
				f.do(b, "GET", "/healthz", h)
			}
		})
	}
}
