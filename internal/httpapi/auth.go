package httpapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/config"
)

// Access is what the bearer token of a request allows. The zero value
// allows everything, which is what a request gets when auth is off.
type Access struct {
	// TokenName names the matched token by its place in the config
	// ("http.auth.tokens[0]"), for logs; empty when auth is off. It is
	// never the token itself.
	TokenName string
	// Subject is the caller an OAuth access token speaks for (its sub),
	// for logs and audit; empty for static tokens.
	Subject string
	// Groups limits the request to these groups and the groups inside
	// them, plus ungrouped tools; empty means every group.
	Groups []string
	// ReadOnly limits the request to tools that declare readOnlyHint.
	ReadOnly bool
	// Admin allows the operator's routes (/metrics, /api/*, the
	// dashboard); it matters only when auth is on.
	Admin bool
}

// Limited reports whether the access is narrower than everything.
func (a Access) Limited() bool { return len(a.Groups) > 0 || a.ReadOnly }

// AllowsGroup reports whether the group, or a group it is nested in, is
// one the access names. A limit to "code" therefore includes "code.repos":
// a child can only be enabled after its parent anyway.
func (a Access) AllowsGroup(g *catalog.Group) bool {
	if len(a.Groups) == 0 {
		return true
	}
	for at := g; at != nil; at = at.Parent {
		if slices.Contains(a.Groups, string(at.ID)) {
			return true
		}
	}
	return false
}

// AllowsTool reports whether the access reaches the tool: read-only if the
// access demands it, and ungrouped or in an allowed group.
func (a Access) AllowsTool(t *catalog.Tool) bool {
	if a.ReadOnly && !t.ReadOnly() {
		return false
	}
	if len(a.Groups) == 0 || len(t.Groups) == 0 {
		return true
	}
	return slices.ContainsFunc(t.Groups, a.AllowsGroup)
}

type accessKey struct{}

// WithAccess returns a context that carries the access. The API sets it on
// every authenticated request; tests of code that reads it use it too.
func WithAccess(ctx context.Context, a Access) context.Context {
	return context.WithValue(ctx, accessKey{}, a)
}

// AccessFromContext returns the access of the request the context belongs
// to. ok is false when the request carried no token because auth is off;
// the zero Access it then returns allows everything.
func AccessFromContext(ctx context.Context) (a Access, ok bool) {
	a, ok = ctx.Value(accessKey{}).(Access)
	return a, ok
}

// tokenSet checks bearer tokens. It keeps only digests: comparing SHA-256
// sums of equal length in constant time leaks neither a token's bytes nor
// its length through timing.
type tokenSet struct {
	digests [][sha256.Size]byte
	access  []Access
}

func newTokenSet(tokens []config.TokenConfig) (*tokenSet, error) {
	ts := &tokenSet{}
	for i, t := range tokens {
		where := tokenName(i)
		if strings.TrimSpace(string(t.Token)) == "" {
			// An empty token would admit "Authorization: Bearer " from anyone.
			return nil, fmt.Errorf("%s.token is empty, which would let anyone in; set it, usually to \"${SOME_VARIABLE}\" holding a long random value, and check that the variable is set", where)
		}
		ts.digests = append(ts.digests, sha256.Sum256([]byte(t.Token)))
		ts.access = append(ts.access, Access{TokenName: where, Groups: slices.Clone(t.Groups), ReadOnly: t.ReadOnly, Admin: t.Admin})
	}
	return ts, nil
}

func (ts *tokenSet) enabled() bool { return len(ts.digests) > 0 }

// match finds the access of a presented token. It compares against every
// token without stopping early, so the time taken does not say which one
// (or whether any) matched.
func (ts *tokenSet) match(presented string) (Access, bool) {
	sum := sha256.Sum256([]byte(presented))
	found := -1
	for i, d := range ts.digests {
		if subtle.ConstantTimeCompare(sum[:], d[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return Access{}, false
	}
	return ts.access[found], true
}

// maxTokenBytes bounds a bearer token: static tokens are short, and access
// tokens of authorization servers with many groups stay within a few KiB.
const maxTokenBytes = 32 << 10

// bearerToken extracts the token of an "Authorization: Bearer <token>"
// header. The scheme is case-insensitive (RFC 9110 §11.1).
func bearerToken(r *http.Request) (token string, present bool) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", false
	}
	scheme, rest, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", true
	}
	return strings.TrimSpace(rest), true
}

