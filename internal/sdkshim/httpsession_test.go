package sdkshim_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/sdkshim"
)

const pinInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"pin","version":"1"}}}`

const pinPing = `{"jsonrpc":"2.0","id":2,"method":"ping"}`

// bearerServer serves a bare SDK streamable handler behind a bearer
// check whose token is the caller's user id; it returns the server's URL
// and the handler without the check.
func bearerServer(t *testing.T) (string, http.Handler) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "bare"}, nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	bearer := auth.RequireBearerToken(func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: token, Expiration: time.Now().Add(time.Hour)}, nil
	}, nil)
	srv := httptest.NewServer(bearer(h))
	t.Cleanup(srv.Close)
	return srv.URL, h
}

// inSession are the headers of a request of session id, sent with token.
func inSession(id, token string) map[string]string {
	h := map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-11-25"}
	if token != "" {
		h["Authorization"] = "Bearer " + token
	}
	return h
}

// TestSDKStreamableSessionsAndTheirOwners: a streamable handler names the
// session an initialize opened in the Mcp-Session-Id header (what
// SessionStarted reads); a session opened with a token answers another
// token 403 "session user mismatch" (what the gateway's session table
// mirrors for every path); a DELETE handed to the handler as the owner
// ends it with 204 (CloseStreamableSession), and a request of an ended
// session is answered 404 (SessionEnded reads both).
func TestSDKStreamableSessionsAndTheirOwners(t *testing.T) {
	url, h := bearerServer(t)
	code, body, header := post(t, url, pinInitialize, map[string]string{"Authorization": "Bearer alice"})
	id := header.Get("Mcp-Session-Id")
	if code != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d %s, session %q; the SDK no longer names a new session in Mcp-Session-Id", code, body, id)
	}
	if code, body, _ := post(t, url, pinPing, inSession(id, "bob")); code != http.StatusForbidden || !strings.Contains(body, "session user mismatch") {
		t.Fatalf("another token on alice's session: %d %s; the SDK no longer refuses it as the session table assumes", code, body)
	}
	del := httptest.NewRequest(http.MethodDelete, "/mcp", nil)
	del.Header.Set("Mcp-Session-Id", id)
	del.Header.Set("Authorization", "Bearer alice")
	rec := httptest.NewRecorder()
	auth.RequireBearerToken(func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: token, Expiration: time.Now().Add(time.Hour)}, nil
	}, nil)(h).ServeHTTP(rec, del)
	if rec.Code != http.StatusNoContent {
		t.Fatalf("the owner's DELETE was answered %d %s; SessionEnded expects 204", rec.Code, rec.Body)
	}
	if code, body, _ := post(t, url, pinPing, inSession(id, "alice")); code != http.StatusNotFound {
		t.Fatalf("a session deleted through the handler answered %d %s; want 404", code, body)
	}
}

// TestCloseStreamableSession: a session is closed as its owner, with or
// without a token; closing one that is gone says what the handler
// answered.
func TestCloseStreamableSession(t *testing.T) {
	url, h := bearerServer(t)
	for _, owner := range []string{"alice", ""} {
		t.Run("owner "+owner, func(t *testing.T) {
			handler, target := h, url
			if owner == "" {
				// A session opened without a token has no owner.
				srv := httptest.NewServer(h)
				t.Cleanup(srv.Close)
				target = srv.URL
			}
			headers := map[string]string{}
			if owner != "" {
				headers["Authorization"] = "Bearer " + owner
			}
			_, _, header := post(t, target, pinInitialize, headers)
			id := sdkshim.SessionStarted(header)
			if id == "" {
				t.Fatal("initialize opened no session")
			}
			if err := sdkshim.CloseStreamableSession(handler, id, owner); err != nil {
				t.Fatal(err)
			}
			code, body, _ := post(t, target, pinPing, inSession(id, owner))
			if !sdkshim.SessionEnded(http.MethodPost, code) {
				t.Fatalf("after CloseStreamableSession the session answered %d %s", code, body)
			}
			if err := sdkshim.CloseStreamableSession(handler, id, owner); err == nil || !strings.Contains(err.Error(), "404") {
				t.Fatalf("closing a closed session: %v; want an error with the handler's 404", err)
			}
		})
	}
}

func TestSessionEnded(t *testing.T) {
	for _, tt := range []struct {
		method string
		status int
		want   bool
	}{
		{http.MethodPost, http.StatusNotFound, true},
		{http.MethodGet, http.StatusNotFound, true},
		{http.MethodDelete, http.StatusNoContent, true},
		{http.MethodPost, http.StatusNoContent, false},
		{http.MethodPost, http.StatusOK, false},
		{http.MethodDelete, http.StatusForbidden, false},
	} {
		if got := sdkshim.SessionEnded(tt.method, tt.status); got != tt.want {
			t.Errorf("SessionEnded(%s, %d) = %v, want %v", tt.method, tt.status, got, tt.want)
		}
	}
}

// TestSDKAsksForTheServerOnEveryRequest: the streamable handler calls its
// getServer for every request of a session, not only for the initialize
// that opens it; which is why ChosenServer answers requests with no server
// chosen (with a fallback whose protocol versions are all the SDK reads).
func TestSDKAsksForTheServerOnEveryRequest(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "bare"}, nil)
	asked := make(chan string, 8)
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		asked <- r.Header.Get("Mcp-Session-Id")
		return s
	}, nil)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	drain := func() (ids []string) {
		for {
			select {
			case id := <-asked:
				ids = append(ids, id)
			default:
				return ids
			}
		}
	}
	_, _, header := post(t, srv.URL, pinInitialize, nil)
	id := sdkshim.SessionStarted(header)
	if id == "" || len(drain()) == 0 {
		t.Fatal("the initialize opened no session, or getServer was not asked for it")
	}
	post(t, srv.URL, pinPing, inSession(id, ""))
	// The handler asks while it serves, before it answers.
	if got := drain(); !slices.Contains(got, id) {
		t.Fatalf("getServer was asked for %q while a session's request was served; the SDK no longer asks for its requests, so ChosenServer's fallback may be unnecessary", got)
	}
}

// TestChosenServerServesTheChosenOne: a request made with WithServer is
// served by its server, with the body given; one without, by the fallback.
func TestChosenServerServesTheChosenOne(t *testing.T) {
	named := func(name string) *mcp.Server {
		return mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, nil)
	}
	chosen, fallback := named("chosen"), named("fallback")
	h := mcp.NewStreamableHTTPHandler(sdkshim.ChosenServer(fallback), nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Choose") != "" {
			// The body the handler gets is the one given, not the one sent.
			r = sdkshim.WithServer(r, chosen, []byte(pinInitialize))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	if _, body, _ := post(t, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"not what is served"}`, map[string]string{"X-Choose": "1"}); !strings.Contains(body, `"name":"chosen"`) {
		t.Errorf("a request with a chosen server was answered %s", body)
	}
	if _, body, _ := post(t, srv.URL, pinInitialize, nil); !strings.Contains(body, `"name":"fallback"`) {
		t.Errorf("a request with no server chosen was answered %s", body)
	}
}
