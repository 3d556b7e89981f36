package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/oauth"
)

// Options say where the API reads what it serves. Only Catalog is
// required.
type Options struct {
	// MCP serves /mcp: the gateway's streamable HTTP handler. Nil leaves
	// /mcp unserved (404).
	MCP http.Handler
	// Catalog returns the catalog being served now. It is called on every
	// request, because the catalog is replaced when upstream servers finish
	// discovery. It may return nil before the first catalog exists. It
	// must return the same pointer until the catalog changes: costs are
	// kept per catalog pointer.
	Catalog func() *catalog.Catalog
	// Measure returns the context cost of a catalog's tools. It runs once
	// per catalog; nil means MeasureFlat.
	Measure func(*catalog.Catalog) (*Measurement, error)
	// Sources returns every source's state now; nil means there are no
	// sources worth reporting.
	Sources func() []SourceStatus
	// GroupHandler builds an MCP handler that serves one group alone,
	// enabled; with readOnly, only its read-only tools. The API checks that
	// the group exists and that the request's token may reach it before it
	// asks, and keeps each handler for its life, so the handler must follow
	// catalog changes itself. An error wrapping ErrNotAllowed is a 403
	// (say, read-only endpoints are not offered); any other is a 500 and
	// is asked again next time. Nil leaves /mcp/<group> unserved (404).
	GroupHandler func(group string, readOnly bool) (http.Handler, error)
	// Tokens, when not empty, are the bearer tokens of which every request
	// must carry one (http.auth.tokens).
	Tokens []config.TokenConfig
	// OAuth, when set, also accepts access tokens of the configured
	// authorization servers (http.auth.oauth) and serves the protected
	// resource metadata; see oauth.go.
	OAuth *oauth.Server
	// AllowedOrigins are browser origins accepted besides loopback ones
	// (http.allowedOrigins); "*" accepts every origin.
	AllowedOrigins []string
	// Logger receives refusals and failures; nil discards them.
	Logger *slog.Logger
	// Metrics serves /metrics (Prometheus); nil leaves the route out.
	Metrics http.Handler

	// What the dashboard shows besides the catalog; each may be nil.

	// Sessions lists the live client sessions.
	Sessions func() []SessionInfo
	// Activity counts recent calls per tool; feed it as a gateway observer.
	Activity *Activity
	// InitialTools renders the first tools/list of a mode (flat, groups,
	// grouped, search), for the context each mode saves.
	InitialTools func(mode string) ([]*mcp.Tool, error)
	// Find ranks tools for one to three phrasings of a need as find_tools
	// does, fusing their rankings.
	Find func(phrasings []string, limit int) ([]FoundTool, error)
	// Pins serves /api/pins and the dashboard's pins; nil leaves them out.
	Pins *Pins

	// Reload, when set, serves POST /api/reload (operators only): it
	// validates the config on disk and returns the outcome.
	Reload func() ReloadStatus
	// LastReload, when set, is the last reload's outcome for /healthz;
	// it returns nil before the first.
	LastReload func() *ReloadStatus
	// ConfigApplied, when set, is when the config now serving was
	// applied (at start, or by the last reload that applied one), for
	// /healthz and the dashboard.
	ConfigApplied func() time.Time
}

// SessionInfo is one live client session on the dashboard.
type SessionInfo struct {
	ID, Client, ClientVersion, Protocol, Mode string
	// Enabled lists the groups the client enabled; nil when its list never
	// changes (every mode but groups).
	Enabled []string
	// LastSeen is when an HTTP session's last request began or ended (zero
	// over stdio); Idle marks one with no request in flight for a while,
	// whose client may have gone without closing it.
	LastSeen time.Time
	Idle     bool
}

// FoundTool is one ranked tool of the dashboard's query box.
type FoundTool struct {
	Name, Group, Description string
	Score                    float64
}

// ErrNotAllowed, wrapped in an error from Options.GroupHandler, refuses the
// endpoint to the request (403) with the error's own words.
var ErrNotAllowed = errors.New("not allowed")

