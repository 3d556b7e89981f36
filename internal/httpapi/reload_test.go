package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/oauth"
	"github.com/toolfold/toolfold/internal/oauth/oauthtest"
)

// /healthz and the dashboard tell when the config serving now was applied
// and how the last reload went: what it added, removed and restarted, and
// what waits for a restart.
func TestConfigAppliedShown(t *testing.T) {
	applied := time.Date(2026, 11, 29, 3, 30, 0, 0, time.UTC)
	last := &ReloadStatus{Trigger: "file change", Result: "applied", At: applied, Added: []string{"github"}, Removed: []string{"slack"},
		Changed: []string{"memory"}, NeedsRestart: []string{"disclosure.mode"}, Applied: applied}
	for _, tc := range []struct {
		name    string
		set     bool
		applied string // in /healthz; "" when absent
		page    []string
	}{
		{name: "reloaded", set: true, applied: "2026-11-29T03:30:00Z",
			page: []string{"config applied 2026-11-29 03:30:00 UTC", "last reload 03:30:00 UTC (file change): applied", "added github", "removed slack", "restarted memory", "needs a restart for disclosure.mode"}},
		{name: "no config file", set: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := applied
			f := operatorFixture(t, &clock, func(o *Options) {
				if tc.set {
					o.ConfigApplied = func() time.Time { return applied }
					o.LastReload = func() *ReloadStatus { c := *last; return &c }
				}
			})
			var h struct {
				ConfigApplied string `json:"configApplied"`
			}
			if err := json.Unmarshal(f.do(t, "GET", "/healthz", nil).Body.Bytes(), &h); err != nil {
				t.Fatal(err)
			}
			if h.ConfigApplied != tc.applied {
				t.Errorf("healthz configApplied = %q, want %q", h.ConfigApplied, tc.applied)
			}
			page := f.do(t, "GET", "/", nil).Body.String()
			for _, want := range tc.page {
				if !strings.Contains(page, want) {
					t.Errorf("the dashboard lacks %q", want)
				}
			}
			if !tc.set && strings.Contains(page, "config applied") {
				t.Error("the dashboard shows a config applied time without a config file")
			}
		})
	}
}

// SetTokens names the entries whose sessions must end: the revoked, and
// those whose token or rights changed (sessions are bound to positions).
func TestSetTokens(t *testing.T) {
	tok := func(s string, groups ...string) config.TokenConfig {
		return config.TokenConfig{Token: config.Secret(s), Groups: groups}
	}
	a, b, c := tok("alice-token-0123456789"), tok("bob-token-0123456789"), tok("carol-token-0123456789")
	for _, tc := range []struct {
		name        string
		before, now []config.TokenConfig
		revoked     []string
		refused     bool
	}{
		{name: "same", before: []config.TokenConfig{a, b}, now: []config.TokenConfig{a, b}},
		{name: "last removed", before: []config.TokenConfig{a, b}, now: []config.TokenConfig{a}, revoked: []string{"http.auth.tokens[1]"}},
		{name: "first removed shifts the second", before: []config.TokenConfig{a, b}, now: []config.TokenConfig{b}, revoked: []string{"http.auth.tokens[0]", "http.auth.tokens[1]"}},
		{name: "groups narrowed", before: []config.TokenConfig{a}, now: []config.TokenConfig{tok("alice-token-0123456789", "docs")}, revoked: []string{"http.auth.tokens[0]"}},
		{name: "added", before: []config.TokenConfig{a}, now: []config.TokenConfig{a, c}},
		{name: "auth turned off", before: []config.TokenConfig{a}, now: nil, refused: true},
		{name: "auth turned on", before: nil, now: []config.TokenConfig{a}, refused: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, func(o *Options) { o.Tokens = tc.before })
			revoked, err := f.api.SetTokens(tc.now)
			if tc.refused {
				if !errors.Is(err, ErrTokensNeedRestart) {
					t.Fatalf("err = %v, want ErrTokensNeedRestart", err)
				}
				return
			}
			if err != nil || !slices.Equal(revoked, tc.revoked) {
				t.Fatalf("revoked %v (err %v), want %v", revoked, err, tc.revoked)
			}
			if len(tc.now) > 0 {
				if _, ok := f.api.tokens.load().match(string(tc.now[len(tc.now)-1].Token)); !ok {
					t.Error("a token of the new config is refused")
				}
			}
		})
	}
}

