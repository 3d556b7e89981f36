package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/meta"
	"github.com/toolfold/toolfold/internal/sdkshim"
	"github.com/toolfold/toolfold/internal/view"
	"go.opentelemetry.io/otel/trace"
)

// DefaultRefreshingClients are the clientInfo.name values of clients known
// to fetch their tool list again on notifications/tools/list_changed, so
// that auto mode can give them the groups mode. A trailing "*" matches any
// suffix; case is ignored. The list follows the community table of client
// capabilities (apify/mcp-client-capabilities, tools.listChanged) and
// leaves out clients reported not to act on the notification even where
// they announce it (Cursor). A client missing here still works: it gets the
// search mode, whose list never changes.
var DefaultRefreshingClients = []string{
	"claude-code",
	"Visual Studio Code*", "Visual-Studio-Code*",
	"Cline", "Kilo-Code", "opencode",
	"Windsurf", "windsurf-client",
	"Glama", "apify-mcp-client",
}

// DefaultSearchingClients are the clientInfo.name values of clients known
// to run their own tool search over the full list (Claude Code defers MCP
// tools behind its tool search once they outgrow a share of the context,
// VS Code folds large lists into virtual tool groups it expands itself,
// Codex searches its tools). auto gives them the flat list, with each tool's
// groups in _meta: hiding tools behind toolfold's meta-tools would put a
// second search in front of theirs. The same patterns as
// DefaultRefreshingClients; this list is consulted first.
var DefaultSearchingClients = []string{
	"claude-code",
	"Visual Studio Code*", "Visual-Studio-Code*",
	"codex*",
}

// DefaultListTTL is the ttlMs put on lists answered per request: how long a
// client may keep a list before asking again. Lists change only when the
// catalog does (an upstream finishing its start), which a client that
// listens hears of anyway.
const DefaultListTTL = time.Minute

// Options configure a gateway.
type Options struct {
	// Name and Version identify the server to clients.
	Name, Version string
	// Instructions are sent to clients at initialization.
	Instructions string
	// Mode is the presentation; the zero value is auto.
	Mode expose.Mode
	// Exposition is the default for groups that do not choose their own.
	Exposition catalog.Exposition
	// AnnotateDescriptions marks read-only and destructive tools.
	AnnotateDescriptions bool
	// Meta renames the meta-tools; empty names keep their defaults.
	Meta meta.Names
	// ResetTools offers reset_tools in the groups mode.
	ResetTools bool
	// RefreshingClients overrides DefaultRefreshingClients for auto mode.
	RefreshingClients []string
	// SearchingClients overrides DefaultSearchingClients for auto mode; an
	// empty, non-nil list means none.
	SearchingClients []string
	// ListTTL is the ttlMs of lists answered per request; zero means
	// DefaultListTTL, negative means 0 (always stale).
	ListTTL time.Duration
	// PrivateLists marks the lists as depending on the caller's
	// authorization (cacheScope "private"): set when tokens limit what a
	// client reaches. Lists that depend on the client's name (auto mode)
	// are private anyway.
	PrivateLists bool
	// NoByteForwarding sends every tools/call through the SDK's typed
	// path: no call is forwarded to a source as bytes. The byte paths keep
	// the typed path's promises (gate.go); this is for an operator who
	// wants the one path, or to tell the two apart when something is off.
	NoByteForwarding bool
	// AnswerBytesInFlight bounds the bytes of answers held for clients
	// that have not read them yet, over every client and path (budget.go);
	// an answer that would exceed it is replaced by an error saying so.
	// Zero means DefaultAnswerBytesInFlight; negative, no bound.
	AnswerBytesInFlight int64
	// Logger receives the gateway's logs; nil discards them.
	Logger *slog.Logger
	// Extras passes prompts, resources and completion through from the
	// sources; nil offers none.
	Extras Extras
	// ExtrasListChanged promises that whoever feeds the gateway calls
	// PromptsChanged and ResourcesChanged whenever the Extras' lists change;
	// only then does the gateway declare prompts.listChanged and
	// resources.listChanged to its clients.
	ExtrasListChanged bool
	// Observer hears of tool calls and sessions, for metrics; nil hears
	// nothing.
	Observer Observer
	// Building says the space given to New stands in for a catalog still
	// being built (a start that answers clients at once): every request
	// but initialize and ping waits for the first Update, at most as
	// long as a first tools/list waits for sources still starting, so
	// no client is answered from the stand-in while the real catalog is
	// moments away. See pending.go.
	Building bool
	// building is the gate a part's gateway shares with its parent's.
	building *buildGate
	// StartWait bounds how long a request waits for sources still starting
	// (the catalog's pending sources) when its answer depends on their
	// tools; zero means DefaultStartWait. See pending.go.
	StartWait time.Duration
	// InputWait is how long a call of a 2026-07-28 client that was asked
	// for input (an InputRequiredResult) waits for the client's retry
	// before its questions fail upstream; zero means DefaultInputWait.
	InputWait time.Duration
	// ToolsCost measures the context cost guidance reports per group; nil
	// estimates it (meta.EstimateToolsCost), which keeps a tokenizer out of
	// library servers.
	ToolsCost meta.ToolsCost
	// Tracer traces the requests the gateway serves and the calls it sends
	// sources (trace.go); nil traces nothing, at no cost. A client's trace
	// context is carried on to the source either way.
	Tracer trace.TracerProvider
	// TraceArguments lets what clients send to meta-tools (a find_tools
	// query, enable_tools groups) into span attributes; tool arguments
	// never go there.
	TraceArguments bool
}

