package httpapi

import (
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"

	"github.com/toolfold/toolfold/internal/config"
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
