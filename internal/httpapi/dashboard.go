package httpapi

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/tokens"
	"github.com/toolfold/toolfold/internal/trust"
)

//go:embed dashboard.html
var dashboardSource string

// dashboardTemplate is parsed once; it is read-only after that.
var dashboardTemplate = template.Must(template.New("dashboard").Funcs(template.FuncMap{
	"indent": func(depth int) int { return 8 + 20*depth }, // pixels
	"join":   func(s []string) string { return strings.Join(s, ", ") },
	"quoted": func(s []string) string { return "“" + strings.Join(s, "” and “") + "”" },
	"pct":    func(f float64) string { return fmt.Sprintf("%.1f %%", 100*f) },
	"bar": func(counts []int) string { // calls per minute as block characters
		peak := 0
		for _, c := range counts {
			peak = max(peak, c)
		}
		levels := []rune(" ▁▂▃▄▅▆▇█")
		var b strings.Builder
		for _, c := range counts {
			i := 0
			if peak > 0 && c > 0 {
				i = 1 + (c*(len(levels)-2))/peak
			}
			b.WriteRune(levels[i])
		}
		return b.String()
	},
	"inc": func(i int) int { return i + 1 },
	"ago": func(t time.Time) string { // how long ago, to the second
		return time.Since(t).Round(time.Second).String() + " ago"
	},
	"clock":  func(t time.Time) string { return t.UTC().Format("15:04:05") + " UTC" },
	"failed": func(s SourceStatus) bool { return s.State == "failed" || s.Error != "" },
}).Parse(dashboardSource))

// dashboardData is what the page shows.
type dashboardData struct {
	Status  string
	Tools   int
	Sources []SourceStatus
	// Unsandboxed names the stdio servers that run with the user's rights.
	Unsandboxed []string
	Tree        GroupTree
	Access      Access
	Refresh     int // seconds; 0: the page does not reload itself
	Operator    bool
	Sessions    []SessionInfo
	Activity    []ToolActivity
	// Failures are recent traced calls that did not end ok.
	Failures []CallFailure
	Modes    []ModeCost
	ModesErr string
	// Queries are the query box's phrasings; Boxes what its inputs show
	// (the phrasings, and an empty box for another while there is room).
	Queries []string
	Boxes   []string
	Found   []FoundTool
	FindErr string
	HasFind bool
	// Pins is the trust state, nil without a trust gate.
	Pins *trust.Report
	// GroupNotes say, for a group with no tools of its own, why.
	GroupNotes map[string]string
	// ConfigApplied is when the config now serving was applied; Reload
	// the last reload's outcome (problems for operators only).
	ConfigApplied time.Time
	Reload        *ReloadStatus
}

// ModeCost is what the first tools/list of a mode puts in context.
type ModeCost struct {
	Mode   string
	Tools  int
	Tokens int
	OfFlat float64
	Saved  int
}

// dashboardRefresh is how often the page reloads itself while nobody is
// using its query box.
const dashboardRefresh = 10

// dashboardPolicy allows the page its inline style and forms sent back to
// itself (the query box, a GET), and nothing else: no script, no frames,
// no loads from anywhere.
const dashboardPolicy = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// maxQuery bounds each of the query box's inputs.
const maxQuery = 500

// maxPhrasings is how many phrasings find_tools ranks in one call, and so
// how many boxes the query form offers.
const maxPhrasings = 3

