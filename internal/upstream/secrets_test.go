package upstream

import (
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/logtest"
	"github.com/toolfold/toolfold/internal/rawcall"
)

// What a server says about itself (a JSON-RPC error, an initialize
// failure, an HTTP error body) may quote a secret of its config; the
// error, the server's status and the logs must not.
func TestServerErrorsMaskTheirSecrets(t *testing.T) {
	const (
		rpcToken  = "tok-jsonrpc-31337"
		initToken = "tok-init-42424242"
		pathKey   = "path-secret-5150"
		bareKey   = "bare-secret-8086"
	)
	// A remote server that says what it was asked for.
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "nothing at "+r.URL.RequestURI(), http.StatusNotFound)
	}))
	t.Cleanup(echo.Close)
	remote := func(url string, expanded config.SecretMap) config.ServerConfig {
		return config.ServerConfig{URL: url, Transport: config.TransportHTTP, Lazy: true,
			Timeout: config.Duration(5 * time.Second), Expanded: expanded}
	}
	var logs logtest.Buffer
	m := newTestManager(t, map[string]config.ServerConfig{
		"rejecting": fixture(t, "serve", map[string]string{"FIXTURE_TOKEN": rpcToken}),
		"revoked":   fixture(t, "refuse-init", map[string]string{"FIXTURE_TOKEN": initToken}),
		// The key went into the URL's path through ${KEY}: only the
		// config's record of the expansion tells it is secret.
		"pathkey": remote(echo.URL+"/mcp/"+pathKey+"/sse", config.SecretMap{"KEY": pathKey}),
		// A bare query item is all value.
		"barekey": remote(echo.URL+"/mcp?"+bareKey, nil),
	}, &Options{Logger: logs.Logger(slog.LevelInfo)})

	tests := []struct {
		server, tool, secret string
		want                 string
	}{
		{"rejecting", "reject", rpcToken, `upstream "rejecting" answered tools/call "reject" with an error: the token *** may not call this`},
		{"revoked", "add", initToken, "the token *** is revoked"},
		{"pathkey", "add", pathKey, "HTTP 404 Not Found: nothing at /mcp/***/sse"},
		{"barekey", "add", bareKey, "HTTP 404 Not Found: nothing at /mcp?***"},
	}
	for _, tt := range tests {
		t.Run(tt.server, func(t *testing.T) {
			_, err := call(t, m, tt.server, tt.tool, nil)
			if err == nil {
				t.Fatal("the call succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not explain the failure with %q", err, tt.want)
			}
			if strings.Contains(err.Error(), tt.secret) {
				t.Errorf("the error shows the secret: %q", err)
			}
			if st := statusOf(m, tt.server); strings.Contains(st.Error+st.StderrTail, tt.secret) {
				t.Errorf("the status shows the secret: %+v", st)
			}
		})
	}
	// The byte path words the same error from the server's bytes: the
	// message, and the wire error the client is sent, are masked too.
	t.Run("rejecting on the byte path", func(t *testing.T) {
		out, _ := forwardRaw(t, m, "rejecting", "reject", `{}`, rawcall.Capabilities{}, nil)
		o := <-out
		if o.err == nil {
			t.Fatalf("the call succeeded: %s", o.result)
		}
		var wire *jsonrpc.Error
		if !errors.As(o.err, &wire) {
			t.Fatalf("error %q carries no JSON-RPC error for the client", o.err)
		}
		if !strings.Contains(o.err.Error(), tests[0].want) || strings.Contains(o.err.Error()+wire.Message+string(wire.Data), rpcToken) {
			t.Errorf("byte-path error %q (wire %q, data %s): want %q and no secret", o.err, wire.Message, wire.Data, tests[0].want)
		}
	})
	for _, secret := range []string{rpcToken, initToken, pathKey, bareKey} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the log shows %s:\n%s", secret, logs.String())
		}
	}
}

// Only what is secret is masked: header values, what ${VAR} put into the
// entry, and literal env values whose names say so. A literal setting
// ("mode": "banner", "NODE_ENV": "production", a directory) stays readable.
func TestSecretsOfMasksSecretsOnly(t *testing.T) {
	cfg := config.ServerConfig{
		URL: "https://h.example/mcp",
		Env: config.SecretMap{
			"MODE": "banner", "NODE_ENV": "production", "DATA_DIR": "/var/lib/notes",
			"API_KEY": "literal-key-1", "github_token": "ghp_literal2", "DB_PASSWORD": "hunter22",
			"CLIENT_SECRET": "client-secret-3", "Auth": "auth-value-4", "AWS_CREDENTIALS": "cred-value-5",
			"FROM_ENV": "expanded-value-6",
		},
		Headers: config.SecretMap{"X-Custom": "header-value-7"},
		// FROM_ENV's value came from ${VAR}; HOME's went into a path.
		Expanded: config.SecretMap{"ANY": "expanded-value-6", "HOME": "/home/alice"},
	}
	s := secretsOf(cfg)
	for _, secret := range []string{"literal-key-1", "ghp_literal2", "hunter22", "client-secret-3", "auth-value-4", "cred-value-5", "expanded-value-6", "header-value-7"} {
		if got := s.String("the server said " + secret + "."); got != "the server said ***." {
			t.Errorf("%s is not masked: %q", secret, got)
		}
	}
	for _, setting := range []string{"banner", "production", "/var/lib/notes", "/home/alice/notes"} {
		if got := s.String("fixture: starting in mode " + setting); got != "fixture: starting in mode "+setting {
			t.Errorf("the setting %s is masked: %q", setting, got)
		}
	}
}

// A server's stderr, quoted in its error and status, keeps its settings
// readable and its secrets masked.
func TestStderrKeepsSettingsAndMasksSecrets(t *testing.T) {
	const token = "literal-token-77"
	m := newTestManager(t, map[string]config.ServerConfig{
		"failing": fixture(t, "fail-start", map[string]string{"FIXTURE_TOKEN": token}),
	}, nil)
	if _, err := call(t, m, "failing", "add", nil); err == nil {
		t.Fatal("the call succeeded")
	}
	st := statusOf(m, "failing")
	if !strings.Contains(st.StderrTail, "fixture: starting in mode fail-start") {
		t.Errorf("the stderr tail masks a setting:\n%s", st.StderrTail)
	}
	if !strings.Contains(st.Error, "fatal: the API key *** was rejected") {
		t.Errorf("the error does not quote the reason: %s", st.Error)
	}
	if strings.Contains(st.Error+st.StderrTail, token) {
		t.Errorf("the status shows the token: %+v", st)
	}
}
