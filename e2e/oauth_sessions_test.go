package e2e

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestOAuthSessionsBelongToTheirCaller extends the negative matrix to the
// session table and the byte paths: bob opens a session with his token
// and calls the everything server's tools through it (once started, those
// calls travel as bytes); alice (who reaches less) and admin (who reaches
// everything) then send bob's session id with their own tokens, on every
// method a session has. Each must be refused (403, or 404 where the
// rider's reach is served by another endpoint), bob's session must go on,
// and a request for it at another endpoint must not touch it. bob's own
// requests, sent the same way, succeed: the matrix can fail.
func TestOAuthSessionsBelongToTheirCaller(t *testing.T) {
	keys := t.TempDir()
	idp := startOIDC(t, "0", filepath.Join(keys, "idp.jwk"))
	base := startOAuthToolfold(t, "", false, idp.issuer)
	resource := base + "/mcp"
	sessionMatrix(t, base, idp.token(t, "bob", resource), map[string]string{"alice": idp.token(t, "alice", resource), "admin": idp.token(t, "admin", resource)})
}

// TestStaticTokenSessionsBelongToTheirCaller is the session matrix with
// static tokens: two tokens of the same reach are served by the same
// endpoint, so the session table itself must tell their sessions apart;
// so must two tokens that reach everything.
func TestStaticTokenSessionsBelongToTheirCaller(t *testing.T) {
	tokens := []map[string]any{
		{"token": "tok-owner-8c31f0", "groups": []string{"everything"}},
		{"token": "tok-same-reach-77a2d4", "groups": []string{"everything"}},
		{"token": "tok-admin-owner-19be55", "admin": true},
		{"token": "tok-admin-other-e0c3a8", "admin": true},
	}
	path := writeConfig(t, map[string]any{
		"mcpServers": map[string]any{"everything": map[string]any{"command": nodeServer(t, "mcp-server-everything")}},
		"http":       map[string]any{"auth": map[string]any{"tokens": tokens}},
	})
	base := startHTTP(t, "--config", path, "--mode", "auto")
	t.Run("same reach", func(t *testing.T) {
		sessionMatrix(t, base, "tok-owner-8c31f0", map[string]string{"another token of the same reach": "tok-same-reach-77a2d4", "an admin token": "tok-admin-other-e0c3a8"})
	})
	t.Run("admin tokens", func(t *testing.T) {
		sessionMatrix(t, base, "tok-admin-owner-19be55", map[string]string{"another admin token": "tok-admin-other-e0c3a8", "a limited token": "tok-same-reach-77a2d4"})
	})
}

// sessionMatrix opens a session at base/mcp as owner, then sends its id
// with each rider's token on every method a session has, and counts the
// requests that were not refused; it ends with the owner's own requests,
// which must succeed.
func sessionMatrix(t *testing.T, base, bob string, riders map[string]string) {
	t.Helper()
	post := func(path, token, session, body string) (int, string, http.Header) {
		t.Helper()
		return postMCP(t, base+path, body, map[string]string{"Authorization": "Bearer " + token, "Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25"})
	}
	open := func(path, token string) string {
		t.Helper()
		return openRawSession(t, base+path, "e2e", map[string]string{"Authorization": "Bearer " + token})["Mcp-Session-Id"]
	}
	echo := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"everything__echo","arguments":{"message":"hi %d"}}}`, id, id)
	}
	session := open("/mcp", bob)
	for i := range 2 { // the first starts the server; the second is forwarded as bytes
		if code, body, _ := post("/mcp", bob, session, echo(10+i)); code != http.StatusOK || !strings.Contains(body, fmt.Sprintf("hi %d", 10+i)) {
			t.Fatalf("bob's own call %d: %d %s", i, code, body)
		}
	}

	attempts, unauthorized := 0, 0
	requests := []string{
		echo(20),
		`{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"everything__echo","arguments":{"message":"x"}}}}`,
		`{"jsonrpc":"2.0","id":22,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":23,"method":"prompts/list"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":10}}`,
	}
	for who, token := range riders {
		for _, body := range requests {
			attempts++
			// 403 where the rider's reach is bob's endpoint, 404 where it
			// is another (a limited view of its own): refused either way.
			if code, answer, _ := post("/mcp", token, session, body); code != http.StatusForbidden && code != http.StatusNotFound {
				unauthorized++
				t.Errorf("UNAUTHORIZED SUCCESS: %s on bob's session: %s = %d %.200s", who, body, code, answer)
			}
		}
		attempts++
		req, _ := http.NewRequest(http.MethodDelete, base+"/mcp", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Mcp-Session-Id", session)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusForbidden && res.StatusCode != http.StatusNotFound {
			unauthorized++
			t.Errorf("UNAUTHORIZED SUCCESS: %s deleted bob's session: %d", who, res.StatusCode)
		}
	}
	// bob's session id at another endpoint is not found there, even for
	// bob, and stays open where it is.
	if code, body, _ := post("/mcp/everything", bob, session, echo(30)); code != http.StatusNotFound {
		t.Errorf("bob's session at /mcp/everything: %d %s; want 404", code, body)
	}
	// The positive control: every request above, sent by bob, is his.
	for i, body := range requests[:4] {
		if code, answer, _ := post("/mcp", bob, session, body); code != http.StatusOK {
			t.Errorf("bob's own request %d on his session: %d %.200s", i, code, answer)
		}
	}
	t.Logf("session matrix: %d attempts on another caller's session, %d succeeded", attempts, unauthorized)
}
