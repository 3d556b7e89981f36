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
	return &limitedViews{next: next, limited: limited, logger: logger}
}

// limitedViews is LimitedViews' handler. It is kept small, its work done
// in viewFor, and is a type rather than an http.HandlerFunc (whose
// ServeHTTP is one more frame): a session's event stream (GET /mcp) parks
// its goroutine with this frame on the stack for the session's life, and
// the collector shrinks a parked stack only while it uses under a quarter
// of it.
type limitedViews struct {
	next    http.Handler
	limited func(groups []string, readOnly bool) (http.Handler, error)
	logger  *slog.Logger
}

func (l *limitedViews) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h := viewFor(w, r, l.next, l.limited, l.logger); h != nil {
		h.ServeHTTP(w, r)
	}
}

// viewFor returns the handler that serves r: next, or the limited view of
// r's token; nil when it answered r itself, refusing a view it cannot make.
func viewFor(w http.ResponseWriter, r *http.Request, next http.Handler, limited func(groups []string, readOnly bool) (http.Handler, error), logger *slog.Logger) http.Handler {
	access, ok := AccessFromContext(r.Context())
	if !ok || !access.Limited() {
		return next
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
		return nil
	}
	return h
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