// Observer hears what the gateway does, for metrics.
type Observer interface {
	// ToolCalled reports one tools/call: the wire tool, the meta-tool it
	// was called through (via: "call_tool", or "" when called directly),
	// the source that served it ("toolfold" for meta-tools, "" when refused
	// before reaching one), the outcome (ok, tool_error, crash, timeout,
	// unavailable, cancelled, refused or internal_error: toolfold failed
	// while answering) and how long it took.
	ToolCalled(tool, via, source, outcome string, took time.Duration)
	// SessionStarted reports a new session: a stdio connection or an HTTP
	// session. A request that carries no session (a 2026-07-28 client's,
	// or any on a stateless endpoint) is none.
	SessionStarted(mode string)
}

// Gateway serves one catalog to any number of clients.
type Gateway struct {
	// opts are the options New was given; the presentation among them
	// (look) is read from the state served now, which UpdateWith may
	// change.
	opts Options
	log  *slog.Logger
	// serverInfo is the server's implementation, encoded once for the
	// byte path's 2026-07-28 results (completion, raw.go).
	serverInfo []byte

	// built, when New was given a stand-in (Options.Building), opens at
	// the first Update; a part's gateway shares its parent's. See
	// pending.go.
	built *buildGate

	// updating serializes Update: the catalog swap and the sessions' move
	// to it are one step, so two updates cannot interleave them.
	updating sync.Mutex

	// cur is the catalog being served. Update replaces it as a whole, so a
	// request sees one consistent catalog from start to end.
	cur atomic.Pointer[state]

	// shared holds one session per static mode, serving every client of
	// that mode. A reload that adds a mode publishes a new map (under
	// updating); a mode's session stays for the clients it serves.
	shared atomic.Pointer[map[expose.Mode]*session]

	// perRequest serves the clients without a view: every 2026-07-28
	// client, clients of the groups extension and stateless groups-mode
	// clients. It decides what each request gets from that request alone.
	perRequest *session

	// groups are the endpoints serving one group alone.
	groups groupEndpoints

	// inputs holds the calls of 2026-07-28 clients waiting for the input
	// they were asked for.
	inputs *inputBroker

	// subs shares resource subscriptions among clients (nil without
	// Extras).
	subs *subscriptions

	// lists coalesces the announcements of changed prompt and resource
	// lists.
	lists listAnnouncer

	// updated is closed by each Update once every session serves the new
	// catalog, and replaced; requests waiting for pending sources watch it.
	updMu   sync.Mutex
	updated chan struct{}
	// waitHook, if set, hears each request that starts waiting for pending
	// sources (tests wait on it instead of sleeping).
	waitHook func()
	// trackHook, set by tests, runs between a session's making and its
	// tracking, where an Update can slip in.
	trackHook func()
	// answers is the answer budget (budget.go); nil: none.
	answers *answerBudget
	// panicHook, set by tests, runs where each path into a handler
	// recovers from panics (panics.go), to force one.
	panicHook func(path, method string)
	// life is what Shutdown stops (lifecycle.go).
	life lifecycle
	// maxListWait, if set, replaces MaxListWait (tests).
	maxListWait time.Duration

	mu sync.Mutex
	// live holds the sessions with a view of their own (the groups mode,
	// and a stdio client of the groups extension), from the moment one is
	// made until its client's session ends: whoever serves the session
	// forgets it then (forget), so Update reaches exactly the live ones.
	live map[*session]struct{}
	// httpSessions counts the HTTP sessions of this gateway and of the
	// endpoints made from it (made by the first HTTPHandler).
	httpSessions *sessionTable
	// tr traces requests; nil when tracing is off.
	tr *tracer
	// endpoint names this gateway's endpoint in metrics: "main", or a
	// part's (groupKey.endpoint).
	endpoint string
	// sdkLog is the logger of every SDK server and handler (sdkshim.Logger), and
	// caps what every server advertises (serverCapabilities: [1] for the
	// per-request server of a stdio connection): made once, not per
	// session.
	sdkLog *slog.Logger
	caps   [2]*mcp.ServerCapabilities
	// groupStreams tell the extension's 2026-07-28 HTTP clients that the
	// groups changed (groupstream.go).
	groupStreams groupStreams
}

