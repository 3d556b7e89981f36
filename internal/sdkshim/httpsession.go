package sdkshim

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
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
