package e2e

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearer adds a token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// tokensConfig writes a config of two programs (echo with a read-only and a
// destructive action, printf) and three tokens: one for everything, one
// limited to the echo group, one to read-only tools.
func tokensConfig(t *testing.T) string {
	t.Helper()
	config := filepath.Join(t.TempDir(), "toolfold.yaml")
	if err := os.WriteFile(config, []byte(`commands:
  echo:
    command: echo
    description: Print words
    actions:
      say:
        params:
          words: {type: array, items: {type: string}, positional: true}
        readOnly: true
      shout:
        argv: ["-e"]
        destructive: true
  printf:
    command: printf
    description: Format text
    actions:
      format:
        params:
          text: {type: string, positional: true}
        readOnly: true
http:
  auth:
    tokens:
      - {token: "full-secret"}
      - {token: "echo-secret", groups: [echo]}
      - {token: "ro-secret", readOnly: true}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	return config
}

// TestTokensSeeTheirOwnView checks that /mcp serves a token limited to some
// groups or to read-only tools exactly what it may reach, through the
// built binary: in its list, and when it calls a tool it may not reach.
func TestTokensSeeTheirOwnView(t *testing.T) {
	config := tokensConfig(t)
	base := startHTTP(t, "--config", config, "--mode", "flat")
	connect := func(token string) *mcp.ClientSession {
		t.Helper()
		transport := &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e"}, nil).Connect(context.Background(), transport, nil)
		if err != nil {
			t.Fatalf("token %s: %v", token, err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	tests := []struct {
		token string
		tools string
	}{
		{"full-secret", "echo__say,echo__shout,printf__format"},
		{"echo-secret", "echo__say,echo__shout"},
		{"ro-secret", "echo__say,printf__format"},
	}
	for _, tt := range tests {
		if got := toolNames(t, connect(tt.token)); got != tt.tools {
			t.Errorf("token %s lists %q, want %q", tt.token, got, tt.tools)
		}
	}
	// A tool outside the token's reach cannot be called either.
	res, err := connect("echo-secret").CallTool(context.Background(), &mcp.CallToolParams{Name: "printf__format", Arguments: map[string]any{"text": "x"}})
	if err == nil && !res.IsError {
		t.Errorf("a token limited to echo called printf__format: %+v", res)
	}
	res, err = connect("echo-secret").CallTool(context.Background(), &mcp.CallToolParams{Name: "echo__say", Arguments: map[string]any{"words": []string{"hi"}}})
	if err != nil || res.IsError {
		t.Errorf("a token limited to echo could not call echo__say: %v %+v", err, res)
	}
	// No token at all is refused, as before.
	if code, _ := get(t, base+"/api/groups", nil); code != http.StatusUnauthorized {
		t.Errorf("no token got %d, want 401", code)
	}
}
