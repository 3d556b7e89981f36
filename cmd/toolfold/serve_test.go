package main

import (
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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
	mcp := limitedViews(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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

// TestServeHTTPOnAPortInUseStartsNothing: serve takes its address before it
// starts any server, so a port in use fails at once, saying which address
// and what to do, and the server that would leave a marker never runs.
func TestServeHTTPOnAPortInUseStartsNothing(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := t.TempDir()
	marker := filepath.Join(dir, "started")
	writeConfigJSON(t, dir, "toolfold.json", map[string]any{"mcpServers": map[string]any{"eager": map[string]any{
		"command": testBinary(t), "lazy": false,
		"env": map[string]string{"TOOLFOLD_TEST_HELPER": "marker", "TOOLFOLD_TEST_MARKER": marker}}}})
	addr := taken.Addr().String()
	code, _, stderr := runCLI(t, dir, nil, "serve", "--http", addr)
	if code != 1 || !strings.Contains(stderr, "cannot listen on "+addr+", which another program (perhaps another toolfold) is using") || !strings.Contains(stderr, "pick another address with --http") {
		t.Errorf("serve on a port in use: exit %d, want 1 naming the address and the fix\nstderr: %s", code, stderr)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("the server was started before the address was taken (marker: %v)", err)
	}
}

// TestClientLeavingDuringStartIsQuiet: a stdio client that hangs up while
// a server is still starting ends the session as any client leaving does:
// the start cut short by the shutdown is no warning.
func TestClientLeavingDuringStartIsQuiet(t *testing.T) {
	dir := t.TempDir()
	writeConfigJSON(t, dir, "toolfold.json", map[string]any{"mcpServers": map[string]any{"slow": map[string]any{
		"command": testBinary(t), "lazy": false, "env": map[string]string{"TOOLFOLD_TEST_HELPER": "hang"}}}})
	// runCLI's stdin is empty: the client is gone before serve reads it.
	code, _, stderr := runCLI(t, dir, nil, "serve")
	if code != 0 {
		t.Fatalf("serve: exit %d\nstderr: %s", code, stderr)
	}
	if strings.Contains(stderr, "level=WARN") || strings.Contains(stderr, "level=ERROR") {
		t.Errorf("a client leaving while a server starts is an ordinary end, but serve warned:\n%s", stderr)
	}
}
