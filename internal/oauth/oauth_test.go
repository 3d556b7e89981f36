package oauth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/toolfold/toolfold/internal/config"
)

const resource = "https://tools.example.com/mcp"

// idp is an in-process authorization server for unit tests: metadata, a
// JWKS whose keys the test replaces, an introspection endpoint, and a
// minting function. The end-to-end tests use a real provider instead.
type idp struct {
	srv       *httptest.Server
	mu        sync.Mutex
	keys      map[string]*rsa.PrivateKey // kid → key, all published
	jwksHits  atomic.Int32
	introspec func(token string) map[string]any
}

func newIdP(t testing.TB) *idp {
	t.Helper()
	p := &idp{keys: map[string]*rsa.PrivateKey{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{
			"issuer":                 p.srv.URL,
			"jwks_uri":               p.srv.URL + "/jwks",
			"token_endpoint":         p.srv.URL + "/token",
			"introspection_endpoint": p.srv.URL + "/introspect",
		})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		p.jwksHits.Add(1)
		p.mu.Lock()
		defer p.mu.Unlock()
		var keys []map[string]string
		for kid, k := range p.keys {
			keys = append(keys, map[string]string{
				"kty": "RSA", "kid": kid, "alg": "RS256", "use": "sig",
				"n": base64.RawURLEncoding.EncodeToString(k.N.Bytes()),
				"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(k.E)).Bytes()),
			})
		}
		json.NewEncoder(w).Encode(map[string]any{"keys": keys})
	})
	mux.HandleFunc("/introspect", func(w http.ResponseWriter, r *http.Request) {
		id, secret, ok := r.BasicAuth()
		if !ok || id != "toolfold" || secret != "s3cret" {
			http.Error(w, "bad client", http.StatusUnauthorized)
			return
		}
		json.NewEncoder(w).Encode(p.introspec(r.FormValue("token")))
	})
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	p.addKey(t, "k1")
	return p
}

func (p *idp) addKey(t testing.TB, kid string) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.keys[kid] = k
	p.mu.Unlock()
	return k
}

func (p *idp) dropKey(kid string) *rsa.PrivateKey {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := p.keys[kid]
	delete(p.keys, kid)
	return k
}

func (p *idp) key(kid string) *rsa.PrivateKey {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.keys[kid]
}

