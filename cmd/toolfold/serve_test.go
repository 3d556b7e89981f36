package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolfold/toolfold/internal/httpapi"
)

func TestLimitedTokensAreSentToGroupEndpoints(t *testing.T) {
	mcp := limitedTokensUseGroupEndpoints(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
	}))
	tests := []struct {
		name   string
		access *httpapi.Access
		code   int
		says   string
	}{
		{name: "no token", code: http.StatusTeapot},
		{name: "unlimited token", access: &httpapi.Access{TokenName: "http.auth.tokens[0]"}, code: http.StatusTeapot},
		{name: "limited to groups", access: &httpapi.Access{Groups: []string{"issues", "repos"}}, code: http.StatusForbidden, says: "limited to the groups issues, repos; connect to /mcp/<group>"},
		{name: "read-only", access: &httpapi.Access{ReadOnly: true}, code: http.StatusForbidden, says: "limited to read-only tools"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			if tt.access != nil {
				req = req.WithContext(httpapi.WithAccess(req.Context(), *tt.access))
			}
			rec := httptest.NewRecorder()
			mcp.ServeHTTP(rec, req)
			if rec.Code != tt.code || !strings.Contains(rec.Body.String(), tt.says) {
				t.Errorf("got %d %q, want %d with %q", rec.Code, rec.Body.String(), tt.code, tt.says)
			}
		})
	}
}