// API serves toolfold's HTTP routes. Build it with New.
type API struct {
	opts   Options
	log    *slog.Logger
	tokens tokenSetPtr
	// oauth and origins are swapped whole by a config reload (SetOAuth,
	// SetOrigins); each request loads them once.
	oauth   atomic.Pointer[oauth.Server]
	origins atomic.Pointer[originPolicy]
	mux     *http.ServeMux

	measured  measureCache
	groups    groupHandlerCache
	modeCosts modeCostCache
}

var _ http.Handler = (*API)(nil)

// New checks the options and prepares the routes. Nothing is measured or
// built until a request needs it.
func New(opts *Options) (*API, error) {
	if opts == nil || opts.Catalog == nil {
		return nil, errors.New("httpapi: Options.Catalog is required: the API reads the catalog it shows through it")
	}
	a := &API{opts: *opts, log: opts.Logger}
	a.oauth.Store(opts.OAuth)
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.opts.Measure == nil {
		a.opts.Measure = MeasureFlat
	}
	var err error
	if err = a.tokens.set(opts.Tokens); err != nil {
		return nil, err
	}
	if err = a.SetOrigins(opts.AllowedOrigins); err != nil {
		return nil, err
	}

	a.mux = http.NewServeMux()
	a.mux.Handle("/mcp", a.mcpHandler())
	a.mux.HandleFunc("/mcp/{group}", a.serveGroupMCP)
	a.mux.Handle("/healthz", readOnlyMethods(a.serveHealth))
	a.mux.Handle("/api/groups", a.adminOnly(readOnlyMethods(a.serveGroups)))
	a.mux.Handle("/api/tools", a.adminOnly(readOnlyMethods(a.serveTools)))
	if a.opts.Reload != nil {
		a.mux.Handle("/api/reload", a.adminOnly(http.HandlerFunc(a.serveReload)))
	}
	a.mux.Handle("/{$}", a.adminOnly(readOnlyMethods(a.serveDashboard)))
	if opts.Pins != nil {
		a.mux.Handle("/api/pins", a.adminOnly(http.HandlerFunc(a.servePins)))
	}
	if opts.Metrics != nil {
		metrics := opts.Metrics
		a.mux.Handle("/metrics", a.adminOnly(readOnlyMethods(func(w http.ResponseWriter, r *http.Request) {
			// Metrics name every source and tool: only a caller who
			// reaches everything may read them.
			if accessOf(r).Limited() {
				writeError(w, http.StatusForbidden, "/metrics covers every source and tool, and this token reaches only part of them; use a token that is not limited to groups or read-only")
				return
			}
			metrics.ServeHTTP(w, r)
		})))
	}
	a.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("there is nothing at %s; toolfold serves /mcp, /mcp/<group>, /healthz, /api/groups, /api/tools and the dashboard at /", r.URL.Path))
	})
	return a, nil
}

// ServeHTTP checks Host, Origin and the bearer token (see the package
// documentation), then routes the request. The checks are made in admit,
// whose frame is gone before the request is routed: a session's event
// stream parks its goroutine with this frame on the stack for the
// session's life.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r = a.admit(w, r); r != nil {
		a.mux.ServeHTTP(w, r)
	}
}

// admit returns the request to route (with its caller's access), or nil
// when it answered r itself.
func (a *API) admit(w http.ResponseWriter, r *http.Request) *http.Request {
	if o := a.oauth.Load(); o != nil && o.IsMetadataPath(r.URL.Path) {
		// Public discovery data (RFC 9728), readable from any origin.
		o.MetadataHandler().ServeHTTP(w, r)
		return nil
	}
	if !a.checkHost(w, r) || !a.checkOrigin(w, r) {
		return nil
	}
	if isPreflight(r) {
		answerPreflight(w)
		return nil
	}
	if a.tokens.load().enabled() && isOAuthDiscovery(r.URL.Path) {
		writeError(w, http.StatusNotFound, noOAuth)
		return nil
	}
	r, ok := a.authenticate(w, liftFormToken(r))
	if !ok {
		return nil
	}
	return r
}

func (a *API) mcpHandler() http.Handler {
	if a.opts.MCP != nil {
		return withTokenInfo(a.opts.MCP)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "this toolfold serves no MCP endpoint at /mcp")
	})
}

