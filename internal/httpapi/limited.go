package httpapi

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
)

// LimitedViews serves /mcp to a token limited to some groups or to
// read-only tools through a gateway over only what it may reach (same mode,
// same meta-tools), and to every other request through next.
func LimitedViews(next http.Handler, limited func(groups []string, readOnly bool) (http.Handler, error), logger *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		access, ok := AccessFromContext(r.Context())
		if !ok || !access.Limited() {
			next.ServeHTTP(w, r)
			return
		}
		h, err := limited(access.Groups, access.ReadOnly)
		if err != nil {
			// A token naming a group the catalog does not have (yet):
			// the operator's config, not the client, must change.
			logger.Warn("cannot serve a limited token its view", "token", access.TokenName, "err", err)
			fix := "fix the token's groups in http.auth.tokens"
			if access.Subject != "" {
				fix = "fix the groups of http.auth.oauth.rules"
			}
			http.Error(w, fmt.Sprintf("this token is limited to %s, which toolfold cannot serve: %v; %s", describeLimit(access), err, fix), http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func describeLimit(a Access) string {
	what := "read-only tools"
	if len(a.Groups) > 0 {
		what = "the groups " + strings.Join(a.Groups, ", ")
		if a.ReadOnly {
			what += " (read-only tools)"
		}
	}
	return what
}