// state is one catalog rendered for every mode the gateway serves.
type state struct {
	space *view.Space
	// look is the presentation this state was rendered with.
	look *look
	expo map[expose.Mode]*expose.Exposure
	disc map[expose.Mode]*meta.Discovery
	findIndex
	// ext is the catalog as the groups extension serves it.
	ext *extCatalog
	// groupsMeta are the groups mode's meta-tools for this state, made on
	// the first list that needs them (see metaTools).
	groupsMeta struct {
		once sync.Once
		m    *groupsMeta
	}
	// requestLists are the tool lists of per-request sessions, one per
	// presentation (presentation → map[string]*mcp.Tool), made on first
	// use and read, never changed, by every request after (renderRequest).
	requestLists sync.Map
}

// New prepares a gateway over space. It builds the exposures the mode can
// need up front, so naming problems surface before any client connects.
func New(space *view.Space, opts *Options) (*Gateway, error) {
	g := &Gateway{updated: make(chan struct{}), endpoint: "main"}
	if opts != nil {
		g.opts = *opts
	}
	if g.opts.Mode == "" {
		g.opts.Mode = expose.Auto
	}
	if g.opts.Name == "" {
		g.opts.Name = "toolfold"
	}
	g.tr = newTracer(&g.opts)
	g.serverInfo = serverInfo(&g.opts)
	g.life.init()
	g.inputs = newInputBroker(g.opts.InputWait)
	g.inputs.life, g.inputs.spawn = g.life.ctx, g.life.goTracked
	g.inputs.panicked = func(v any) { g.notePanic(pathTyped, "", v) }
	g.lists.delay = listChangedDelay
	g.log = g.opts.Logger
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	g.answers = newAnswerBudget(g.opts.AnswerBytesInFlight, g.log)
	if g.opts.Extras != nil {
		g.subs = newSubscriptions(g.opts.Extras, g.log)
		g.subs.spawn = g.life.goTracked
	}
	g.sdkLog = sdkshim.Logger(g.log)
	g.caps = [2]*mcp.ServerCapabilities{g.serverCapabilities(false), g.serverCapabilities(true)}
	if g.opts.Building {
		if g.opts.building == nil {
			g.opts.building = &buildGate{done: make(chan struct{})}
		}
		g.built = g.opts.building
	}
	lk := newLook(&g.opts)
	st, err := g.render(space, lk)
	if err != nil {
		return nil, err
	}
	g.cur.Store(st)
	g.shared.Store(&map[expose.Mode]*session{})
	g.shareModes(lk)
	g.perRequest = g.newSession(perRequestMode, nil)
	return g, nil
}

