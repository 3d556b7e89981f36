package oauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/toolfold/toolfold/internal/config"
)

// Caller is who a valid token speaks for and what it may reach.
type Caller struct {
	// Subject is the token's sub: the user or client, for logs and audit.
	Subject string
	// Issuer is the authorization server that issued the token.
	Issuer string
	// Scopes are the token's scope values.
	Scopes []string
	// Groups are the values of the groups claim (the identity provider's
	// groups, not toolfold's).
	Groups []string
	// Expires is when the token stops being valid; zero if it does not say.
	Expires time.Time
	// Reach is what the rules grant the caller.
	Reach Reach
}

// Reach is what a caller may reach: toolfold groups (with the groups
// inside them and the ungrouped tools) and whether only read-only tools.
type Reach struct {
	// All grants every group; Groups is then empty.
	All bool
	// Groups are the granted groups, sorted, without duplicates.
	Groups []string
	// ReadOnly limits the caller to read-only tools.
	ReadOnly bool
	// Admin opens the operator's routes (a matching rule said admin).
	Admin bool
}

// Error is a refused token: the HTTP status (401 or 403, 503 when the
// issuer cannot be reached), the RFC 6750 error code for WWW-Authenticate
// and a sentence for the caller.
type Error struct {
	Status int
	// Code is invalid_token, insufficient_scope or "" (no token).
	Code    string
	Message string
	// RetryAfter, on a 503, is when asking again may succeed; zero if
	// toolfold cannot tell.
	RetryAfter time.Duration
	// err is the underlying cause, for logs.
	err error
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.err }

func invalid(err error, format string, args ...any) *Error {
	return &Error{Status: http.StatusUnauthorized, Code: "invalid_token", Message: fmt.Sprintf(format, args...), err: err}
}

// Options tune a Server beyond its config.
type Options struct {
	// Client fetches metadata, keys and introspection answers; nil means a
	// client with a 10-second timeout.
	Client *http.Client
	// Logger hears of key fetches and their failures; nil discards.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now. Tests set it.
	Now func() time.Time
	// Introspection bounds the requests to the introspection endpoint.
	Introspection IntrospectionLimits
}

// Server validates access tokens for one resource. It is safe for
// concurrent use. Build it with New; Close stops its key refreshes.
type Server struct {
	cfg      config.OAuthConfig
	opts     Options
	log      *slog.Logger
	issuers  map[string]*issuer
	audience []string
	claim    string
	meta     oauthex.ProtectedResourceMetadata
	metaURL  string
	metaPath string
	parser   *jwt.Parser
	intro    *introspector

	ctx    context.Context
	cancel context.CancelFunc
}

