package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/trust"
)

// pinsAPI is an API with auth on (an admin token, a limited admin token and
// a client token) whose Pins record approvals.
func pinsAPI(t *testing.T, tokens bool) (*API, *[]string) {
	t.Helper()
	var approved []string
	opts := &Options{
		Catalog: newFixture(t, nil).cat.Load,
		Pins: &Pins{
			Report: func() trust.Report {
				return trust.Report{Servers: []trust.ServerReport{{Name: "mail", State: "held", Held: []trust.HeldReport{{Item: "tool:send_email", Diff: "- a\n+ b\n", Approve: "toolfold pins approve mail send_email"}}}}}
			},
			Approve: func(server string, items []string, who string) (any, error) {
				if server != "mail" {
					return nil, fmt.Errorf("%w: no server %q", ErrPinsRequest, server)
				}
				approved = append(approved, fmt.Sprintf("%s %v by %s", server, items, who))
				return items, nil
			},
		},
	}
	if tokens {
		opts.Tokens = []config.TokenConfig{{Token: "admin-token-value", Admin: true}, {Token: "client-token-value"}, {Token: "limited-admin-value", Admin: true, Groups: []string{"code"}}}
	}
	a, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return a, &approved
}

func pinsRequest(a *API, method, token, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, "/api/pins", strings.NewReader(body))
	r.Host = "127.0.0.1:8080"
	r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}))
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	a.ServeHTTP(w, r)
	return w
}

func TestPinsAPI(t *testing.T) {
	cases := []struct {
		name                string
		tokens              bool
		method, token, body string
		status              int
		want, wantApproved  string
	}{
		{"read with the admin token", true, "GET", "admin-token-value", "", 200, `"mail"`, ""},
		{"read without a token", true, "GET", "", "", 401, "", ""},
		{"read with a client token", true, "GET", "client-token-value", "", 403, "for operators", ""},
		{"approve with the admin token", true, "POST", "admin-token-value", `{"server":"mail","items":["send_email"]}`, 200, `"approved": [`, "mail [send_email] by http.auth.tokens[0]"},
		{"approve with a client token", true, "POST", "client-token-value", `{"server":"mail"}`, 403, "", ""},
		{"approve with an admin token limited to groups", true, "POST", "limited-admin-value", `{"server":"mail"}`, 403, "not limited", ""},
		{"approve a server that is not held", true, "POST", "admin-token-value", `{"server":"nope"}`, 400, `no server \"nope\"`, ""},
		{"approve with a bad body", true, "POST", "admin-token-value", `mail`, 400, `{\"server\": \"NAME\"`, ""},
		{"another method", true, "DELETE", "admin-token-value", "", 405, "", ""},
		// Without auth (loopback) reading is open like the other
		// operator's routes, but approving needs a token a browser page
		// cannot send.
		{"read without auth", false, "GET", "", "", 200, `"servers"`, ""},
		{"approve without auth", false, "POST", "", `{"server":"mail"}`, 403, "admin token", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, approved := pinsAPI(t, c.tokens)
			w := pinsRequest(a, c.method, c.token, c.body)
			if w.Code != c.status || !strings.Contains(w.Body.String(), c.want) {
				t.Errorf("%s = %d %s, want %d with %q", c.method, w.Code, w.Body, c.status, c.want)
			}
			if got := strings.Join(*approved, "; "); got != c.wantApproved {
				t.Errorf("approved %q, want %q", got, c.wantApproved)
			}
			if w.Code == 200 && !json.Valid(w.Body.Bytes()) {
				t.Errorf("not JSON: %s", w.Body)
			}
		})
	}
}

// TestDashboardShowsHeldPins: an operator's dashboard shows each held item
// with its diff and the command that approves it.
func TestDashboardShowsHeldPins(t *testing.T) {
	a, _ := pinsAPI(t, false)
	r := httptest.NewRequest("GET", "/", nil)
	r.Host = "127.0.0.1:8080"
	r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}))
	w := httptest.NewRecorder()
	a.ServeHTTP(w, r)
	for _, want := range []string{`<section id="pins">`, "tool:send_email", "- a\n&#43; b", "toolfold pins approve mail send_email"} {
		if !strings.Contains(w.Body.String(), want) {
			t.Errorf("the dashboard lacks %q", want)
		}
	}
}

// TestDashboardApproveButton: the dashboard's approve form carries the
// admin token in its body (the page runs no script, so it cannot send a
// header); the token is judged by the same check as a header's, a wrong
// or client token approves nothing, a foreign page's form is refused by
// its Origin, and a good one returns to the dashboard.
func TestDashboardApproveButton(t *testing.T) {
	cases := []struct {
		name, token, origin string
		status              int
		wantApproved        string
	}{
		{"admin token", "admin-token-value", "http://127.0.0.1:8080", http.StatusSeeOther, "mail [tool:send_email] by http.auth.tokens[0]"},
		{"client token", "client-token-value", "http://127.0.0.1:8080", http.StatusForbidden, ""},
		{"wrong token", "nope", "http://127.0.0.1:8080", http.StatusUnauthorized, ""},
		{"no token", "", "http://127.0.0.1:8080", http.StatusUnauthorized, ""},
		{"another site's page", "admin-token-value", "https://evil.example", http.StatusForbidden, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, approved := pinsAPI(t, true)
			form := "server=mail&item=tool%3Asend_email&token=" + c.token
			r := httptest.NewRequest("POST", "/api/pins", strings.NewReader(form))
			r.Host = "127.0.0.1:8080"
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r.Header.Set("Origin", c.origin)
			r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}))
			w := httptest.NewRecorder()
			a.ServeHTTP(w, r)
			if w.Code != c.status {
				t.Errorf("status %d, want %d: %s", w.Code, c.status, w.Body)
			}
			if got := strings.Join(*approved, "; "); got != c.wantApproved {
				t.Errorf("approved %q, want %q", got, c.wantApproved)
			}
			if c.status == http.StatusSeeOther && w.Header().Get("Location") != "/#pins" {
				t.Errorf("redirected to %q", w.Header().Get("Location"))
			}
		})
	}
	// The page offers the form for each held item.
	a, _ := pinsAPI(t, false)
	r := httptest.NewRequest("GET", "/", nil)
	r.Host = "127.0.0.1:8080"
	r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}))
	w := httptest.NewRecorder()
	a.ServeHTTP(w, r)
	for _, want := range []string{`<form method="post" action="/api/pins"`, `name="item" value="tool:send_email"`, `type="password" name="token"`} {
		if !strings.Contains(w.Body.String(), want) {
			t.Errorf("the dashboard lacks %q", want)
		}
	}
}