// authenticate admits a request that carries a known token and puts its
// access in the request's context. The answers to a refused request say
// what is missing, never what was sent.
func (a *API) authenticate(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	if token, _ := bearerToken(r); len(token) > maxTokenBytes {
		// Refused before any comparison or parse: no token toolfold
		// accepts is this long.
		a.refuseAuth(w, r, `invalid_token`, fmt.Sprintf("the bearer token in the Authorization header is %d KiB, over the %d KiB toolfold reads; send the token exactly as it was issued (check that the header holds one token, not a document)", len(token)>>10, maxTokenBytes>>10))
		return r, false
	}
	if o := a.oauth.Load(); o != nil {
		return a.authenticateOAuth(w, r, o)
	}
	tokens := a.tokens.load() // one set for the whole judgment, though a reload swaps it
	if !tokens.enabled() {
		return r, true
	}
	token, present := bearerToken(r)
	if !present {
		a.refuseAuth(w, r, "", noToken)
		return r, false
	}
	access, ok := tokens.match(token)
	if !ok || token == "" {
		a.refuseAuth(w, r, `invalid_token`, "the bearer token in the Authorization header is not one of http.auth.tokens; check the token your client sends (the header must read \"Authorization: Bearer <token>\")")
		return r, false
	}
	return r.WithContext(WithAccess(r.Context(), access)), true
}

// noToken answers a request without credentials. toolfold's tokens are
// static, so the answer says where they come from and that there is no
// OAuth to discover: clients such as the MCP Inspector start OAuth
// discovery on any 401, and the user must instead give the client the
// token as a header.
const noToken = "this toolfold needs a bearer token: send the header \"Authorization: Bearer <token>\" with one of the tokens set under http.auth.tokens in toolfold's config. " +
	"There is no OAuth here (no authorization server to discover or register with): give the token to your client as a header (in the MCP Inspector: Authentication, Bearer Token)"

// noOAuth answers the OAuth discovery documents (RFC 9728, RFC 8414,
// OpenID) without asking for a token, so a client that looks for them
// learns at once that there is none, and why.
const noOAuth = "toolfold does not use OAuth: there is no protected-resource or authorization-server metadata. Every request needs a static bearer token, \"Authorization: Bearer <token>\", one of http.auth.tokens in toolfold's config; give it to your client as a header"

// isOAuthDiscovery reports whether a path is one of the well-known OAuth
// discovery documents a client fetches after a 401.
func isOAuthDiscovery(path string) bool {
	for _, p := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"} {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

func (a *API) refuseAuth(w http.ResponseWriter, r *http.Request, code, msg string) {
	reason := code
	challenge := `Bearer realm="toolfold"`
	if code == "" {
		// RFC 6750 §3.1: a request with no credentials gets no error code.
		reason = "no token"
	} else {
		challenge += fmt.Sprintf(", error=%q", code)
	}
	a.log.Info("refused a request without a valid bearer token", "path", r.URL.Path, "remote", r.RemoteAddr, "reason", reason)
	w.Header().Set("WWW-Authenticate", challenge)
	writeError(w, http.StatusUnauthorized, msg)
}

// adminOnly serves the operator's routes only to a token marked admin when
// auth is on: they show every source, tool and call count, which a client's
// token has no need to see. Without auth they are open, as on loopback.
func (a *API) adminOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if access, ok := AccessFromContext(r.Context()); ok && !access.Admin {
			a.log.Info("refused an operator's route to a token that is not an admin", "path", r.URL.Path, "token", access.TokenName)
			fix := fmt.Sprintf("use a token marked \"admin\": true in http.auth.tokens (this one is %s)", access.TokenName)
			if access.Subject != "" {
				fix = fmt.Sprintf("a rule of http.auth.oauth.rules with \"admin\": true must match %q", access.Subject)
			}
			writeError(w, http.StatusForbidden, fmt.Sprintf("%s is for operators: %s", r.URL.Path, fix))
			return
		}
		h.ServeHTTP(w, r)
	})
}
