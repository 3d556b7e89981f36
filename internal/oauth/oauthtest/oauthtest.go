// Package oauthtest is an in-process authorization server for unit tests
// of code that validates access tokens: metadata (RFC 8414), a JWKS whose
// keys a test rotates, an introspection endpoint, and minting of signed
// tokens. End-to-end tests use a real OpenID provider instead (e2e/oidc).
package oauthtest

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// IdP is a running fake authorization server. Its signing key is "k1"
// until a test adds others.
type IdP struct {
	// URL is the issuer.
	URL string
	// JWKSFetches counts requests for the key set.
	JWKSFetches atomic.Int32
	// Introspect answers introspection requests for toolfold/s3cret.
	Introspect func(token string) map[string]any

	srv      *httptest.Server
	mu       sync.Mutex
	keys     map[string]*rsa.PrivateKey
	fields   map[string]map[string]any
	handlers map[string]http.Handler
}

// New starts an IdP that stops when the test ends.
func New(t testing.TB) *IdP {
	t.Helper()
	p := &IdP{keys: map[string]*rsa.PrivateKey{}, fields: map[string]map[string]any{}, handlers: map[string]http.Handler{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{
			"issuer":                 p.URL,
			"jwks_uri":               p.URL + "/jwks",
			"token_endpoint":         p.URL + "/token",
			"introspection_endpoint": p.URL + "/introspect",
		})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		p.JWKSFetches.Add(1)
		p.mu.Lock()
		defer p.mu.Unlock()
		keys := []map[string]any{}
		for kid, k := range p.keys {
			keys = append(keys, p.jwk(kid, k))
		}
		json.NewEncoder(w).Encode(map[string]any{"keys": keys})
	})
	mux.HandleFunc("/introspect", func(w http.ResponseWriter, r *http.Request) {
		id, secret, ok := r.BasicAuth()
		if !ok || id != "toolfold" || secret != "s3cret" || p.Introspect == nil {
			http.Error(w, "bad client", http.StatusUnauthorized)
			return
		}
		json.NewEncoder(w).Encode(p.Introspect(r.FormValue("token")))
	})
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		h, ok := p.handlers[r.URL.Path]
		p.mu.Unlock()
		if ok {
			h.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	p.URL = p.srv.URL
	t.Cleanup(p.srv.Close)
	p.AddKey(t, "k1")
	return p
}

// jwk is a key as the JWKS publishes it, with the fields a test set.
func (p *IdP) jwk(kid string, k *rsa.PrivateKey) map[string]any {
	m := map[string]any{
		"kty": "RSA", "kid": kid, "alg": "RS256", "use": "sig",
		"n": base64.RawURLEncoding.EncodeToString(k.N.Bytes()),
		"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(k.E)).Bytes()),
	}
	for f, v := range p.fields[kid] {
		if v == nil {
			delete(m, f)
		} else {
			m[f] = v
		}
	}
	return m
}

// JWK is the JWKS entry of a published key, with SetKeyFields applied.
func (p *IdP) JWK(kid string) map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.jwk(kid, p.keys[kid])
}

// SetKeyFields changes the members the JWKS publishes for a key, such as
// "use" or "key_ops"; a nil value removes the member.
func (p *IdP) SetKeyFields(kid string, fields map[string]any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fields[kid] = fields
}

// Handle serves path with h instead of the fake's own handler ("/jwks",
// "/introspect", "/.well-known/oauth-authorization-server"), for answers
// a real provider should not give.
func (p *IdP) Handle(path string, h http.Handler) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.handlers[path] = h
}

// Close stops the server early (an issuer that is down).
func (p *IdP) Close() { p.srv.Close() }

// AddKey publishes a new key.
func (p *IdP) AddKey(t testing.TB, kid string) *rsa.PrivateKey {
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

// DropKey stops publishing a key; tokens it signed stay in the test's hands.
func (p *IdP) DropKey(kid string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.keys, kid)
}

// Key returns a published key.
func (p *IdP) Key(kid string) *rsa.PrivateKey {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.keys[kid]
}

// Claims are those of a valid token for alice of "docs-team" meant for
// resource, with over applied (a nil value removes the claim).
func (p *IdP) Claims(resource string, over map[string]any) jwt.MapClaims {
	c := jwt.MapClaims{
		"iss": p.URL, "aud": resource, "sub": "alice",
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

// Mint signs claims with key, naming kid in the header.
func Mint(t testing.TB, key *rsa.PrivateKey, kid string, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Token is a valid token from key k1 with over applied.
func (p *IdP) Token(t testing.TB, resource string, over map[string]any) string {
	return Mint(t, p.Key("k1"), "k1", p.Claims(resource, over))
}
