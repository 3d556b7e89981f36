package upstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/logtest"
)

// serveFixtureHTTP serves the fixture over streamable HTTP behind a bearer
// token check.
func serveFixtureHTTP(t *testing.T, token string) string {
	t.Helper()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newFixtureServer() }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

func TestRemoteHTTP(t *testing.T) {
	url := serveFixtureHTTP(t, "tok-right-123")
	remote := func(url, token string) config.ServerConfig {
		return config.ServerConfig{URL: url, Transport: config.TransportHTTP, Lazy: true,
			Timeout: config.Duration(5 * time.Second), Headers: config.SecretMap{"Authorization": "Bearer " + token}}
	}
	closed := func() string {
		l, _ := net.Listen("tcp", "127.0.0.1:0")
		defer l.Close()
		return fmt.Sprintf("http://%s/mcp", l.Addr())
	}()
	m := newTestManager(t, map[string]config.ServerConfig{
		"good":    remote(url, "tok-right-123"),
		"denied":  remote(url, "tok-wrong-456"),
		"nowhere": remote(closed, "tok-right-123"),
	}, nil)
	if got := mustCall(t, m, "good", "add", map[string]any{"a": 40, "b": 2}); got != "42" {
		t.Errorf("add = %q", got)
	}
	tests := []struct {
		server string
		want   []string
	}{
		{"denied", []string{`upstream "denied" at http http://127.0.0.1:`, "refused the connection: HTTP 401 Unauthorized: missing or wrong bearer token; check the credentials in its \"headers\""}},
		{"nowhere", []string{`upstream "nowhere" at http`, "could not be reached", "connection refused"}},
	}
	for _, tt := range tests {
		t.Run(tt.server, func(t *testing.T) {
			_, err := call(t, m, tt.server, "add", nil)
			if !errors.Is(err, ErrStartFailed) {
				t.Fatalf("got %v, want a start failure", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "tok-") {
				t.Errorf("the error shows a header value: %q", err)
			}
			if st := statusOf(m, tt.server); st.State != StateFailed || st.Error != err.Error() {
				t.Errorf("status: %+v", st)
			}
		})
	}
}

// TestInMemoryDial checks the dial hook the benchmark uses.
func TestInMemoryDial(t *testing.T) {
	m := newTestManager(t, map[string]config.ServerConfig{"mem": {Command: "unused"}}, &Options{dial: inMemoryDialer(newFixtureServer())})
	if got := mustCall(t, m, "mem", "add", map[string]any{"a": 1, "b": 2}); got != "3" {
		t.Errorf("add = %q", got)
	}
}

// inMemoryDialer connects each new connection to srv in memory.
func inMemoryDialer(srv *mcp.Server) dialer {
	return func(ctx context.Context, _ string, _ config.ServerConfig, _ *slog.Logger) (dialed, error) {
		clientT, serverT := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(ctx, serverT, nil); err != nil {
			return dialed{}, err
		}
		return dialed{transport: clientT}, nil
	}
}

// A remote server that restarted has forgotten toolfold's session and
// answers 404 "session not found": the next call re-initializes and is
// retried once, and the caller never hears of it, however late the old
// connection's end is confirmed.
func TestRemoteSessionLostIsReinitialized(t *testing.T) {
	var handler atomicHandler
	fresh := func() http.Handler {
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newFixtureServer() }, nil)
	}
	handler.Store(fresh())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.Load().ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	var logs logtest.Buffer
	m := newTestManager(t, map[string]config.ServerConfig{
		"remote": {URL: srv.URL + "/mcp", Transport: config.TransportHTTP, Lazy: true, Timeout: config.Duration(5 * time.Second)},
	}, &Options{Logger: logs.Logger(slog.LevelInfo)})
	// The watcher of a dead connection learns of its end late, or (here)
	// not before the test is over: the retry must not depend on it.
	held := make(chan struct{})
	m.connectionEnding = func(string) { <-held }
	t.Cleanup(func() { close(held) }) // before the Manager closes
	if got := mustCall(t, m, "remote", "add", map[string]any{"a": 1, "b": 2}); got != "3" {
		t.Fatalf("add = %q", got)
	}
	handler.Store(fresh()) // the server restarted: its sessions are gone
	for i := range 3 {
		if got := mustCall(t, m, "remote", "add", map[string]any{"a": 40, "b": i}); got != strconv.Itoa(40+i) {
			t.Errorf("add after the restart = %q", got)
		}
	}
	// A pass-through request is retried the same way.
	handler.Store(fresh())
	if err := m.SetLoggingLevel(t.Context(), "remote", "info"); err != nil {
		t.Errorf("logging/setLevel after the restart: %v", err)
	}
	if st := m.Status()[0]; st.State != StateReady {
		t.Errorf("state = %s (%s), want ready", st.State, st.Error)
	}
	// Forgetting a session is not a crash: no backoff, no warning.
	if out := logs.String(); !strings.Contains(out, "upstream forgot the session") || strings.Contains(out, "level=WARN") {
		t.Errorf("log:\n%s", out)
	}
}

type atomicHandler struct{ p atomic.Pointer[http.Handler] }

func (a *atomicHandler) Store(h http.Handler) { a.p.Store(&h) }
func (a *atomicHandler) Load() http.Handler   { return *a.p.Load() }
