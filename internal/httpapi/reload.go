package httpapi

import (
	"fmt"
	"net/http"
	"time"
)

// ReloadStatus is the outcome of one config reload: what asked for it, the
// result (refused, needs_restart, unchanged…), when, and, when refused, the
// problems in check's file:line form.
type ReloadStatus struct {
	Trigger  string    `json:"trigger"`
	Result   string    `json:"result"`
	At       time.Time `json:"at"`
	Problems []string  `json:"problems,omitempty"`
	// Added, Removed and Changed name the MCP servers an applied reload
	// started, stopped and restarted; the others kept running.
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	Changed []string `json:"changed,omitempty"`
	// NeedsRestart names the settings the new config changes that apply
	// only after a restart; the rest of it was applied.
	NeedsRestart []string `json:"needsRestart,omitempty"`
	// Error says why a valid config could not be applied (result failed).
	Error string `json:"error,omitempty"`
	// Applied is when the config now serving was applied: at start, or
	// by the last reload that applied one.
	Applied time.Time `json:"applied,omitzero"`
}

// serveReload runs a reload for an operator (POST /api/reload) and answers
// its outcome; a refused config is a 200 too, since the gateway did what
// was asked and kept serving: the body says why it refused.
func (a *API) serveReload(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s only answers POST, not %s", r.URL.Path, r.Method))
		return
	}
	writeJSON(w, http.StatusOK, a.opts.Reload())
}

// lastReload is the healthz field: nil before the first reload. Problems
// quote the config, so only operators see them.
func (a *API) lastReload(r *http.Request) *ReloadStatus {
	if a.opts.LastReload == nil {
		return nil
	}
	st := a.opts.LastReload()
	if st == nil {
		return nil
	}
	if access, ok := AccessFromContext(r.Context()); ok && !access.Admin {
		st.Problems = nil
	}
	return st
}

// configApplied is when the config now serving was applied, zero when
// unknown.
func (a *API) configApplied() time.Time {
	if a.opts.ConfigApplied == nil {
		return time.Time{}
	}
	return a.opts.ConfigApplied().UTC()
}
