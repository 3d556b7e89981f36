// Package httpapi is the HTTP side of toolfold beside the MCP endpoint
// (docs/design.md#http): a health report, the group tree and the catalog as JSON, an
// MCP endpoint per group, and a small dashboard page. It is one
// http.Handler that cmd/toolfold mounts at the root of its server.
//
// # Reading through funcs
//
// Everything the API shows is read through the funcs in Options at request
// time, never copied at construction: the catalog is replaced when upstream
// servers finish discovery, and sources change state on their own. Token
// costs are measured once per catalog and kept until the catalog changes;
// MCP handlers for single groups are built once per group and kept, since
// the gateway keeps them current itself.
//
// # Security
//
// Every request passes three checks before it reaches a route, in this
// order, so that a page that is not allowed to talk to toolfold cannot
// even probe for tokens:
//
//  1. Host: on a loopback listener, a Host that is not a loopback name is
//     refused (403). A DNS-rebinding page reaches 127.0.0.1 under its own
//     name, and browsers send no Origin on a same-origin GET, so this is
//     the check that protects the read-only routes. The SDK's streamable
//     handler does the same for /mcp; this makes it hold everywhere.
//  2. Origin: a request that carries an Origin whose host is not loopback
//     and that is not listed in http.allowedOrigins is refused (403). An
//     allowed Origin gets CORS headers, so a browser client on a listed
//     origin can read the answers; preflight requests are answered here.
//  3. Bearer token, when http.auth.tokens is set: the Authorization header
//     must carry one of them (compared in constant time over fixed-length
//     digests). The matched token's limits travel in the request context
//     (AccessFromContext); /api, the dashboard and /mcp/<group> honour them
//     here, while /mcp is served to a limited token by a gateway over only
//     what it reaches (gateway.LimitedHandler, wired by toolfold serve).
//
// Token values never appear in logs or in error bodies: a token is named
// by its position in the config (http.auth.tokens[1]).
package httpapi
