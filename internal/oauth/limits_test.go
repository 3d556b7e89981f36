package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"github.com/toolfold/toolfold/internal/oauth/oauthtest"
)

// sized is doc as JSON, padded with a "padding" member to exactly n bytes.
func sized(t *testing.T, doc map[string]any, n int) []byte {
	t.Helper()
	doc["padding"] = ""
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > n {
		t.Fatalf("the document is %d bytes before padding, more than %d", len(b), n)
	}
	doc["padding"] = strings.Repeat("x", n-len(b))
	b, _ = json.Marshal(doc)
	if len(b) != n {
		t.Fatalf("padded to %d bytes, not %d", len(b), n)
	}
	return b
}

func serve(body []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})
}

// keys is the JWKS of k1 followed by copies of it under other key IDs, n
// keys in all.
func keys(p *oauthtest.IdP, n int) map[string]any {
	list := []any{p.JWK("k1")}
	for i := 1; i < n; i++ {
		k := p.JWK("k1")
		k["kid"] = fmt.Sprintf("copy%d", i)
		list = append(list, k)
	}
	return map[string]any{"keys": list}
}

// TestProviderDocumentBounds: a metadata document, key set or
// introspection answer over its bound is refused, naming the bound and the
// provider, with a 503 as for a provider that is down; one exactly at the
// bound is read.
func TestProviderDocumentBounds(t *testing.T) {
	metadata := func(p *oauthtest.IdP) map[string]any {
		return map[string]any{"issuer": p.URL, "jwks_uri": p.URL + "/jwks", "introspection_endpoint": p.URL + "/introspect"}
	}
	active := func(p *oauthtest.IdP) map[string]any {
		return map[string]any{"active": true, "sub": "alice", "aud": resource, "groups": []string{"docs-team"}}
	}
	cases := []struct {
		name   string
		path   string
		body   func(t *testing.T, p *oauthtest.IdP) []byte
		opaque bool   // send an opaque token (introspection) rather than a JWT
		want   string // in the 503's message; "" when accepted
	}{
		{"metadata at the bound", "/.well-known/oauth-authorization-server",
			func(t *testing.T, p *oauthtest.IdP) []byte { return sized(t, metadata(p), maxMetadataBytes) }, false, ""},
		{"metadata over the bound", "/.well-known/oauth-authorization-server",
			func(t *testing.T, p *oauthtest.IdP) []byte { return sized(t, metadata(p), maxMetadataBytes+1) }, false, "larger than 1 MiB"},
		{"key set at the byte bound", "/jwks",
			func(t *testing.T, p *oauthtest.IdP) []byte { return sized(t, keys(p, 1), maxJWKSBytes) }, false, ""},
		{"key set over the byte bound", "/jwks",
			func(t *testing.T, p *oauthtest.IdP) []byte { return sized(t, keys(p, 1), maxJWKSBytes+1) }, false, "larger than 1 MiB"},
		{"key set at the key bound", "/jwks",
			func(t *testing.T, p *oauthtest.IdP) []byte { b, _ := json.Marshal(keys(p, maxJWKSKeys)); return b }, false, ""},
		{"key set over the key bound", "/jwks",
			func(t *testing.T, p *oauthtest.IdP) []byte { b, _ := json.Marshal(keys(p, maxJWKSKeys+1)); return b }, false, "larger than 100 keys"},
		{"introspection answer at the bound", "/introspect",
			func(t *testing.T, p *oauthtest.IdP) []byte { return sized(t, active(p), maxIntrospectionBytes) }, true, ""},
		{"introspection answer over the bound", "/introspect",
			func(t *testing.T, p *oauthtest.IdP) []byte { return sized(t, active(p), maxIntrospectionBytes+1) }, true, "larger than 256 KiB"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := oauthtest.New(t)
			p.Handle(c.path, serve(c.body(t, p)))
			var logs syncBuffer
			s := newServerWith(t, p, nil, &Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			token := p.Token(t, resource, nil)
			if c.opaque {
				token = "opaque-token"
			}
			caller, err := s.Verify(context.Background(), token)
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused a document within the bound: %v", err)
				}
				if caller.Subject != "alice" {
					t.Errorf("subject %q", caller.Subject)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("accepted or not an *Error: %v", err)
			}
			if e.Status != http.StatusServiceUnavailable || !strings.Contains(e.Message, c.want) || !strings.Contains(e.Message, p.URL) {
				t.Errorf("got %d %q, want 503 naming %q and %s", e.Status, e.Message, c.want, p.URL)
			}
			if !c.opaque && !strings.Contains(logs.String(), c.want) {
				t.Errorf("the log does not say why: %s", logs.String())
			}
		})
	}
}

