package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// postMCP posts one JSON-RPC message to an MCP endpoint as a streamable
// HTTP client does, with the given headers on top (an empty value sends
// none), and returns the status, body and headers of the answer.
func postMCP(t *testing.T, url, body string, header map[string]string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw), resp.Header
}

// openRawSession opens and initializes a 2025-11-25 session at url as a
// client named client declaring no capabilities, with the given headers
// (a bearer token, say) on both requests, and returns the headers a
// request of the session sends: those given, its id and its protocol.
func openRawSession(t *testing.T, url, client string, header map[string]string) map[string]string {
	t.Helper()
	code, body, h := postMCP(t, url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"`+client+`","version":"1"}}}`, header)
	session := map[string]string{"Mcp-Session-Id": h.Get("Mcp-Session-Id"), "Mcp-Protocol-Version": "2025-11-25"}
	if code != http.StatusOK || session["Mcp-Session-Id"] == "" {
		t.Fatalf("initialize at %s: %d %s", url, code, body)
	}
	for k, v := range header {
		session[k] = v
	}
	if code, body, _ := postMCP(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, session); code != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d %s", code, body)
	}
	return session
}
