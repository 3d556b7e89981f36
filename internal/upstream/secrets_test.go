package upstream

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolfold/toolfold/internal/config"
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
	var logs syncBuffer
	m := newTestManager(t, map[string]config.ServerConfig{
		"rejecting": fixture(t, "serve", map[string]string{"FIXTURE_TOKEN": rpcToken}),
		"revoked":   fixture(t, "refuse-init", map[string]string{"FIXTURE_TOKEN": initToken}),
		// The key went into the URL's path through ${KEY}: only the
		// config's record of the expansion tells it is secret.
		"pathkey": remote(echo.URL+"/mcp/"+pathKey+"/sse", config.SecretMap{"KEY": pathKey}),
		// A bare query item is all value.
		"barekey": remote(echo.URL+"/mcp?"+bareKey, nil),
	}, &Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})

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
	for _, secret := range []string{rpcToken, initToken, pathKey, bareKey} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the log shows %s:\n%s", secret, logs.String())
		}
	}
}