// TestKeyUse: a key the issuer publishes for encryption, or with key_ops
// that leave out verify, does not verify a token's signature, even a
// signature it made; the same key published for signatures does.
func TestKeyUse(t *testing.T) {
	cases := []struct {
		name   string
		fields map[string]any // the JWK's members; nil values removed
		noKID  bool           // the token names no key
		want   string         // in the 401's message; "" when accepted
	}{
		{"use sig", map[string]any{"use": "sig"}, false, ""},
		{"no use", map[string]any{"use": nil}, false, ""},
		{"use enc", map[string]any{"use": "enc"}, false, `for use "enc"`},
		{"key_ops verify", map[string]any{"use": nil, "key_ops": []string{"verify"}}, false, ""},
		{"key_ops encrypt", map[string]any{"use": nil, "key_ops": []string{"encrypt", "decrypt"}}, false, `do not include "verify"`},
		{"use sig, no kid", map[string]any{"use": "sig"}, true, ""},
		{"use enc, no kid", map[string]any{"use": "enc"}, true, "does not publish"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := oauthtest.New(t)
			p.SetKeyFields("k1", c.fields)
			s := newServer(t, p, nil)
			token := p.Token(t, resource, nil)
			if c.noKID {
				token = mintNoKID(t, p)
			}
			caller, err := s.Verify(context.Background(), token)
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused a key meant for signatures: %v", err)
				}
				if caller.Subject != "alice" {
					t.Errorf("subject %q", caller.Subject)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("accepted or not an *Error: %v", err)
			}
			if e.Status != http.StatusUnauthorized || e.Code != "invalid_token" || !strings.Contains(e.Message, c.want) {
				t.Errorf("got %d %s %q, want 401 invalid_token containing %q", e.Status, e.Code, e.Message, c.want)
			}
		})
	}
}

func mintNoKID(t *testing.T, p *oauthtest.IdP) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodRS256, p.Claims(resource, nil)).SignedString(p.Key("k1"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRefreshPastBoundKeepsKeys: a key set past its bound on a refresh is
// logged, and the keys already held stay in use.
func TestRefreshPastBoundKeepsKeys(t *testing.T) {
	cases := []struct {
		name string
		body func(t *testing.T, p *oauthtest.IdP) []byte
		want string
	}{
		{"too many bytes", func(t *testing.T, p *oauthtest.IdP) []byte { return sized(t, keys(p, 1), maxJWKSBytes+1) }, "larger than 1 MiB"},
		{"too many keys", func(t *testing.T, p *oauthtest.IdP) []byte { b, _ := json.Marshal(keys(p, maxJWKSKeys+1)); return b }, "larger than 100 keys"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := oauthtest.New(t)
			var logs syncBuffer
			s := newServerWith(t, p, nil, &Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			good := p.Token(t, resource, nil)
			if _, err := s.Verify(context.Background(), good); err != nil {
				t.Fatal(err)
			}
			p.Handle("/jwks", serve(c.body(t, p)))
			// An unknown kid makes toolfold refetch the set at once.
			if _, err := s.Verify(context.Background(), oauthtest.Mint(t, p.Key("k1"), "k9", p.Claims(resource, nil))); err == nil {
				t.Fatal("accepted a token of an unknown key")
			}
			if !strings.Contains(logs.String(), c.want) {
				t.Errorf("the refresh past the bound was not logged: %s", logs.String())
			}
			if _, err := s.Verify(context.Background(), good); err != nil {
				t.Errorf("the keys held before were dropped: %v", err)
			}
		})
	}
}

// syncBuffer is a bytes.Buffer a logger and a test may share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
