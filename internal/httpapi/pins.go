package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/toolfold/toolfold/internal/trust"
)

// Pins serves and approves the trust gate's state (see internal/trust).
type Pins struct {
	// Report is the state now, as /api/pins and the dashboard show it.
	Report func() trust.Report
	// Approve re-pins server's held items (all when items is empty); who
	// names the caller in the audit line. It returns what was approved.
	Approve func(server string, items []string, who string) (any, error)
}

// ErrPinsRequest marks an approval the caller got wrong (no such server or
// item, a read-only lock): a 400 with its message, not a 500.
var ErrPinsRequest = errors.New("bad approval")

// approveRequest is POST /api/pins.
type approveRequest struct {
	Server string   `json:"server"`
	Items  []string `json:"items,omitempty"`
}

// servePins answers GET /api/pins with the report and POST with an
// approval. Reading is an operator's route like the others; approving
// changes what the model reads, so it takes an admin token even where the
// other routes are open (no auth on loopback): a page in the operator's
// browser cannot send one, so it cannot approve behind their back.
func (a *API) servePins(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		if r.Method == http.MethodHead {
			w = headOnly{w}
		}
		writeJSON(w, http.StatusOK, a.opts.Pins.Report())
	case http.MethodPost:
		access, ok := AccessFromContext(r.Context())
		if !ok || !access.Admin || access.Limited() {
			writeError(w, http.StatusForbidden, "approving pins needs an admin token that is not limited to groups or read-only: add one with \"admin\": true under http.auth.tokens and send it as Authorization: Bearer, or run toolfold pins approve SERVER [ITEM...] on the gateway's machine")
			return
		}
		var req approveRequest
		var err error
		form := isForm(r)
		if form {
			// The dashboard's approve button (see liftFormToken).
			r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
			if err = r.ParseForm(); err == nil {
				req.Server, req.Items = r.PostForm.Get("server"), r.PostForm["item"]
			}
		} else {
			var body []byte
			body, err = io.ReadAll(io.LimitReader(r.Body, 64<<10))
			if err == nil {
				err = json.Unmarshal(body, &req)
			}
		}
		if err != nil || req.Server == "" {
			writeError(w, http.StatusBadRequest, `POST /api/pins takes {"server": "NAME", "items": ["ITEM", ...]} (no items: every held item of the server)`)
			return
		}
		res, err := a.opts.Pins.Approve(req.Server, req.Items, access.TokenName)
		if err != nil {
			status := http.StatusInternalServerError
			if errors.Is(err, ErrPinsRequest) {
				status = http.StatusBadRequest
			}
			writeError(w, status, fmt.Sprintf("approving pins of %s: %v", req.Server, err))
			return
		}
		if form {
			// Back to the dashboard, which now shows the item pinned.
			http.Redirect(w, r, "/#pins", http.StatusSeeOther)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"approved": res})
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("/api/pins answers GET (the state) and POST (an approval), not %s", r.Method))
	}
}

// isForm reports whether r is a form POST (the dashboard's approve button).
func isForm(r *http.Request) bool {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return r.Method == http.MethodPost && ct == "application/x-www-form-urlencoded"
}

// liftFormToken lets the dashboard's approve button authenticate: the page
// may run no script, so it cannot send an Authorization header, and the
// operator types the admin token into the form instead. The token goes
// where a header's would, and the one check (authenticate) judges it.
// A page on another site cannot do this: it does not know the token, and
// its Origin is refused before this runs. Only POST /api/pins is read
// so; the form is bounded like the JSON body.
func liftFormToken(r *http.Request) *http.Request {
	if r.URL.Path != "/api/pins" || !isForm(r) || r.Header.Get("Authorization") != "" {
		return r
	}
	r.Body = http.MaxBytesReader(nil, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		return r // refused by servePins: no server named
	}
	if tok := r.PostForm.Get("token"); tok != "" {
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	return r
}