// render builds the exposures (and search indexes) of every mode lk
// serves.
func (g *Gateway) render(space *view.Space, lk *look) (*state, error) {
	st := &state{space: space, look: lk, expo: map[expose.Mode]*expose.Exposure{}, disc: map[expose.Mode]*meta.Discovery{}}
	var first *expose.Exposure  // whose flat wire tools the other modes share
	var indexed *meta.Discovery // whose search index the other modes share
	for _, m := range lk.modes {
		e, err := expose.Build(space, &expose.Options{
			Mode: m, Exposition: lk.exposition,
			AnnotateDescriptions: lk.annotate,
			Reserved:             lk.metaNamesFor(m),
			Share:                first,
		})
		if err != nil {
			return nil, fmt.Errorf("building the %s mode: %w", m, err)
		}
		if first == nil {
			first = e
		}
		st.expo[m] = e
		if m == expose.Search || (m == expose.Groups && lk.menu) {
			if indexed == nil {
				indexed = meta.NewDiscovery(lk.names, e, g.opts.ToolsCost)
				st.disc[m] = indexed
			} else {
				st.disc[m] = indexed.Over(e, g.opts.ToolsCost) // one index for every mode
			}
		}
	}
	ext, err := newExtCatalog(st.expo[expose.Groups])
	if err != nil {
		return nil, err
	}
	st.ext = ext
	return st, nil
}

// Update serves a new catalog from now on: when an upstream server
// finishes starting or its tools change. Every client keeps the groups it
// had enabled that still exist, and hears list_changed only if its own list
// changed. Calls in flight finish on the catalog they began with.
//
// Update is safe for concurrent use: updates run one at a time, in the
// order they take the gateway's update lock, and the last one to finish is
// the catalog every session serves. Callers need no lock of their own.
func (g *Gateway) Update(space *view.Space) error { return g.update(space, nil) }

// UpdateWith is Update with a new presentation: opts' Mode, Exposition,
// AnnotateDescriptions, Meta, ResetTools, RefreshingClients,
// SearchingClients, NoByteForwarding and AnswerBytesInFlight (a reloaded
// config's; the rest of opts is ignored) apply to the catalog space from the next request, in
// the same swap. New clients are presented by them; an open session keeps
// the mode it was given until its client reconnects, and hears
// list_changed if its own list changed (a renamed meta-tool, an exposition
// or annotation that reads differently).
func (g *Gateway) UpdateWith(space *view.Space, opts *Options) error {
	o := *opts
	if o.Mode == "" {
		o.Mode = expose.Auto
	}
	return g.update(space, newLook(&o))
}

// update serves space with lk's presentation (nil: the one served now).
func (g *Gateway) update(space *view.Space, lk *look) error {
	g.updating.Lock()
	defer g.updating.Unlock()
	if lk == nil {
		lk = g.look()
	}
	shared := g.sharedSessions()
	var modes []expose.Mode
	for m := range shared {
		modes = append(modes, m)
	}
	slices.Sort(modes)
	st, err := g.render(space, lk.keeping(modes, g.hasGroupsViews()))
	if err != nil {
		return err
	}
	g.answers.setLimit(lk.answerBytes)
	quiet := g.quietUpdate()
	prev := g.cur.Swap(st)
	for _, s := range shared {
		s.migrate(st, quiet)
	}
	g.shareModes(st.look)
	for _, s := range g.liveSessions() {
		s.migrate(st, quiet)
	}
	g.perRequest.migrate(st, quiet)
	g.updateGroups()
	g.built.open()
	g.announceUpdate()
	g.announceMovedExtras(prev, st)
	return nil
}

// Catalog returns the catalog being served now.
func (g *Gateway) Catalog() *catalog.Catalog { return g.cur.Load().space.Catalog() }

// Mode returns the configured mode (possibly auto).
func (g *Gateway) Mode() expose.Mode { return g.look().mode }

