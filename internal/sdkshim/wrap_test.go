package sdkshim_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// wrapping wraps the connections of a transport, as the upstream package's
// progressObserver does.
type wrapping struct{ inner mcp.Transport }

type wrapped struct{ mcp.Connection }

func (w wrapping) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := w.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return wrapped{c}, nil
}

// TestSDKStreamableClientConnectionCannotBeWrapped: the streamable client
// connection learns the session's state through an unexported interface
// (clientConnection.sessionUpdated) that a wrapper hides; wrapped, it sends
// its requests without Mcp-Protocol-Version (and opens no standalone
// stream). Which is why the upstream package leaves that connection alone
// (lifetimeTransport.Connect) and watches HTTP response bodies for an
// extension's notifications instead (headerTransport). When this fails,
// the SDK exports the interface or stopped needing it, and one connection
// wrapper could serve every transport.
func TestSDKStreamableClientConnectionCannotBeWrapped(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "bare"}, nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	var mu sync.Mutex
	var versions []string // of the POSTs of a session
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") != "" {
			mu.Lock()
			versions = append(versions, r.Header.Get("Mcp-Protocol-Version"))
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	sent := func(wrap bool) string {
		mu.Lock()
		versions = nil
		mu.Unlock()
		var tr mcp.Transport = &mcp.StreamableClientTransport{Endpoint: srv.URL}
		if wrap {
			tr = wrapping{tr}
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "pin", Version: "1"}, nil).Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if _, err := cs.ListTools(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(versions, ",")
	}
	if got := sent(false); got != "2025-11-25,2025-11-25" {
		t.Fatalf("the bare connection's session POSTs said protocol versions %q; want 2025-11-25 on each (else this pin tests nothing)", got)
	}
	if got := sent(true); got != "," {
		t.Fatalf("a wrapped streamable connection's session POSTs said protocol versions %q; the SDK now lets a wrapper through, so headerTransport's watching could become a connection wrapper", got)
	}
}
