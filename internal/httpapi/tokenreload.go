package httpapi

import (
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"

	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/oauth"
)

// tokenSetPtr holds the tokens requests are judged by; a config reload
// swaps them (SetTokens), and the next request is judged by the new ones.
type tokenSetPtr struct {
	p   atomic.Pointer[tokenSet]
	cfg atomic.Pointer[[]config.TokenConfig]
}

func (t *tokenSetPtr) load() *tokenSet { return t.p.Load() }

func (t *tokenSetPtr) set(tokens []config.TokenConfig) error {
	ts, err := newTokenSet(tokens)
	if err != nil {
		return err
	}
	cp := append([]config.TokenConfig(nil), tokens...)
	t.p.Store(ts)
	t.cfg.Store(&cp)
	return nil
}

// ErrTokensNeedRestart refuses a reload that would turn token auth on or
// off: whether lists are private to each caller, and whether an exposed
// address may serve, were settled at start.
var ErrTokensNeedRestart = errors.New("turning http.auth.tokens on or off needs a restart")

// SetTokens judges every request from now on by tokens, the reloaded
// http.auth.tokens, and returns the names of the entries that were
// revoked or changed (callers as auth.TokenInfo names them: sessions are
// bound to these names, which are positions, so an entry whose token,
// groups or rights changed must not keep the sessions opened under the
// old one). The caller ends those sessions.
func (a *API) SetTokens(tokens []config.TokenConfig) (revoked []string, err error) {
	old := *a.tokens.cfg.Load()
	if (len(old) == 0) != (len(tokens) == 0) {
		return nil, fmt.Errorf("%w: the running gateway has %d and the new config %d; restart toolfold to apply it", ErrTokensNeedRestart, len(old), len(tokens))
	}
	if err := a.tokens.set(tokens); err != nil {
		return nil, err
	}
	for i, t := range old {
		if i >= len(tokens) || !reflect.DeepEqual(t, tokens[i]) {
			revoked = append(revoked, tokenName(i))
		}
	}
	return revoked, nil
}

// tokenName is the caller name of the i-th entry of http.auth.tokens.
func tokenName(i int) string { return fmt.Sprintf("http.auth.tokens[%d]", i) }

// SetOrigins admits browsers by allowed, the reloaded http.allowedOrigins,
// from the next request on. An entry that is not an origin refuses the
// whole list: the running one keeps serving.
func (a *API) SetOrigins(allowed []string) error {
	for i, o := range allowed {
		if _, ok := normalizeOrigin(o); !ok && o != "*" {
			return fmt.Errorf("http.allowedOrigins[%d]: %q is not an origin; write scheme and host (and port if any), such as \"https://app.example.com\"", i, o)
		}
	}
	p := newOriginPolicy(allowed)
	a.origins.Store(&p)
	return nil
}

// ErrOAuthNeedsRestart refuses a reload that would turn OAuth on or off:
// like token auth, whether an exposed address may serve was settled at
// start.
var ErrOAuthNeedsRestart = errors.New("turning http.auth.oauth on or off needs a restart")

// SetOAuth judges OAuth access tokens by s, made from the reloaded
// http.auth.oauth (its rules, issuers, audiences), from the next request
// on, and returns the server it replaces, which the caller closes. A
// request already past its judgment keeps the access it was given.
func (a *API) SetOAuth(s *oauth.Server) (*oauth.Server, error) {
	if (a.oauth.Load() == nil) != (s == nil) {
		return nil, fmt.Errorf("%w; restart toolfold to apply it", ErrOAuthNeedsRestart)
	}
	return a.oauth.Swap(s), nil
}
