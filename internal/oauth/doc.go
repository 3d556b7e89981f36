// Package oauth makes toolfold an OAuth 2.1 resource server, as the MCP
// authorization spec describes it: it publishes protected resource metadata
// (RFC 9728) naming the configured authorization servers, validates the
// access tokens they issue, and maps a token's claims to what the caller may
// reach (http.auth.oauth.rules).
//
// A JWT access token is checked against its issuer's keys (JWKS), found
// through the issuer's metadata (RFC 8414, or OpenID discovery), kept, and
// fetched again every jwksRefresh or at once when a token names a key the
// set lacks (at most once a minute per issuer, so forged key IDs cannot make
// toolfold hammer the provider). iss must be a configured issuer, aud must
// name the resource (RFC 8707), exp must be present and not past, nbf not
// ahead. A token that is not a JWT is asked about at the issuer's
// introspection endpoint (RFC 7662) when one is configured, within a rate,
// a bound on questions in flight, and a memory of tokens refused.
//
// Every refusal is an *Error carrying the HTTP status, the RFC 6750 error
// code and one sentence for the caller that says what to fix; the token
// itself never appears in an error or a log. Tokens are never passed on:
// toolfold talks to its sources with its own credentials.
//
// The package knows nothing of toolfold's HTTP routes: internal/httpapi
// asks Verify and serves Metadata.
package oauth