// readOnlyMethods answers 405 to anything but GET and HEAD. The API only
// reads; its request bodies are never read.
func readOnlyMethods(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s only answers GET and HEAD, not %s", r.URL.Path, r.Method))
			return
		}
		if r.Method == http.MethodHead {
			w = headOnly{w}
		}
		h(w, r)
	})
}

// headOnly drops the body of an answer to HEAD. net/http does too, but
// only on its own connections; this keeps any wrapper or recorder honest.
type headOnly struct{ http.ResponseWriter }

func (headOnly) Write(p []byte) (int, error) { return len(p), nil }

// accessOf returns the request's access; everything when auth is off.
func accessOf(r *http.Request) Access {
	access, _ := AccessFromContext(r.Context())
	return access
}

func (a *API) serveHealth(w http.ResponseWriter, r *http.Request) {
	all := a.sources()
	cat := a.opts.Catalog()
	// The status sums up every source, whoever asks: it is the state of
	// the server, not of one token's view of it.
	h := Health{Status: healthOf(all), Sources: visibleSources(all, cat, accessOf(r)), Reload: a.lastReload(r), ConfigApplied: a.configApplied()}
	h.Unsandboxed = unsandboxed(h.Sources)
	if cat != nil {
		access := accessOf(r)
		for _, t := range cat.Tools() {
			if access.AllowsTool(t) {
				h.Tools++
			}
		}
		for _, g := range cat.Groups() {
			if access.AllowsGroup(g) {
				h.Groups++
			}
		}
	}
	writeJSON(w, http.StatusOK, h)
}

// sources asks for the sources' states; never nil.
func (a *API) sources() []SourceStatus {
	if a.opts.Sources == nil {
		return []SourceStatus{}
	}
	if s := a.opts.Sources(); s != nil {
		return s
	}
	return []SourceStatus{}
}

func (a *API) serveGroups(w http.ResponseWriter, r *http.Request) {
	cat, m, ok := a.measuredCatalog(w)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, BuildGroupTree(cat, m, accessOf(r)))
}

// serveTools lists the catalog, or with ?group=G the tools of G and the
// groups inside it.
func (a *API) serveTools(w http.ResponseWriter, r *http.Request) {
	cat, m, ok := a.measuredCatalog(w)
	if !ok {
		return
	}
	access := accessOf(r)
	if cat == nil {
		writeJSON(w, http.StatusOK, []ToolRow{})
		return
	}
	tools := cat.Tools()
	if name := r.URL.Query().Get("group"); name != "" {
		g, ok := a.findGroup(w, cat, access, name, "/api/tools?group=")
		if !ok {
			return
		}
		tools = ToolsUnder(cat, g)
	}
	writeJSON(w, http.StatusOK, BuildToolRows(tools, m, access))
}

// findGroup looks up a group the access reaches, answering 404 with the
// nearest such name otherwise. A group the token may not reach is
// reported as unknown, so a limited token learns nothing of other groups.
func (a *API) findGroup(w http.ResponseWriter, cat *catalog.Catalog, access Access, name, route string) (*catalog.Group, bool) {
	if g, ok := cat.Group(catalog.GroupID(name)); ok && access.AllowsGroup(g) {
		return g, true
	}
	for _, x := range cat.Excluded() {
		if string(x.ID) == name && (len(access.Groups) == 0 || slices.Contains(access.Groups, name)) {
			writeError(w, http.StatusNotFound, fmt.Sprintf("the group %q is excluded in this deployment (by the config, an MCP_GROUP_ variable or --exclude-groups), so it is not served", name))
			return nil, false
		}
	}
	var reachable []string
	for _, g := range cat.Groups() {
		if access.AllowsGroup(g) {
			reachable = append(reachable, string(g.ID))
		}
	}
	msg := fmt.Sprintf("there is no group %q", name)
	if near := catalog.Nearest(name, reachable, 1); len(near) > 0 {
		msg += fmt.Sprintf(" (did you mean %q? that is %s%s)", near[0], route, near[0])
	}
	writeError(w, http.StatusNotFound, msg+"; /api/groups lists the groups")
	return nil, false
}

