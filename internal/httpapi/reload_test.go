package httpapi

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolfold/toolfold/internal/config"
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