// New prepares a Server from the config. It contacts no one: each issuer's
// metadata and keys are fetched on the first token it issued, and again
// after a failure, so toolfold starts while the provider is down.
func New(cfg *config.OAuthConfig, opts *Options) (*Server, error) {
	if cfg == nil {
		return nil, errors.New("oauth: no config")
	}
	s := &Server{cfg: *cfg, issuers: map[string]*issuer{}, claim: cfg.GroupsClaim}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Client == nil {
		s.opts.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if s.opts.Now == nil {
		s.opts.Now = time.Now
	}
	s.log = s.opts.Logger
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.claim == "" {
		s.claim = "groups"
	}
	res, err := url.Parse(cfg.Resource)
	if err != nil || res.Host == "" || (res.Scheme != "https" && res.Scheme != "http") {
		return nil, fmt.Errorf("http.auth.oauth.resource %q is not an http(s) URL; write toolfold's MCP URL as clients reach it, such as \"https://tools.example.com/mcp\"", cfg.Resource)
	}
	if len(cfg.Issuers) == 0 {
		return nil, errors.New("http.auth.oauth.issuers is empty: name the issuer URL of your identity provider")
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	for _, iss := range cfg.Issuers {
		s.issuers[iss] = &issuer{url: iss, s: s}
	}
	s.audience = append([]string{cfg.Resource}, cfg.Audiences...)
	// RFC 9728 §3.1: the well-known segment goes between host and path.
	s.metaPath = "/.well-known/oauth-protected-resource" + strings.TrimSuffix(res.EscapedPath(), "/")
	s.metaURL = res.Scheme + "://" + res.Host + s.metaPath
	s.meta = oauthex.ProtectedResourceMetadata{
		Resource:               cfg.Resource,
		AuthorizationServers:   slices.Clone(cfg.Issuers),
		ScopesSupported:        slices.Clone(cfg.Scopes),
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "toolfold",
	}
	s.parser = jwt.NewParser(
		jwt.WithValidMethods([]string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}),
		jwt.WithExpirationRequired(),
		jwt.WithLeeway(cfg.ClockSkew.Std()),
		jwt.WithTimeFunc(s.opts.Now),
	)
	if cfg.Introspection != nil {
		s.intro = newIntrospector(*cfg.Introspection, s, s.opts.Introspection)
	}
	return s, nil
}

// Close stops the background key refreshes.
func (s *Server) Close() { s.cancel() }

// MetadataURL is the URL of the protected resource metadata, for the
// resource_metadata parameter of WWW-Authenticate.
func (s *Server) MetadataURL() string { return s.metaURL }

// Resource is the configured resource URL.
func (s *Server) Resource() string { return s.cfg.Resource }

// Issuers are the configured issuer URLs.
func (s *Server) Issuers() []string { return slices.Clone(s.cfg.Issuers) }

// Verify checks a bearer token and says whom it speaks for and what the
// rules grant. A refusal is always an *Error.
func (s *Server) Verify(ctx context.Context, token string) (*Caller, error) {
	if token == "" {
		return nil, &Error{Status: http.StatusUnauthorized, Message: s.noTokenMessage()}
	}
	var c *Caller
	var err *Error
	if strings.Count(token, ".") == 2 {
		c, err = s.verifyJWT(ctx, token)
	} else if s.intro != nil {
		c, err = s.intro.check(ctx, token)
	} else {
		err = invalid(nil, "the bearer token is not a JWT, and this toolfold validates only JWT access tokens (no introspection endpoint is configured); ask %s for a JWT access token for the resource %s", strings.Join(s.cfg.Issuers, " or "), s.cfg.Resource)
	}
	if err != nil {
		return nil, err
	}
	c.Reach = Grant(s.cfg.Rules, c)
	if !c.Reach.All && len(c.Reach.Groups) == 0 {
		return c, &Error{Status: http.StatusForbidden, Code: "insufficient_scope",
			Message: fmt.Sprintf("the token is valid, but no rule of http.auth.oauth.rules grants %q any group (its groups claim %q holds %q, its scopes are %q); ask the operator to add a rule", c.Subject, s.claim, c.Groups, c.Scopes)}
	}
	return c, nil
}

func (s *Server) noTokenMessage() string {
	return fmt.Sprintf("this toolfold requires an OAuth access token: get one from %s for the resource %s (the protected resource metadata at %s says so) and send it as \"Authorization: Bearer <token>\"", strings.Join(s.cfg.Issuers, " or "), s.cfg.Resource, s.metaURL)
}

// NoTokenMessage is the body of a 401 for a request with no token.
func (s *Server) NoTokenMessage() string { return s.noTokenMessage() }

func (s *Server) verifyJWT(ctx context.Context, token string) (*Caller, *Error) {
	var claims jwt.MapClaims
	// Read iss first, unverified, only to pick whose keys to check against.
	if _, _, err := s.parser.ParseUnverified(token, &claims); err != nil {
		return nil, invalid(err, "the bearer token is not a well-formed JWT (%v); send the access token exactly as the authorization server issued it", err)
	}
	iss, _ := claims["iss"].(string)
	if e := readableTimes(claims); e != nil {
		return nil, e
	}
	is, ok := s.issuers[iss]
	if !ok {
		return nil, invalid(nil, "the token was issued by %q, which is not one of http.auth.oauth.issuers (%s); get a token from a listed issuer", iss, strings.Join(s.cfg.Issuers, ", "))
	}
	kf, err := is.keys(ctx)
	if err != nil {
		return nil, &Error{Status: http.StatusServiceUnavailable, Code: "", Message: fmt.Sprintf("toolfold cannot fetch the keys of the issuer %s to check the token: %v; try again shortly, and tell the operator if it persists", iss, err), err: err}
	}
	claims = jwt.MapClaims{}
	// The signature covers iss, so the issuer read above is the verified one.
	_, err = s.parser.ParseWithClaims(token, &claims, kf.KeyfuncCtx(ctx))
	if err != nil {
		return nil, s.describe(err, claims, iss)
	}
	aud, _ := claims.GetAudience()
	if !oauthexMatches(aud, s) {
		return nil, invalid(nil, "the token's audience %q is not this toolfold (%s); ask the authorization server for a token with resource=%s (RFC 8707)", []string(aud), s.cfg.Resource, s.cfg.Resource)
	}
	return s.callerOf(claims, iss), nil
}

// oauthexMatches reports whether an audience names this resource (a
// trailing slash aside) or one of the other accepted audiences.
func oauthexMatches(aud []string, s *Server) bool {
	return oauthex.MatchesResource(aud, s.cfg.Resource) || matchesAny(aud, s.cfg.Audiences)
}

func matchesAny(aud, accepted []string) bool {
	for _, a := range accepted {
		if slices.Contains(aud, a) {
			return true
		}
	}
	return false
}

// describe words a failed JWT check for the caller.
func (s *Server) describe(err error, claims jwt.MapClaims, iss string) *Error {
	var use *keyUseError
	switch {
	case errors.As(err, &use):
		return invalid(err, "the token names the key %q of %s, which is %s; toolfold checks signatures only with keys meant for them. Get a token signed with a signing key, or ask the operator of %s to check its key set", use.kid, iss, use.reason(), iss)
	case errors.Is(err, jwt.ErrTokenExpired):
		exp, _ := claims.GetExpirationTime()
		return invalid(err, "the token expired at %s; get a new one from %s", when(exp), iss)
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		nbf, _ := claims.GetNotBefore()
		return invalid(err, "the token is not valid before %s; check the clocks of the client and the authorization server", when(nbf))
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return invalid(err, "the token lacks a required claim (%v); toolfold accepts only tokens with exp", err)
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return invalid(err, "the token's signature does not verify with the keys of %s; it was altered or not issued by that server", iss)
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		return invalid(err, "the token is signed with a key that %s does not publish (anymore) in its JWKS; get a new token", iss)
	}
	return invalid(err, "the token is not valid: %v", err)
}

// lastTime is the last second of the year 9999: a token's time past it is
// no time at all (1e20 is past what time.Time holds, and the JWT library
// reads it as an expiry long ago).
const lastTime = 253402300799

// readableTimes refuses a token whose exp, nbf or iat is not a time
// toolfold can read, naming the claim, before any check reads it wrongly.
func readableTimes(claims map[string]any) *Error {
	for _, name := range []string{"exp", "nbf", "iat"} {
		v, ok := claims[name].(float64)
		if ok && (v < 0 || v > lastTime) {
			return invalid(nil, "the token's %s claim (%g) is not a time toolfold can read: it must be seconds since 1970 up to the year 9999; get a token with a real %s from the authorization server", name, v, name)
		}
	}
	return nil
}

func when(t *jwt.NumericDate) string {
	if t == nil {
		return "an unknown time"
	}
	return t.UTC().Format(time.RFC3339)
}

// callerOf reads the claims toolfold uses.
func (s *Server) callerOf(claims map[string]any, iss string) *Caller {
	c := &Caller{Issuer: iss}
	c.Subject, _ = claims["sub"].(string)
	if c.Subject == "" {
		// A client credentials token may name only its client (RFC 9068
		// puts it in sub; introspection answers often do not).
		c.Subject, _ = claims["client_id"].(string)
	}
	if scope, ok := claims["scope"].(string); ok {
		c.Scopes = strings.Fields(scope)
	} else {
		c.Scopes = stringList(claims["scp"]) // Azure AD and others
	}
	c.Groups = stringList(claims[s.claim])
	if exp, ok := claims["exp"].(float64); ok {
		c.Expires = time.Unix(int64(exp), 0)
	}
	return c
}

// stringList reads a claim that is a list of strings or one string.
func stringList(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	case []string:
		return v
	}
	return nil
}