// Exposure returns the current exposure for a concrete mode, if the
// gateway serves it.
func (g *Gateway) Exposure(m expose.Mode) (*expose.Exposure, bool) {
	e, ok := g.cur.Load().expo[m]
	return e, ok
}

// Names returns the meta-tools' wire names.
func (g *Gateway) Names() meta.Names { return g.look().names }

// metaNamesFor lists the meta-tools a mode shows, which must not collide
// with tool or group names.
func (lk *look) metaNamesFor(m expose.Mode) []string {
	n := lk.names
	switch m {
	case expose.Groups:
		if !lk.menu {
			return nil // the extension's exposure lists no meta-tools
		}
		names := []string{n.Enable, n.Disable, n.Find, n.Call}
		if lk.resetTools {
			names = append(names, n.Reset)
		}
		return names
	case expose.Search:
		return []string{n.Find, n.Describe, n.Call, n.Guidance}
	}
	return nil
}

// sharedSessions is the shared session of each static mode served.
func (g *Gateway) sharedSessions() map[expose.Mode]*session { return *g.shared.Load() }

// shareModes makes the shared sessions of lk's static modes that do not
// have one yet. Called by New and under updating, after the state that
// renders them is served.
func (g *Gateway) shareModes(lk *look) {
	old := g.sharedSessions()
	next := maps.Clone(old)
	for _, m := range lk.modes {
		if _, ok := next[m]; !ok && m != expose.Groups {
			next[m] = g.newSession(m, nil)
		}
	}
	if len(next) != len(old) {
		g.shared.Store(&next)
	}
}

// hasGroupsViews reports whether a session of the groups mode is open:
// its meta-tools stay rendered whatever a reload made the mode.
func (g *Gateway) hasGroupsViews() bool {
	for _, s := range g.liveSessions() {
		if s.mode == expose.Groups {
			return true
		}
	}
	return false
}

// ClientInfo is what the gateway knows of a client before serving it (or,
// for a 2026-07-28 client, of one request).
type ClientInfo struct {
	Name            string
	ProtocolVersion string
	// Stateless is set when no connection outlives a request: on an HTTP
	// endpoint configured stateless. A 2026-07-28 client is treated so on
	// every transport, stdio included: its lists must not vary per
	// connection.
	Stateless bool
	// Extension is set when the client declared the groups extension
	// (io.modelcontextprotocol/groups).
	Extension bool
}

// statelessProtocol is the first protocol version without sessions.
const statelessProtocol = "2026-07-28"

// presentation is what a client gets: the README's table of who gets what.
type presentation struct {
	// mode is concrete: flat, grouped, search or groups.
	mode expose.Mode
	// extension lists the top-level tools only; groups/list and groups/get
	// disclose the rest.
	extension bool
	// stateless means no view: nothing a call does changes any list (the
	// groups mode's enable_tools then describes tools for call_tool).
	stateless bool
	// groupMeta puts each flat tool's groups in its _meta, for clients that
	// run their own tool search over the flat list.
	groupMeta bool
}

func (p presentation) String() string {
	switch {
	case p.extension:
		return "groups-extension"
	case p.stateless && p.mode == expose.Groups:
		return "groups-stateless"
	}
	return string(p.mode)
}

// present decides what a client gets, from what it declared alone:
//
//  1. a client that declared the groups extension: its top-level tools,
//     the rest through groups/list and groups/get, whatever the mode;
//  2. a configured mode other than auto: that mode (groups without a view
//     for clients that have none);
//  3. auto: flat for clients known to run their own tool search
//     (SearchingClients), groups for clients known to refresh their list
//     when they have a session (RefreshingClients on 2025-11-25), search
//     for everyone else.
func (g *Gateway) present(c ClientInfo) presentation {
	stateless := c.Stateless || c.ProtocolVersion >= statelessProtocol
	if c.Extension {
		return presentation{mode: expose.Groups, extension: true, stateless: true}
	}
	lk := g.look()
	m := lk.mode
	if m == expose.Auto {
		searching := lk.searching
		if searching == nil {
			searching = DefaultSearchingClients
		}
		refreshing := lk.refreshing
		if refreshing == nil {
			refreshing = DefaultRefreshingClients
		}
		matches := func(pattern string) bool { return clientMatches(pattern, c.Name) }
		switch {
		case slices.ContainsFunc(searching, matches):
			return presentation{mode: expose.Flat, groupMeta: true}
		case !stateless && slices.ContainsFunc(refreshing, matches):
			m = expose.Groups
		default:
			m = expose.Search
		}
	}
	return presentation{mode: m, stateless: stateless && m == expose.Groups}
}

