package sdkshim

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The streamable HTTP handler keeps its sessions in an unexported map:
// outside code can neither close one by id nor hear that one started or
// ended (docs/sdk-workarounds.md, item 1, proposes CloseSession, Admit and
// OnSessionStart/End). An owner that counts and times out sessions itself
// learns of them from what the handler writes (SessionStarted,
// SessionEnded) and closes them as their clients would
// (CloseStreamableSession). TestSDKStreamableSessionsAndTheirOwners pins
// all three.

// SessionStarted is the id of the session an answer of the SDK's
// streamable handler opened, read from its headers when the status is
// written; "" if it opened none.
func SessionStarted(h http.Header) string { return h.Get("Mcp-Session-Id") }

// SessionEnded reports whether the handler's answer of status to a
// request of method, naming a session, means the session is gone: the
// handler answers 404 to a session it does not have, and 204 to the DELETE
// that ended it.
func SessionEnded(method string, status int) bool {
	return status == http.StatusNotFound || (method == http.MethodDelete && status == http.StatusNoContent)
}

// CloseStreamableSession closes session id of h, an SDK streamable
// handler, the way its client would: a DELETE handed to the handler. The
// handler refuses a DELETE from anyone but the session's owner, so for a
// session opened with a token (owner not "") the request carries owner as
// the caller auth.RequireBearerToken would have found. An error says what
// the handler answered instead of closing it.
func CloseStreamableSession(h http.Handler, id, owner string) error {
	req := httptest.NewRequest(http.MethodDelete, "/mcp", nil)
	req.Header.Set("Mcp-Session-Id", id)
	if owner != "" {
		// The SDK reads the caller only from a context that
		// auth.RequireBearerToken made.
		req.Header.Set("Authorization", "Bearer owner")
		h = auth.RequireBearerToken(func(context.Context, string, *http.Request) (*auth.TokenInfo, error) {
			return &auth.TokenInfo{UserID: owner, Expiration: time.Now().Add(time.Minute)}, nil
		}, nil)(h)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusNoContent && rec.Code != http.StatusOK {
		return fmt.Errorf("the SDK's handler answered the DELETE of session %s with %d %q", id, rec.Code, strings.TrimSpace(rec.Body.String()))
	}
	return nil
}

// chosenServer keys the server chosen for a request in its context, where
// ChosenServer finds it (the SDK wraps the body before it asks for the
// server, so the body cannot carry it).
type chosenServer struct{}

// WithServer returns r for the SDK's streamable handler, to be served by
// server (a handler made with ChosenServer), with body as its body: the
// one its owner read, or rewrote.
func WithServer(r *http.Request, server *mcp.Server, body []byte) *http.Request {
	r = r.WithContext(context.WithValue(r.Context(), chosenServer{}, server))
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	return r
}

// ChosenServer is the getServer of a streamable handler whose owner
// chooses each new session's server itself (WithServer). The SDK asks for
// a server on every request, not only those that open a session
// (TestSDKAsksForTheServerOnEveryRequest); for a request with no server
// chosen, fallback is given: the SDK reads only its protocol versions,
// since a session's own server was chosen when it began, and a request
// that opens none is refused without one.
func ChosenServer(fallback *mcp.Server) func(*http.Request) *mcp.Server {
	return func(r *http.Request) *mcp.Server {
		if server, ok := r.Context().Value(chosenServer{}).(*mcp.Server); ok {
			return server
		}
		return fallback
	}
}