// mint signs claims with key kid; base claims are a valid token for alice.
func mint(t testing.TB, key *rsa.PrivateKey, kid string, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (p *idp) claims(over map[string]any) jwt.MapClaims {
	c := jwt.MapClaims{
		"iss": p.srv.URL, "aud": resource, "sub": "alice",
		"exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix(),
		"scope": "tools:read", "groups": []string{"docs-team"},
	}
	for k, v := range over {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

func newServer(t testing.TB, p *idp, edit func(*config.OAuthConfig)) *Server {
	t.Helper()
	cfg := &config.OAuthConfig{
		Resource: resource,
		Issuers:  []string{p.srv.URL},
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
	s, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestVerify(t *testing.T) {
	p := newIdP(t)
	s := newServer(t, p, nil)
	k1 := p.key("k1")
	stranger, _ := rsa.GenerateKey(rand.Reader, 2048)
	cases := []struct {
		name   string
		token  string
		status int    // 0: accepted
		want   string // in the message, or the reach when accepted
	}{
		{"valid", mint(t, k1, "k1", p.claims(nil)), 0, "docs"},
		{"no token", "", 401, "requires an OAuth access token"},
		{"expired", mint(t, k1, "k1", p.claims(map[string]any{"exp": time.Now().Add(-time.Minute).Unix()})), 401, "expired at"},
		{"no exp", mint(t, k1, "k1", p.claims(map[string]any{"exp": nil})), 401, "exp"},
		{"not yet valid", mint(t, k1, "k1", p.claims(map[string]any{"nbf": time.Now().Add(time.Hour).Unix()})), 401, "not valid before"},
		{"wrong audience", mint(t, k1, "k1", p.claims(map[string]any{"aud": "https://other.example.com/mcp"})), 401, "audience"},
		{"no audience", mint(t, k1, "k1", p.claims(map[string]any{"aud": nil})), 401, "audience"},
		{"wrong issuer", mint(t, k1, "k1", p.claims(map[string]any{"iss": "https://evil.example.com"})), 401, "not one of http.auth.oauth.issuers"},
		{"forged signature", mint(t, stranger, "k1", p.claims(nil)), 401, "signature does not verify"},
		{"unknown key", mint(t, stranger, "k9", p.claims(nil)), 401, "does not publish"},
		{"garbage JWT", "a.b.c", 401, "not a well-formed JWT"},
		{"alg none", jwtNone(p.claims(nil)), 401, "signature does not verify"},
		{"no rule matches", mint(t, k1, "k1", p.claims(map[string]any{"groups": []string{"sales"}})), 403, "no rule"},
		{"admin", mint(t, k1, "k1", p.claims(map[string]any{"groups": "admins"})), 0, "*"},
		{"scope and group", mint(t, k1, "k1", p.claims(map[string]any{"groups": []string{"code-team", "docs-team"}})), 0, "code,docs ro"},
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
	p := newIdP(t)
	s := newServer(t, p, nil)
	old := p.key("k1")
	oldToken := mint(t, old, "k1", p.claims(nil))
	if _, err := s.Verify(context.Background(), oldToken); err != nil {
		t.Fatal(err)
	}
	hits := p.jwksHits.Load()

	// The provider rotates: k2 in, k1 out.
	k2 := p.addKey(t, "k2")
	p.dropKey("k1")
	if _, err := s.Verify(context.Background(), mint(t, k2, "k2", p.claims(nil))); err != nil {
		t.Fatalf("a token signed by the new key was refused: %v", err)
	}
	if p.jwksHits.Load() != hits+1 {
		t.Errorf("JWKS fetched %d times for the new key, want once", p.jwksHits.Load()-hits)
	}
	// The set no longer has k1.
	_, err := s.Verify(context.Background(), oldToken)
	var e *Error
	if !errors.As(err, &e) || e.Status != 401 || !strings.Contains(e.Message, "does not publish") {
		t.Fatalf("a token of a dropped key: %v", err)
	}
	// Many unknown key IDs: the rate limit allows no further fetch.
	before := p.jwksHits.Load()
	for i := range 20 {
		stranger, _ := rsa.GenerateKey(rand.Reader, 1024)
		if _, err := s.Verify(context.Background(), mint(t, stranger, "forged"+string(rune('a'+i)), p.claims(nil))); err == nil {
			t.Fatal("accepted a forged key")
		}
	}
	if got := p.jwksHits.Load() - before; got > 1 {
		t.Errorf("20 forged key IDs fetched the JWKS %d times; the rate limit allows at most 1", got)
	}
}

func TestIntrospection(t *testing.T) {
	p := newIdP(t)
	p.introspec = func(token string) map[string]any {
		switch token {
		case "opaque-good":
			return map[string]any{"active": true, "sub": "bob", "aud": resource, "iss": p.srv.URL, "scope": "tools:read", "groups": []string{"docs-team"}, "exp": float64(time.Now().Add(time.Hour).Unix())}
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
	for _, tok := range []string{"opaque-revoked", "opaque-other-aud"} {
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
	p := newIdP(t)
	s := newServer(t, p, nil)
	tok := mint(t, p.key("k1"), "k1", p.claims(nil))
	p.srv.Close()
	_, err := s.Verify(context.Background(), tok)
	var e *Error
	if !errors.As(err, &e) || e.Status != http.StatusServiceUnavailable {
		t.Fatalf("with the issuer down: %v", err)
	}
}

func TestMetadata(t *testing.T) {
	p := newIdP(t)
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
	if got["resource"] != resource || !slices.Equal(stringList(got["authorization_servers"]), []string{p.srv.URL}) {
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
	p := newIdP(f)
	s := newServer(f, p, func(c *config.OAuthConfig) { c.Introspection = nil })
	good := mint(f, p.key("k1"), "k1", p.claims(nil))
	for _, seed := range []string{"", "a.b.c", "..", good, good[:len(good)-3], jwtNone(p.claims(nil)), "eyJhbGciOiJIUzI1NiJ9.e30.x"} {
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
	p := newIdP(b)
	s := newServer(b, p, nil)
	tok := mint(b, p.key("k1"), "k1", p.claims(nil))
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
