package oauth

import (
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// IsMetadataPath reports whether a request path asks for the protected
// resource metadata: the path RFC 9728 derives from the resource, or the
// bare well-known path (clients that probe the server's root).
func (s *Server) IsMetadataPath(path string) bool {
	return path == s.metaPath || path == "/.well-known/oauth-protected-resource" ||
		strings.HasPrefix(path, "/.well-known/oauth-protected-resource/")
}

// MetadataHandler serves the protected resource metadata (RFC 9728). It is
// public: serve it before authentication.
func (s *Server) MetadataHandler() http.Handler {
	return auth.ProtectedResourceMetadataHandler(&s.meta)
}

// Challenge is the WWW-Authenticate value of a refusal: always the
// resource_metadata parameter (MCP authorization), and the error code
// when a token was sent (RFC 6750 §3.1).
func (s *Server) Challenge(code string) string {
	c := `Bearer resource_metadata="` + s.metaURL + `"`
	if len(s.cfg.Scopes) > 0 {
		c += `, scope="` + strings.Join(s.cfg.Scopes, " ") + `"`
	}
	if code != "" {
		c += `, error="` + code + `"`
	}
	return c
}
