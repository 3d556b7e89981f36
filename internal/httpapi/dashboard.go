package httpapi

import (
	"bytes"
	_ "embed"
	"html/template"
	"net/http"
)

//go:embed dashboard.html
var dashboardSource string

// dashboardTemplate is parsed once; it is read-only after that.
var dashboardTemplate = template.Must(template.New("dashboard").Funcs(template.FuncMap{
	"indent": func(depth int) int { return 8 + 20*depth }, // pixels
}).Parse(dashboardSource))

// dashboardData is what the page shows.
type dashboardData struct {
	Status  string
	Tools   int
	Sources []SourceStatus
	Tree    GroupTree
	Access  Access
}

// dashboardPolicy allows the page its inline style and nothing else: no
// script, no frames, no forms, no loads from anywhere.
const dashboardPolicy = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func (a *API) serveDashboard(w http.ResponseWriter, r *http.Request) {
	cat, m, ok := a.measuredCatalog(w)
	if !ok {
		return
	}
	access := accessOf(r)
	all := a.sources()
	d := dashboardData{Status: healthOf(all), Sources: visibleSources(all, cat, access), Tree: BuildGroupTree(cat, m, access), Access: access}
	if cat != nil {
		for _, t := range cat.Tools() {
			if access.AllowsTool(t) {
				d.Tools++
			}
		}
	}
	// Render into a buffer so a template failure is a clean 500, not half
	// a page.
	var page bytes.Buffer
	if err := dashboardTemplate.Execute(&page, d); err != nil {
		a.log.Error("cannot render the dashboard", "err", err)
		writeError(w, http.StatusInternalServerError, "toolfold could not render its dashboard: "+err.Error())
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", dashboardPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	w.Write(page.Bytes())
}
