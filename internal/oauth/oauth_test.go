package oauth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/oauth/oauthtest"
)

const resource = "https://tools.example.com/mcp"

func newServer(t testing.TB, p *oauthtest.IdP, edit func(*config.OAuthConfig)) *Server {
	t.Helper()
	return newServerWith(t, p, edit, nil)
}

func newServerWith(t testing.TB, p *oauthtest.IdP, edit func(*config.OAuthConfig), opts *Options) *Server {
	t.Helper()
	cfg := &config.OAuthConfig{
		Resource: resource,
		Issuers:  []string{p.URL},
		Rules: []config.OAuthRule{
			{Group: "docs-team", Groups: []string{"docs"}},
			{Group: "admins", Groups: []string{"*"}},
			{Scope: "tools:read", Group: "code-team", Groups: []string{"code"}, ReadOnly: true},
		},
		Introspection: &config.IntrospectionConfig{ClientID: "toolfold", ClientSecret: "s3cret"},
	}
	if edit != nil {
		edit(cfg)
	}
	s, err := New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestVerify(t *testing.T) {
	p := oauthtest.New(t)
	s := newServer(t, p, nil)
	k1 := p.Key("k1")
	stranger, _ := rsa.GenerateKey(rand.Reader, 2048)
	cases := []struct {
		name   string
		token  string
		status int    // 0: accepted
		want   string // in the message, or the reach when accepted
	}{
		{"valid", oauthtest.Mint(t, k1, "k1", claimsOf(p, nil)), 0, "docs"},
		{"no token", "", 401, "requires an OAuth access token"},
		{"expired", oauthtest.Mint(t, k1, "k1", claimsOf(p, map[string]any{"exp": time.Now().Add(-time.Minute).Unix()})), 401, "expired at"},
		{"exp past the year 9999", oauthtest.Mint(t, k1, "k1", claimsOf(p, map[string]any{"exp": 1e20})), 401, "exp claim (1e+20) is not a time"},
		{"negative nbf", oauthtest.Mint(t, k1, "k1", claimsOf(p, map[string]any{"nbf": -1e20})), 401, "nbf claim (-1e+20) is not a time"},
		{"no exp", oauthtest.Mint(t, k1, "k1", claimsOf(p, map[string]any{"exp": nil})), 401, "exp"},
		{"not yet valid", oauthtest.Mint(t, k1, "k1", claimsOf(p, map[string]any{"nbf": time.Now().Add(time.Hour).Unix()})), 401, "not valid before"},
		{"wrong audience", oauthtest.Mint(t, k1, "k1", claimsOf(p, map[string]any{"aud": "https://other.example.com/mcp"})), 401, "audience"},
		{"no audience", oauthtest.Mint(t, k1, "k1", claimsOf(p, map[string]any{"aud": nil})), 401, "audience"},
		{"wrong issuer", oauthtest.Mint(t, k1, "k1", claimsOf(p, map[string]any{"iss": "https://evil.example.com"})), 401, "not one of http.auth.oauth.issuers"},
		{"forged signature", oauthtest.Mint(t, stranger, "k1", claimsOf(p, nil)), 401, "signature does not verify"},
		{"unknown key", oauthtest.Mint(t, stranger, "k9", claimsOf(p, nil)), 401, "does not publish"},
		{"garbage JWT", "a.b.c", 401, "not a well-formed JWT"},
		{"alg none", jwtNone(claimsOf(p, nil)), 401, "signature does not verify"},
		{"no rule matches", oauthtest.Mint(t, k1, "k1", claimsOf(p, map[string]any{"groups": []string{"sales"}})), 403, "no rule"},
		{"admin", oauthtest.Mint(t, k1, "k1", claimsOf(p, map[string]any{"groups": "admins"})), 0, "*"},
		{"scope and group", oauthtest.Mint(t, k1, "k1", claimsOf(p, map[string]any{"groups": []string{"code-team", "docs-team"}})), 0, "code,docs ro"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			caller, err := s.Verify(context.Background(), c.token)
			if c.status == 0 {
				if err != nil {
					t.Fatalf("refused a good token: %v", err)
				}
				if got := reachString(caller.Reach); got != c.want {
					t.Errorf("reach = %q, want %q", got, c.want)
				}
				if caller.Subject != "alice" {
					t.Errorf("subject = %q", caller.Subject)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("accepted or not an *Error: caller %+v, err %v", caller, err)
			}
			if e.Status != c.status || !strings.Contains(e.Message, c.want) {
				t.Errorf("got %d %q, want %d containing %q", e.Status, e.Message, c.status, c.want)
			}
			if c.token != "" && strings.Contains(e.Message, c.token) {
				t.Error("the message repeats the token")
			}
		})
	}
}

func claimsOf(p *oauthtest.IdP, over map[string]any) jwt.MapClaims { return p.Claims(resource, over) }

func jwtNone(c jwt.MapClaims) string {
	s, _ := jwt.NewWithClaims(jwt.SigningMethodNone, c).SignedString(jwt.UnsafeAllowNoneSignatureType)
	return s
}

func reachString(r Reach) string {
	if r.All {
		return "*"
	}
	s := strings.Join(r.Groups, ",")
	if r.ReadOnly {
		s += " ro"
	}
	return s
}

// TestKeyRotation: a new key is picked up on the first token that names it;
// a dropped key stops working once the set is fetched again; forged key
// IDs do not make toolfold fetch the set on every request.
func TestKeyRotation(t *testing.T) {
	p := oauthtest.New(t)
	s := newServer(t, p, nil)
	old := p.Key("k1")
	oldToken := oauthtest.Mint(t, old, "k1", claimsOf(p, nil))
	if _, err := s.Verify(context.Background(), oldToken); err != nil {
		t.Fatal(err)
	}
	hits := p.JWKSFetches.Load()

	// The provider rotates: k2 in, k1 out.
	k2 := p.AddKey(t, "k2")
	p.DropKey("k1")
	if _, err := s.Verify(context.Background(), oauthtest.Mint(t, k2, "k2", claimsOf(p, nil))); err != nil {
		t.Fatalf("a token signed by the new key was refused: %v", err)
	}
	if p.JWKSFetches.Load() != hits+1 {
		t.Errorf("JWKS fetched %d times for the new key, want once", p.JWKSFetches.Load()-hits)
	}
	// The set no longer has k1.
	_, err := s.Verify(context.Background(), oldToken)
	var e *Error
	if !errors.As(err, &e) || e.Status != 401 || !strings.Contains(e.Message, "does not publish") {
		t.Fatalf("a token of a dropped key: %v", err)
	}
	// Many unknown key IDs: the rate limit allows no further fetch.
	before := p.JWKSFetches.Load()
	for i := range 20 {
		stranger, _ := rsa.GenerateKey(rand.Reader, 1024)
		if _, err := s.Verify(context.Background(), oauthtest.Mint(t, stranger, "forged"+string(rune('a'+i)), claimsOf(p, nil))); err == nil {
			t.Fatal("accepted a forged key")
		}
	}
	if got := p.JWKSFetches.Load() - before; got > 1 {
		t.Errorf("20 forged key IDs fetched the JWKS %d times; the rate limit allows at most 1", got)
	}
}

func TestIntrospection(t *testing.T) {
	p := oauthtest.New(t)
	p.Introspect = func(token string) map[string]any {
		switch token {
		case "opaque-good":
			return map[string]any{"active": true, "sub": "bob", "aud": resource, "iss": p.URL, "scope": "tools:read", "groups": []string{"docs-team"}, "exp": float64(time.Now().Add(time.Hour).Unix())}
		case "opaque-no-aud":
			return map[string]any{"active": true, "client_id": "bob", "groups": []string{"docs-team"}}
		case "opaque-other-aud":
			return map[string]any{"active": true, "sub": "bob", "aud": "https://elsewhere.example.com", "groups": []string{"docs-team"}}
		}
		return map[string]any{"active": false}
	}
	s := newServer(t, p, nil)
	c, err := s.Verify(context.Background(), "opaque-good")
	if err != nil || c.Subject != "bob" || reachString(c.Reach) != "docs" {
		t.Fatalf("good opaque token: %+v %v", c, err)
	}
	for _, tok := range []string{"opaque-revoked", "opaque-other-aud", "opaque-no-aud"} {
		if _, err := s.Verify(context.Background(), tok); err == nil {
			t.Errorf("%s was accepted", tok)
		}
	}
	noIntro := newServer(t, p, func(c *config.OAuthConfig) { c.Introspection = nil })
	if _, err := noIntro.Verify(context.Background(), "opaque-good"); err == nil || !strings.Contains(err.Error(), "not a JWT") {
		t.Errorf("without introspection an opaque token gave %v", err)
	}
}

func TestIssuerDown(t *testing.T) {
	p := oauthtest.New(t)
	s := newServer(t, p, nil)
	tok := oauthtest.Mint(t, p.Key("k1"), "k1", claimsOf(p, nil))
	p.Close()
	_, err := s.Verify(context.Background(), tok)
	var e *Error
	if !errors.As(err, &e) || e.Status != http.StatusServiceUnavailable {
		t.Fatalf("with the issuer down: %v", err)
	}
}

func TestMetadata(t *testing.T) {
	p := oauthtest.New(t)
	s := newServer(t, p, func(c *config.OAuthConfig) { c.Scopes = []string{"tools:read"} })
	if s.MetadataURL() != "https://tools.example.com/.well-known/oauth-protected-resource/mcp" {
		t.Errorf("metadata URL %q", s.MetadataURL())
	}
	rec := httptest.NewRecorder()
	s.MetadataHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/.well-known/oauth-protected-resource/mcp", nil))
	var got map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got["resource"] != resource || !slices.Equal(stringList(got["authorization_servers"]), []string{p.URL}) {
		t.Errorf("metadata %v", got)
	}
	if c := s.Challenge("invalid_token"); c != `Bearer resource_metadata="https://tools.example.com/.well-known/oauth-protected-resource/mcp", scope="tools:read", error="invalid_token"` {
		t.Errorf("challenge %s", c)
	}
}

func TestGrant(t *testing.T) {
	rules := []config.OAuthRule{
		{Group: "eng", Groups: []string{"code", "docs"}},
		{Scope: "tools:read", Groups: []string{"docs"}, ReadOnly: true},
		{Sub: "root", Groups: []string{"*"}},
		{Group: "eng", Sub: "carol", Groups: []string{"ops"}},
	}
	cases := []struct {
		caller Caller
		want   string
	}{
		{Caller{Subject: "x"}, ""},
		{Caller{Subject: "x", Groups: []string{"eng"}}, "code,docs"},
		{Caller{Subject: "x", Groups: []string{"eng"}, Scopes: []string{"tools:read"}}, "code,docs ro"},
		{Caller{Subject: "root"}, "*"},
		{Caller{Subject: "carol", Groups: []string{"eng"}}, "code,docs,ops"},
		{Caller{Subject: "carol"}, ""},
	}
	for _, c := range cases {
		if got := reachString(Grant(rules, &c.caller)); got != c.want {
			t.Errorf("%+v: reach %q, want %q", c.caller, got, c.want)
		}
	}
}

// FuzzVerify: no input panics, and none is accepted without a valid
// signature.
func FuzzVerify(f *testing.F) {
	p := oauthtest.New(f)
	s := newServer(f, p, func(c *config.OAuthConfig) { c.Introspection = nil })
	good := oauthtest.Mint(f, p.Key("k1"), "k1", claimsOf(p, nil))
	for _, seed := range []string{"", "a.b.c", "..", good, good[:len(good)-3], jwtNone(claimsOf(p, nil)), "eyJhbGciOiJIUzI1NiJ9.e30.x"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, token string) {
		c, err := s.Verify(context.Background(), token)
		if err == nil && token != good {
			t.Fatalf("accepted %q as %+v", token, c)
		}
	})
}

// BenchmarkVerify is the latency JWT validation adds to a request once the
// keys are cached: parse, RS256 signature, claims, rules.
func BenchmarkVerify(b *testing.B) {
	p := oauthtest.New(b)
	s := newServer(b, p, nil)
	tok := oauthtest.Mint(b, p.Key("k1"), "k1", claimsOf(p, nil))
	if _, err := s.Verify(context.Background(), tok); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Verify(context.Background(), tok); err != nil {
			b.Fatal(err)
		}
	}
}
