package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/toolfold/toolfold/internal/oauth"
)

// authenticateOAuth admits a static token (http.auth.tokens) or an access
// token the OAuth server accepts. Every 401 carries resource_metadata in
// WWW-Authenticate, so an MCP client can discover where to get a token.
func (a *API) authenticateOAuth(w http.ResponseWriter, r *http.Request, o *oauth.Server) (*http.Request, bool) {
	token, present := bearerToken(r)
	if present && token != "" && a.tokens.load().enabled() {
		if access, ok := a.tokens.load().match(token); ok {
			return r.WithContext(WithAccess(r.Context(), access)), true
		}
	}
	if !present {
		token = ""
	}
	caller, err := o.Verify(r.Context(), token)
	if err != nil {
		var e *oauth.Error
		if !errors.As(err, &e) {
			e = &oauth.Error{Status: http.StatusUnauthorized, Code: "invalid_token", Message: err.Error()}
		}
		a.refuseOAuth(w, r, o, e, caller)
		return r, false
	}
	access := Access{TokenName: "oauth " + caller.Subject, Subject: caller.Subject, Groups: caller.Reach.Groups, ReadOnly: caller.Reach.ReadOnly, Admin: caller.Reach.Admin}
	ctx := WithAccess(r.Context(), access)
	ctx = context.WithValue(ctx, callerKey{}, caller)
	return r.WithContext(ctx), true
}

func (a *API) refuseOAuth(w http.ResponseWriter, r *http.Request, o *oauth.Server, e *oauth.Error, caller *oauth.Caller) {
	reason := e.Code
	if reason == "" {
		reason = "no token"
	}
	attrs := []any{"path", r.URL.Path, "remote", r.RemoteAddr, "status", e.Status, "reason", reason, "detail", e.Message}
	if caller != nil {
		attrs = append(attrs, "sub", caller.Subject)
	}
	if cause := errors.Unwrap(e); cause != nil {
		attrs = append(attrs, "err", cause)
	}
	a.log.Info("refused a request's OAuth token", attrs...)
	if e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden {
		w.Header().Set("WWW-Authenticate", o.Challenge(e.Code))
	}
	if e.RetryAfter > 0 {
		// Whole seconds, rounded up: asking sooner would be refused again.
		w.Header().Set("Retry-After", strconv.FormatInt(int64((e.RetryAfter+time.Second-1)/time.Second), 10))
	}
	writeError(w, e.Status, e.Message)
}

type callerKey struct{}

// withTokenInfo hands the SDK's streamable handler the caller of a request
// as its auth.TokenInfo: the SDK then binds each session to the caller who
// opened it (another caller's token cannot ride it), and the gateway names
// the caller in its audit log (Extra["caller"]: the OAuth sub, or a static
// token's place in the config, never the token). Requests without auth
// pass as they are.
func withTokenInfo(next http.Handler) http.Handler {
	bound := auth.RequireBearerToken(func(ctx context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		access, _ := AccessFromContext(r.Context())
		info := &auth.TokenInfo{UserID: access.TokenName, Expiration: time.Now().Add(time.Hour), Extra: map[string]any{"caller": access.TokenName}}
		if c, ok := r.Context().Value(callerKey{}).(*oauth.Caller); ok {
			info.UserID, info.Scopes = c.Issuer+" "+c.Subject, c.Scopes
			info.Extra["caller"] = c.Subject
			if c.Expires.After(time.Now()) {
				info.Expiration = c.Expires
			} // else expired within http.auth.oauth.clockSkew: checked already
		}
		return info, nil
	}, nil)(next)
	return &tokenInfo{bound: bound, next: next}
}

// tokenInfo is withTokenInfo's handler: small, and a type rather than an
// http.HandlerFunc, for the same reason as limitedViews; the Access it
// reads is copied in hasToken's frame, which is gone before a stream
// parks.
type tokenInfo struct{ bound, next http.Handler }

func (t *tokenInfo) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if hasToken(r) {
		t.bound.ServeHTTP(w, r)
		return
	}
	t.next.ServeHTTP(w, r)
}

// hasToken reports whether r was authenticated with a token.
//
//go:noinline
func hasToken(r *http.Request) bool {
	access, ok := AccessFromContext(r.Context())
	return ok && access.TokenName != ""
}