// SetOrigins admits the reloaded http.allowedOrigins from the next
// request; a list with a bad entry is refused whole and the old one stays.
func TestSetOrigins(t *testing.T) {
	const app, other = "https://app.example.com", "https://other.example.com"
	f := newFixture(t, func(o *Options) { o.AllowedOrigins = []string{app} })
	status := func(origin string) int {
		return f.do(t, "GET", "/healthz", http.Header{"Origin": {origin}}).Code
	}
	steps := []struct {
		name       string
		allowed    []string
		refused    bool
		app, other int
	}{
		{name: "swapped", allowed: []string{other}, app: 403, other: 200},
		{name: "bad entry keeps the old list", allowed: []string{app, "app.example.com"}, refused: true, app: 403, other: 200},
		{name: "every origin", allowed: []string{"*"}, app: 200, other: 200},
		{name: "none", allowed: nil, app: 403, other: 403},
	}
	for _, s := range steps {
		err := f.api.SetOrigins(s.allowed)
		if (err != nil) != s.refused {
			t.Fatalf("%s: SetOrigins = %v, refused %v", s.name, err, s.refused)
		}
		if err != nil && !strings.Contains(err.Error(), `http.allowedOrigins[1]: "app.example.com" is not an origin`) {
			t.Errorf("%s: the error does not name the bad entry: %v", s.name, err)
		}
		if got := status(app); got != s.app {
			t.Errorf("%s: %s = %d, want %d", s.name, app, got, s.app)
		}
		if got := status(other); got != s.other {
			t.Errorf("%s: %s = %d, want %d", s.name, other, got, s.other)
		}
	}
}

// SetOAuth judges the next request by the reloaded http.auth.oauth: a
// rule taken out refuses its callers, one added admits them; turning
// OAuth off is refused (it needs a restart).
func TestSetOAuth(t *testing.T) {
	p := oauthtest.New(t)
	f := newFixture(t, withOAuth(t, p))
	viewer := http.Header{"Authorization": {"Bearer " + p.Token(t, oauthResource, map[string]any{"groups": "viewers"})}}
	sales := http.Header{"Authorization": {"Bearer " + p.Token(t, oauthResource, map[string]any{"groups": "sales"})}}
	if w := f.do(t, "GET", "/healthz", viewer); w.Code != 200 {
		t.Fatalf("a viewer before the reload: %d %s", w.Code, w.Body)
	}
	if w := f.do(t, "GET", "/healthz", sales); w.Code != 403 {
		t.Fatalf("sales before the reload: %d %s", w.Code, w.Body)
	}
	s, err := oauth.New(&config.OAuthConfig{
		Resource: oauthResource, Issuers: []string{p.URL},
		Rules: []config.OAuthRule{{Group: "sales", Groups: []string{"docs"}}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	old, err := f.api.SetOAuth(s)
	if err != nil || old == nil {
		t.Fatalf("SetOAuth = %v, %v; want the old server", old, err)
	}
	if w := f.do(t, "GET", "/healthz", viewer); w.Code != 403 || !strings.Contains(w.Body.String(), "no rule") {
		t.Errorf("a viewer after their rule was taken out: %d %s", w.Code, w.Body)
	}
	if w := f.do(t, "GET", "/healthz", sales); w.Code != 200 {
		t.Errorf("sales after a rule for them was added: %d %s", w.Code, w.Body)
	}
	if _, err := f.api.SetOAuth(nil); !errors.Is(err, ErrOAuthNeedsRestart) {
		t.Errorf("turning OAuth off: %v, want ErrOAuthNeedsRestart", err)
	}
}