// ModeFor decides the concrete mode for a client: the mode whose wire
// names it calls tools by.
func (g *Gateway) ModeFor(c ClientInfo) expose.Mode { return g.present(c).mode }

// Presentation names what a client gets, for logs: a mode, or
// "groups-extension", or "groups-stateless" (the groups mode's meta-tools
// without a view).
func (g *Gateway) Presentation(c ClientInfo) string { return g.present(c).String() }

// Connect serves a client on a transport: with the per-request server for
// clients without a view (2026-07-28, the groups extension, stateless
// groups), the shared server of a static mode, or a new server with a view
// of its own for the groups mode, which the gateway forgets when the
// session ends.
func (g *Gateway) Connect(ctx context.Context, c ClientInfo, t mcp.Transport) (*mcp.ServerSession, error) {
	if g.isClosed() {
		return nil, ErrClosed
	}
	s := g.sessionFor(c, true)
	ss, err := s.server.Connect(ctx, t, nil)
	if err != nil {
		g.forget(s)
		return nil, err
	}
	if !g.life.hold(ss) {
		g.forget(s)
		return nil, ErrClosed
	}
	if !g.life.goTracked(func() {
		_ = ss.Wait()
		g.life.let(ss)
		g.forget(s)
	}) {
		_ = ss.Close()
		g.forget(s)
		return nil, ErrClosed
	}
	return ss, nil
}

// serverFor is ServerFor that reports a session to the Observer only when
// count is set (not for a client's probe of the server).
func (g *Gateway) serverFor(c ClientInfo, count bool) *mcp.Server {
	return g.sessionFor(c, count).server
}

// sessionFor is serverFor's session: what serves the client, and its view.
func (g *Gateway) sessionFor(c ClientInfo, count bool) *session {
	p := g.present(c)
	if obs := g.opts.Observer; obs != nil && count {
		obs.SessionStarted(p.String())
	}
	if p.extension || p.stateless || c.ProtocolVersion >= statelessProtocol {
		return g.perRequest
	}
	if s, ok := g.sharedSessions()[p.mode]; ok {
		return s
	}
	s := g.newSession(p.mode, g.cur.Load().space.New())
	if g.trackHook != nil {
		g.trackHook()
	}
	g.track(s)
	// An Update between the session's making and its tracking did not
	// move it (a pending start's first catalog comes just as clients
	// connect): move it now, quietly, since it has answered nothing.
	st := g.cur.Load()
	s.mu.Lock()
	stale := s.st != st
	s.mu.Unlock()
	if stale {
		s.migrate(st, true)
	}
	return s
}

// track records a session with a view of its own; whoever serves it calls
// forget when its client's session ends.
func (g *Gateway) track(s *session) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.live == nil {
		g.live = map[*session]struct{}{}
	}
	g.live[s] = struct{}{}
}

// forget drops a session track recorded; the shared sessions are never
// tracked, and forgetting one is a no-op.
func (g *Gateway) forget(s *session) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.live, s)
}

// liveSessions returns the tracked sessions.
func (g *Gateway) liveSessions() []*session {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]*session, 0, len(g.live))
	for s := range g.live {
		out = append(out, s)
	}
	return out
}

// clientMatches compares a client name with a pattern, ignoring case; a
// trailing "*" matches any suffix ("Visual Studio Code - Insiders").
func clientMatches(pattern, name string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
		return len(name) >= len(prefix) && strings.EqualFold(name[:len(prefix)], prefix)
	}
	return strings.EqualFold(pattern, name)
}
