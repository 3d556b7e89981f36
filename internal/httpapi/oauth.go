package httpapi

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/toolfold/toolfold/internal/oauth"
)

// authenticateOAuth admits a static token (http.auth.tokens) or an access
// token the OAuth server accepts. Every 401 carries resource_metadata in
// WWW-Authenticate, so an MCP client can discover where to get a token.
func (a *API) authenticateOAuth(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	token, present := bearerToken(r)
	if present && token != "" && a.tokens.enabled() {
		if access, ok := a.tokens.match(token); ok {
			return r.WithContext(WithAccess(r.Context(), access)), true
		}
	}
	if !present {
		token = ""
	}
	caller, err := a.oauth.Verify(r.Context(), token)
	if err != nil {
		var e *oauth.Error
		if !errors.As(err, &e) {
			e = &oauth.Error{Status: http.StatusUnauthorized, Code: "invalid_token", Message: err.Error()}
		}
		a.refuseOAuth(w, r, e, caller)
		return r, false
	}
	access := Access{TokenName: "oauth " + caller.Subject, Subject: caller.Subject, Groups: caller.Reach.Groups, ReadOnly: caller.Reach.ReadOnly, Admin: caller.Reach.Admin}
	ctx := WithAccess(r.Context(), access)
	ctx = context.WithValue(ctx, callerKey{}, caller)
	return r.WithContext(ctx), true
}

func (a *API) refuseOAuth(w http.ResponseWriter, r *http.Request, e *oauth.Error, caller *oauth.Caller) {
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
		w.Header().Set("WWW-Authenticate", a.oauth.Challenge(e.Code))
	}
	writeError(w, e.Status, e.Message)
}

type callerKey struct{}

// withTokenInfo hands the SDK's streamable handler the caller of an OAuth
// token as its auth.TokenInfo: the SDK then binds each session to the
// user who opened it (another user's token cannot ride it), and the
// gateway sees who calls (Extra.TokenInfo.UserID) for its audit log.
// Static tokens and open requests pass as they are.
func withTokenInfo(next http.Handler) http.Handler {
	bound := auth.RequireBearerToken(func(ctx context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		c, _ := r.Context().Value(callerKey{}).(*oauth.Caller)
		exp := c.Expires
		if !exp.After(time.Now()) {
			// Checked already, within http.auth.oauth.clockSkew.
			exp = time.Now().Add(time.Minute)
		}
		return &auth.TokenInfo{UserID: c.Issuer + " " + c.Subject, Scopes: c.Scopes, Expiration: exp, Extra: map[string]any{"sub": c.Subject}}, nil
	}, nil)(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := r.Context().Value(callerKey{}).(*oauth.Caller); ok {
			bound.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}