// serveGroupMCP serves MCP for one group alone, through a handler the
// gateway builds on first use.
func (a *API) serveGroupMCP(w http.ResponseWriter, r *http.Request) {
	if a.opts.GroupHandler == nil {
		writeError(w, http.StatusNotFound, "this toolfold serves no per-group MCP endpoints; use /mcp")
		return
	}
	cat := a.opts.Catalog()
	if cat == nil {
		writeError(w, http.StatusServiceUnavailable, "toolfold has no catalog yet (its sources are still being discovered); try again in a moment")
		return
	}
	access := accessOf(r)
	g, ok := a.findGroup(w, cat, access, r.PathValue("group"), "/mcp/")
	if !ok {
		return
	}
	h, err := a.groups.get(string(g.ID), access.ReadOnly, a.opts.GroupHandler)
	if errors.Is(err, ErrNotAllowed) {
		a.log.Info("refused a group endpoint to a token", "group", g.ID, "token", access.TokenName, "err", err)
		writeError(w, http.StatusForbidden, err.Error())
		return
	}
	if err != nil {
		a.log.Error("cannot serve a group alone", "group", g.ID, "err", err)
		writeError(w, http.StatusInternalServerError, fmt.Sprintf("toolfold could not build the MCP endpoint of group %q: %v", g.ID, err))
		return
	}
	withTokenInfo(h).ServeHTTP(w, r)
}

// measuredCatalog returns the current catalog with its costs. A nil
// catalog (nothing discovered yet) is not an error: it shows as empty.
func (a *API) measuredCatalog(w http.ResponseWriter) (*catalog.Catalog, *Measurement, bool) {
	cat := a.opts.Catalog()
	if cat == nil {
		return nil, &Measurement{}, true
	}
	m, err := a.measured.get(cat, a.opts.Measure)
	if err != nil {
		a.log.Error("cannot measure the catalog's context cost", "err", err)
		writeError(w, http.StatusInternalServerError, fmt.Sprintf("toolfold could not measure the context cost of its tools: %v", err))
		return nil, nil, false
	}
	return cat, m, true
}

// measureCache keeps the measurement of the latest catalog. Measuring
// tokenizes every tool, so it happens once per catalog, under the lock, so
// that concurrent first requests wait for one measurement instead of each
// making their own.
type measureCache struct {
	mu  sync.Mutex
	cat *catalog.Catalog
	m   *Measurement
}

func (c *measureCache) get(cat *catalog.Catalog, measure func(*catalog.Catalog) (*Measurement, error)) (*Measurement, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cat == cat && c.m != nil {
		return c.m, nil
	}
	m, err := measure(cat)
	if err != nil {
		return nil, err // not kept: the next request tries again
	}
	c.cat, c.m = cat, m
	return m, nil
}

// groupHandlerCache keeps one handler per group and read-only flag for the
// API's life. It is not dropped when the catalog changes: a handler follows
// the catalog itself (the gateway's do, through Gateway.Update), so its
// sessions survive discovery. A group that disappears is refused before
// its handler is looked up.
type groupHandlerCache struct {
	mu       sync.Mutex
	handlers map[groupKey]http.Handler
}

type groupKey struct {
	group    string
	readOnly bool
}

func (c *groupHandlerCache) get(group string, readOnly bool, build func(string, bool) (http.Handler, error)) (http.Handler, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := groupKey{group, readOnly}
	if h, ok := c.handlers[key]; ok {
		return h, nil
	}
	h, err := build(group, readOnly)
	if err != nil {
		return nil, err // not kept: the next request tries again
	}
	if h == nil {
		return nil, errors.New("the gateway returned no handler")
	}
	if c.handlers == nil {
		c.handlers = map[groupKey]http.Handler{}
	}
	c.handlers[key] = h
	return h, nil
}

// writeJSON answers with indented JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		// Every body is built from plain structs; failing here is a bug.
		status = http.StatusInternalServerError
		body, _ = json.Marshal(map[string]string{"error": "toolfold could not encode its answer: " + err.Error()})
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	body = append(body, '\n')
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

// writeError answers {"error": msg}.
func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}
