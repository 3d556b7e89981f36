package httpapi_test

import (
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolfold/toolfold/internal/httpapi"
)

// TestLimitedTokensGetTheirView checks how /mcp is routed: a token limited
// to some groups or to read-only tools gets a view of its own, anything
// else the main endpoint, and a limit that cannot be served a 403 saying
// what to fix.
func TestLimitedTokensGetTheirView(t *testing.T) {
	var asked string
	mcp := httpapi.LimitedViews(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
	}), func(groups []string, readOnly bool) (http.Handler, error) {
		asked = strings.Join(groups, ",")
		if readOnly {
			asked += " read-only"
		}
		if len(groups) > 0 && groups[0] == "gone" {
			return nil, errors.New(`there is no group "gone"`)
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) }), nil
	}, slog.New(slog.DiscardHandler))
	tests := []struct {
		name   string
		access *httpapi.Access
		code   int
		asked  string
		says   string
	}{
		{name: "no token", code: http.StatusTeapot},
		{name: "unlimited token", access: &httpapi.Access{TokenName: "http.auth.tokens[0]"}, code: http.StatusTeapot},
		{name: "limited to groups", access: &httpapi.Access{Groups: []string{"issues", "repos"}}, code: http.StatusAccepted, asked: "issues,repos"},
		{name: "read-only", access: &httpapi.Access{ReadOnly: true}, code: http.StatusAccepted, asked: " read-only"},
		{name: "a group that is gone", access: &httpapi.Access{Groups: []string{"gone"}}, code: http.StatusForbidden, asked: "gone", says: `limited to the groups gone, which toolfold cannot serve: there is no group "gone"; fix the token's groups`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asked = ""
			req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			if tt.access != nil {
				req = req.WithContext(httpapi.WithAccess(req.Context(), *tt.access))
			}
			rec := httptest.NewRecorder()
			mcp.ServeHTTP(rec, req)
			if rec.Code != tt.code || !strings.Contains(rec.Body.String(), tt.says) || asked != tt.asked {
				t.Errorf("got %d %q (view asked: %q), want %d with %q (view %q)", rec.Code, rec.Body.String(), asked, tt.code, tt.says, tt.asked)
			}
		})
	}
}