func (a *API) serveDashboard(w http.ResponseWriter, r *http.Request) {
	cat, m, ok := a.measuredCatalog(w)
	if !ok {
		return
	}
	access := accessOf(r)
	all := a.sources()
	d := dashboardData{Status: healthOf(all), Sources: visibleSources(all, cat, access), Tree: BuildGroupTree(cat, m, access), Access: access,
		ConfigApplied: a.configApplied(), Reload: a.lastReload(r)}
	d.Unsandboxed = unsandboxed(d.Sources)
	if cat != nil {
		for _, t := range cat.Tools() {
			if access.AllowsTool(t) {
				d.Tools++
			}
		}
	}
	// Other clients' sessions, every tool's activity and the whole
	// catalog's ranking are for an operator, not for a token limited to
	// part of the catalog.
	d.Operator = !access.Limited()
	if d.Operator {
		a.operatorView(r, cat, &d)
	}
	if len(d.Queries) == 0 {
		d.Refresh = dashboardRefresh
	}
	d.GroupNotes = groupNotes(cat)
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

// operatorView fills in sessions, activity, the context per mode and the
// query box's ranking.
func (a *API) operatorView(r *http.Request, cat *catalog.Catalog, d *dashboardData) {
	if a.opts.Sessions != nil {
		d.Sessions = a.opts.Sessions()
	}
	if a.opts.Activity != nil {
		d.Activity = a.opts.Activity.Recent()
		d.Failures = a.opts.Activity.Failures()
	}
	if a.opts.InitialTools != nil && cat != nil {
		d.Modes, d.ModesErr = a.modeCosts.get(cat, a.opts.InitialTools)
	}
	d.HasFind = a.opts.Find != nil
	if a.opts.Pins != nil && d.Operator {
		rep := a.opts.Pins.Report()
		d.Pins = &rep
	}
	// Every box sends q; blank ones are left out. More than find_tools
	// ranks is its refusal to show.
	for _, q := range r.URL.Query()["q"] {
		q = strings.TrimSpace(q)
		if len(q) > maxQuery {
			q = q[:maxQuery]
		}
		if q != "" {
			d.Queries = append(d.Queries, q)
		}
	}
	d.Boxes = slices.Clone(d.Queries)
	for len(d.Boxes) < 2 || (len(d.Boxes) < maxPhrasings && d.Boxes[len(d.Boxes)-1] != "") {
		d.Boxes = append(d.Boxes, "")
	}
	if len(d.Queries) > 0 && d.HasFind {
		found, err := a.opts.Find(d.Queries, 10)
		if err != nil {
			d.FindErr = err.Error()
		}
		d.Found = found
	}
}

// groupNotes says why each group without tools of its own has none: its
// tools are in its sub-groups, its source failed or is still starting, or
// its rules match no tool.
func groupNotes(cat *catalog.Catalog) map[string]string {
	notes := map[string]string{}
	if cat == nil {
		return notes
	}
	for _, g := range cat.Groups() {
		if len(g.Tools) > 0 {
			continue
		}
		var note string
		switch failed := cat.GroupUnavailable(g.ID); {
		case len(g.Children) > 0:
			note = g.Default.String() + ": its tools are in its sub-groups"
		case len(failed) > 0:
			note = "no tools: its source " + strings.Join(failed, ", ") + " failed to start (see Sources)"
		case cat.GroupPending(g.ID):
			note = "no tools yet: its source is still starting"
		default:
			note = "no tools: its rules match none of the catalog's tools"
		}
		notes[string(g.ID)] = note
	}
	return notes
}

// modeCostCache measures the modes once per catalog.
type modeCostCache struct {
	mu    sync.Mutex
	cat   *catalog.Catalog
	costs []ModeCost
	err   string
}

func (c *modeCostCache) get(cat *catalog.Catalog, render func(string) ([]*mcp.Tool, error)) ([]ModeCost, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cat == cat {
		return c.costs, c.err
	}
	c.cat, c.costs, c.err = cat, nil, ""
	flat := 0
	for _, mode := range []string{"flat", "groups", "grouped", "search"} {
		tools, err := render(mode)
		if err != nil {
			c.err = fmt.Sprintf("the %s mode could not be measured: %v", mode, err)
			return nil, c.err
		}
		n, err := tokens.ToolsCost(tools)
		if err != nil {
			c.err = fmt.Sprintf("the %s mode could not be measured: %v", mode, err)
			return nil, c.err
		}
		if mode == "flat" {
			flat = n
		}
		c.costs = append(c.costs, ModeCost{Mode: mode, Tools: len(tools), Tokens: n, OfFlat: float64(n) / float64(max(flat, 1)), Saved: flat - n})
	}
	return c.costs, c.err
}
