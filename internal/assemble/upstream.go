package assemble

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/rawcall"
	"github.com/toolfold/toolfold/internal/trust"
	"github.com/toolfold/toolfold/internal/upstream"
)

// Upstreams are the MCP servers of a plan: the manager that runs them and
// how each one's tools are named in the catalog.
type Upstreams struct {
	Manager *upstream.Manager
	// serversMu guards servers, configs and startWait, which a reload
	// replaces (reconcile).
	serversMu sync.RWMutex
	servers   []upstreamServer
	// configs are the servers' configs as the Manager was given them.
	configs map[string]config.ServerConfig

	mu sync.Mutex
	// sup hears every change of what the servers offer (under mu): the
	// supervisor of the catalog built over them last (see Supervisor).
	sup *Supervisor
	// gone holds the tools reloads removed (under mu; see noteGone).
	gone      map[catalog.ToolID]goneTool
	onLog     func(context.Context, *mcp.LoggingMessageParams)
	onUpdated func(context.Context, *mcp.ResourceUpdatedNotificationParams)
	// onPrompts and onResources tell the gateway its pass-through lists
	// changed.
	onPrompts, onResources func()
	// offered is what each server was known to offer when clients were
	// last told (see noticeOffers); nil until Follow.
	offered  map[string]offers
	logLevel mcp.LoggingLevel

	routes routes

	// discovery starts every server whose tools are not known, once (see
	// Discover); results and failed (under mu) hold the outcomes and why
	// those that failed did, so their tools are unavailable, not pending.
	discovery sync.Once
	settled   chan struct{} // closed when every discovery start has ended
	results   map[string]error
	failed    map[string]string
	// startWait is the longest start timeout of the servers: how long a
	// request waits for those still starting.
	startWait time.Duration

	// trust judges the servers' definitions against the lock file; nil
	// (a plan not made from a config) serves them as they come.
	trust *trustGate

	// forwarding is what toolfold forwards from the upstreams to the calling
	// client (sampling, elicitation, roots), fixed at construction.
	forwarding upstream.Forwarding
}

type upstreamServer struct {
	key    string // the server's name in mcpServers
	prefix string // "" means none
	sep    string
	// include and exclude are the config's globs over the server's own
	// tool names, kept to warn about the ones that match nothing.
	include, exclude []string
	// group is the group the server's tools join (grouped false: none);
	// the groups it declares through the groups extension go under it.
	group   string
	grouped bool
	// listed says the config's group names the server in its "servers"
	// on purpose: then every tool of the server stays a member of it.
	listed bool
}

// toolID is the catalog name of one of the server's tools.
func (s upstreamServer) toolID(name string) catalog.ToolID {
	if s.prefix == "" {
		return catalog.ToolID(name)
	}
	return catalog.ToolID(s.prefix + s.sep + name)
}

// newUpstreams prepares the enabled servers of cfg, leaving out those whose
// group is excluded: a server none of whose tools can be used is never
// started.
func newUpstreams(cfg *config.Config, states map[string]config.GroupState, opts Options, gate *trustGate) *Upstreams {
	u := &Upstreams{}
	servers := map[string]config.ServerConfig{}
	keys := make([]string, 0, len(cfg.MCPServers))
	for key := range cfg.MCPServers {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		sc := cfg.MCPServers[key]
		if sc.Disabled {
			continue
		}
		group, grouped := sc.EffectiveGroup()
		if grouped && states[group] == config.GroupExcluded {
			continue
		}
		if sc.Transport == config.TransportStdio {
			// A copy: the config's own map stays as loaded.
			env := make(config.SecretMap, len(sc.Env)+1)
			maps.Copy(env, sc.Env)
			env[config.DepthEnvVar] = strconv.Itoa(opts.Depth + 1)
			sc.Env = env
		}
		servers[key] = sc
		u.servers = append(u.servers, upstreamServer{key: key, prefix: sc.EffectivePrefix(), sep: cfg.Exposition.Separator, include: sc.Include, exclude: sc.Exclude,
			group: group, grouped: grouped, listed: slices.Contains(cfg.Groups[group].Servers, key)})
		u.startWait = max(u.startWait, sc.EffectiveStartTimeout())
	}
	if len(servers) == 0 {
		return nil
	}
	u.configs = servers
	u.trust = gate
	// Sampling and elicitation reach the client that made the call. Roots
	// stay off: a server such as the filesystem one replaces its configured
	// directories with the client's roots, which would silently change what
	// a config allows.
	u.forwarding = upstream.Forwarding{Sampling: true, Elicitation: true}
	cacheDir := ""
	if opts.CacheDir != "" {
		cacheDir = opts.CacheDir + "/catalog"
	}
	u.Manager = upstream.New(servers, &upstream.Options{
		CacheDir: cacheDir, DisableCache: opts.CacheDir == "", Logger: opts.Logger,
		ClientName: "toolfold", ClientVersion: opts.Version,
		OnToolsChanged: u.toolsChanged,
		// A server that failed with no cached list is needed by nobody
		// (nobody knows its tools): the Manager tries again by itself,
		// and each failure updates why its tools are missing.
		RetryFailedStarts: true,
		OnStartFailed:     u.startFailed,
		OnPromptsChanged: func(server string) {
			u.routes.forget(server, true, false)
			u.notify(func() func() { return u.onPrompts })
		},
		OnResourcesChanged: func(server string) {
			u.routes.forget(server, false, true)
			u.notify(func() func() { return u.onResources })
		},
		OnLog: func(_ string, msg *mcp.LoggingMessageParams) { u.log(msg) },
		OnResourceUpdated: func(_ string, p *mcp.ResourceUpdatedNotificationParams) {
			u.mu.Lock()
			fn := u.onUpdated
			u.mu.Unlock()
			if fn != nil {
				fn(context.Background(), p)
			}
		},
		Forward: u.forwarding,
		// Most servers today send sampling and elicitation requests in the
		// middle of a call, which the 2026-07-28 protocol no longer allows;
		// offering the last session-based version keeps them working.
		ProtocolVersion: "2025-11-25",
	})
	return u
}

func (u *Upstreams) log(msg *mcp.LoggingMessageParams) {
	u.mu.Lock()
	fn := u.onLog
	u.mu.Unlock()
	if fn != nil {
		fn(context.Background(), msg)
	}
}

// attach makes s hear of every change from now on.
func (u *Upstreams) attach(s *Supervisor) {
	u.mu.Lock()
	u.sup = s
	u.mu.Unlock()
}

// changed tells the supervisor that what the servers offer changed: it
// counts the change and rebuilds the catalog if it follows them.
func (u *Upstreams) changed() {
	u.mu.Lock()
	s := u.sup
	u.mu.Unlock()
	if s != nil {
		s.changed()
	}
}

// currentGeneration is the supervisor's count of changes so far (see
// Supervisor.gen), 0 before any catalog was built.
func (u *Upstreams) currentGeneration() uint64 {
	u.mu.Lock()
	s := u.sup
	u.mu.Unlock()
	if s == nil {
		return 0
	}
	return s.generation()
}

// notify calls the callback get reads under u.mu, if it is set.
func (u *Upstreams) notify(get func() func()) {
	u.mu.Lock()
	fn := get()
	u.mu.Unlock()
	if fn != nil {
		fn()
	}
}

// offers is what a server is known to offer beside tools.
type offers struct{ prompts, resources bool }

func (u *Upstreams) offersOf(key string) offers {
	return offers{prompts: u.offers(key, hasPrompts), resources: u.offers(key, hasResources)}
}

// toolsChanged follows a server's new tool list. A server's tools become
// known when it first starts, and so do its capabilities: a lazy server
// that nobody had started (with no cache) then brings prompts or resources
// that the lists left out until now, which is a change of those lists too.
func (u *Upstreams) toolsChanged(server string) {
	u.noticeOffers(server)
	u.changed()
}

// noticeOffers announces the prompt and resource lists of a server whose
// offer changed since clients were last told.
func (u *Upstreams) noticeOffers(server string) {
	now := u.offersOf(server)
	u.mu.Lock()
	if u.offered == nil {
		u.mu.Unlock()
		return // not serving yet: nobody has listed anything
	}
	before := u.offered[server]
	u.offered[server] = now
	onPrompts, onResources := u.onPrompts, u.onResources
	u.mu.Unlock()
	if now.prompts != before.prompts && onPrompts != nil {
		onPrompts()
	}
	if now.resources != before.resources && onResources != nil {
		onResources()
	}
}

// Discover makes the servers' tool lists known: it starts every server
// whose list is not known (once; later calls join the same run) and waits
// for them at most wait (zero waits for all of them), then returns the
// outcomes settled so far. Servers still starting when it returns keep
// starting; their tools, or why they failed, reach the catalog through
// OnChanged.
func (u *Upstreams) Discover(ctx context.Context, wait time.Duration) map[string]error {
	u.startDiscovery()
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-u.settled:
		case <-t.C:
		case <-ctx.Done():
		}
	} else {
		select {
		case <-u.settled:
		case <-ctx.Done():
		}
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return maps.Clone(u.results)
}

// startDiscovery starts the servers whose lists are not known, once. The
// starts run on the Manager's life, not a caller's: a request that gave up
// waiting does not abort a start others wait for.
func (u *Upstreams) startDiscovery() {
	u.discovery.Do(func() {
		u.mu.Lock()
		u.settled = make(chan struct{})
		u.results = map[string]error{}
		if u.failed == nil {
			u.failed = map[string]string{}
		}
		u.mu.Unlock()
		go func() {
			defer close(u.settled)
			u.runDiscovery()
		}()
	})
}

// runDiscovery starts the servers whose lists are not known and records
// each outcome as it settles.
func (u *Upstreams) runDiscovery() {
	for name, err := range u.Manager.Discover(context.Background()) {
		u.mu.Lock()
		u.results[name] = err
		if err != nil {
			u.failed[name] = err.Error()
		} else {
			delete(u.failed, name)
		}
		u.mu.Unlock()
		if _, known := u.Manager.CachedTools(name); err != nil && !known {
			// No tools will come: the catalog stops waiting for
			// them and says why. (Success is announced by
			// OnToolsChanged.)
			u.changed()
		}
	}
}

// startFailed records why a server's start failed, and rebuilds the
// catalog when its tools are missing for it, so what it says of the
// server (why, and when it is tried again) stays true.
func (u *Upstreams) startFailed(server string, err error) {
	u.mu.Lock()
	if u.failed == nil {
		u.failed = map[string]string{}
	}
	u.failed[server] = err.Error()
	u.mu.Unlock()
	if _, known := u.Manager.CachedTools(server); !known {
		u.changed()
	}
}

// StartWait is how long a request may wait for servers still starting: the
// longest start timeout among them.
func (u *Upstreams) StartWait() time.Duration {
	u.serversMu.RLock()
	defer u.serversMu.RUnlock()
	return u.startWait
}

// serverList is the servers as they are now.
func (u *Upstreams) serverList() []upstreamServer {
	u.serversMu.RLock()
	defer u.serversMu.RUnlock()
	return u.servers
}

// trusted judges every server's known definitions against the lock (see
// trustGate): the one step where what upstreams say is checked before it
// reaches the catalog.
func (u *Upstreams) trusted() trustView {
	if u.trust == nil {
		return trustView{}
	}
	return u.trust.judge(u.names(), func(key string) ([]*mcp.Tool, []*upstream.Group, string, bool) {
		tools, ok := u.Manager.CachedTools(key)
		if !ok {
			return nil, nil, "", false
		}
		groups, _ := u.Manager.CachedGroups(key)
		instr, _ := u.Manager.Instructions(key)
		return tools, groups, instr, true
	})
}

// tools are the catalog tools of every server whose list is known now.
// A tool whose definition cannot be served (an input schema that is not
// an object) is left out with a warning, so one server's mistake costs that
// tool, not the whole catalog.
//
// A tool the trust view holds is left out (its refusal is in heldNotes), and
// what the model reads of the others is sanitized (trust.Sanitize).
func (u *Upstreams) tools(tv trustView) (out []*catalog.Tool, warnings []string) {
	for _, s := range u.serverList() {
		list, ok := u.Manager.CachedTools(s.key)
		if !ok {
			continue
		}
		warnings = append(warnings, u.idleGlobs(s)...)
		for _, t := range list {
			if !tv.serves(s.key, trust.KindTool, t.Name) {
				continue
			}
			t = sanitizedTool(t)
			if problem := servable(t); problem != "" {
				warnings = append(warnings, fmt.Sprintf("MCP server %q: tool %q is left out: %s", s.key, t.Name, problem))
				continue
			}
			out = append(out, &catalog.Tool{ID: s.toolID(t.Name), Name: t.Name, Source: s.key, Def: t, Handler: u.forward(s.key, t.Name),
				ChecksArguments: true, Forward: u.forwardRaw(s.key, t.Name)})
		}
	}
	return out, warnings
}

// servable says what makes a tool definition impossible to serve, or "".
func servable(t *mcp.Tool) string {
	if t.Name == "" {
		return "it has no name"
	}
	// A list read from a server or the cache holds its schema as JSON
	// text, read here as it is, without encoding every schema of the
	// catalog again at each build.
	raw, isRaw := t.InputSchema.(json.RawMessage)
	if !isRaw {
		var err error
		if raw, err = json.Marshal(t.InputSchema); err != nil {
			return fmt.Sprintf("its input schema cannot be encoded: %v", err)
		}
	}
	if string(raw) == "null" {
		return ""
	}
	// Walked, not decoded: at 20,000 tools decoding every schema whole to
	// read one member was a tenth of a start.
	var typ []byte
	odd := false
	if err := rawcall.Members(raw, func(k, v []byte) bool {
		switch {
		case string(k) == "type":
			typ = v // the last one wins, as decoders take it
		case strings.EqualFold(string(k), "type") || bytes.IndexByte(k, '\\') >= 0:
			odd = true // a key encoding/json would also read as "type"
		}
		return true
	}); err != nil {
		return "its input schema is not a JSON object"
	}
	if odd {
		var top struct {
			Type any `json:"type"`
		}
		if err := json.Unmarshal(raw, &top); err != nil {
			return "its input schema is not a JSON object"
		}
		return schemaType(top.Type)
	}
	if typ == nil || string(typ) == `"object"` {
		return ""
	}
	var v any
	if err := json.Unmarshal(typ, &v); err != nil {
		return "its input schema is not a JSON object"
	}
	return schemaType(v)
}

// schemaType says what is wrong with an input schema's top-level type, or
// "" when it is "object" or not given.
func schemaType(v any) string {
	if v != nil && v != "object" {
		return fmt.Sprintf("its input schema has type %v, but tool arguments are always an object", v)
	}
	return ""
}

// pending lists the servers whose tool lists are not known yet and that
// have not failed to start: their tools are on their way.
func (u *Upstreams) pending() []string {
	u.mu.Lock()
	failed := maps.Clone(u.failed)
	u.mu.Unlock()
	var out []string
	for _, s := range u.serverList() {
		if _, ok := u.Manager.CachedTools(s.key); !ok {
			if _, bad := failed[s.key]; !bad {
				out = append(out, s.key)
			}
		}
	}
	return out
}

// names are the servers' names in mcpServers.
func (u *Upstreams) names() []string {
	list := u.serverList()
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = s.key
	}
	return out
}

// prefixes maps each server that namespaces its tools to the start of
// their names, separator included ("github__").
func (u *Upstreams) prefixes() map[string]string {
	out := map[string]string{}
	for _, s := range u.serverList() {
		if s.prefix != "" {
			out[s.key] = s.prefix + s.sep
		}
	}
	return out
}

// unavailable maps the servers whose lists are not known because their
// start failed to why.
func (u *Upstreams) unavailable() map[string]string {
	u.mu.Lock()
	failed := maps.Clone(u.failed)
	u.mu.Unlock()
	out := map[string]string{}
	for key, why := range failed {
		if _, ok := u.Manager.CachedTools(key); !ok {
			out[key] = why
		}
	}
	return out
}

// retries maps the unavailable servers that the Manager tries to start
// again by itself to when it next does.
func (u *Upstreams) retries(unavailable map[string]string) map[string]time.Time {
	out := map[string]time.Time{}
	for _, st := range u.Manager.Status() {
		if _, ok := unavailable[st.Name]; ok && !st.NextStart.IsZero() {
			out[st.Name] = st.NextStart
		}
	}
	return out
}

// awaitPending waits, at most the start wait, for the servers still
// starting to settle: their capabilities, and so whether they have prompts
// or resources, are known only then. Only the servers for which of reports
// true are waited for; nil means all.
func (u *Upstreams) awaitPending(ctx context.Context, of func(server string) bool) {
	pending := u.pending()
	if of != nil {
		pending = slices.DeleteFunc(pending, func(key string) bool { return !of(key) })
	}
	if len(pending) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, u.StartWait())
	defer cancel()
	var wg sync.WaitGroup
	for _, key := range pending {
		wg.Go(func() { _, _ = u.Manager.Tools(ctx, key) })
	}
	wg.Wait()
}

// forward calls a tool upstream on behalf of the client that called it:
// its progress token, its cancellation, and the server's requests during
// the call (sampling, elicitation) all go back to that client.
func (u *Upstreams) forward(server, tool string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		params := &mcp.CallToolParams{Meta: hopMeta(req.Params.Meta), Name: tool}
		if params.Meta == nil {
			params.Meta = mcp.Meta{}
		}
		params.Meta[mcp.MetaKeyClientCapabilities] = callCapabilities(req.ClientCapabilities(), u.forwarding)
		if len(req.Params.Arguments) > 0 {
			params.Arguments = req.Params.Arguments
		}
		var opts upstream.CallOptions
		if d := gateway.DownstreamFrom(ctx); d != nil {
			// The client is asked through results (2026-07-28).
			opts.Downstream = d
		}
		if ss := req.Session; ss != nil {
			if opts.Downstream == nil {
				opts.Downstream = ss
			}
			// Relaying progress costs a token and a drain per call: only
			// for callers that asked for progress.
			if req.Params.GetProgressToken() != nil {
				opts.OnProgress = func(ctx context.Context, p *mcp.ProgressNotificationParams) {
					_ = ss.NotifyProgress(ctx, p)
				}
			}
		}
		res, err := u.Manager.CallTool(ctx, server, params, &opts)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			var rpcErr *jsonrpc.Error
			if errors.As(err, &rpcErr) && rpcErr.Code == mcp.CodeMissingRequiredClientCapabilities {
				// The capabilities the upstream judged were the client's own
				// (see callCapabilities), so the refusal is the client's to
				// act on, with its code and data, as from the server itself.
				return nil, rpcErr
			}
			gateway.NoteFailure(ctx, err) // a crash or a timeout, for the metrics
			return toolError(err.Error()), nil
		}
		return res, nil
	}
}

// forwardRaw is forward's fast path (package rawcall): the same call, sent
// as bytes when the server is running. The client's capabilities are
// narrowed as callCapabilities narrows them, and an error that kept the
// call from an answer becomes the same tool error forward makes of it, or
// passes on as the protocol error only the client can act on.
func (u *Upstreams) forwardRaw(server, tool string) rawcall.Forwarder {
	fw := u.forwarding
	return func(call *rawcall.Call) (func(), bool) {
		c := call.Capabilities
		call.Capabilities = rawcall.Capabilities{
			Sampling:        fw.Sampling && c.Sampling,
			FormElicitation: fw.Elicitation && c.FormElicitation,
			Roots:           fw.Roots && c.Roots,
		}
		call.MapError = rawCallError
		return u.Manager.ForwardRaw(server, tool, call)
	}
}

// rawCallError makes of an error that kept a fast-path call from an answer
// what forward makes of it: a tool error, or the protocol error only the
// client can act on.
func rawCallError(err error) (json.RawMessage, error) {
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) && rpcErr.Code == mcp.CodeMissingRequiredClientCapabilities {
		return nil, rpcErr
	}
	raw, merr := json.Marshal(toolError(err.Error()))
	if merr != nil {
		return nil, err
	}
	return raw, nil
}

// callCapabilities are the client capabilities one forwarded call carries in
// _meta (io.modelcontextprotocol/clientCapabilities): what the calling
// client declared, narrowed to what toolfold forwards, in their wire form.
//
// The upstream connection is shared by every client, and its capabilities,
// declared once at initialize, say what toolfold can relay, not what the
// client behind a given call can answer. A server that reads the per-request
// capabilities (the 2026-07-28 way, which the Go SDK's ClientCapabilities
// prefers on any protocol) then asks a client only for what it can give,
// and refuses a call that needs more with -32021, instead of the call failing
// later when the client cannot answer. A server that does not read them
// ignores an unknown _meta key.
func callCapabilities(client *mcp.ClientCapabilities, fw upstream.Forwarding) map[string]any {
	out := map[string]any{}
	if client == nil {
		return out
	}
	if fw.Sampling && client.Sampling != nil {
		out["sampling"] = map[string]any{}
	}
	// toolfold relays form elicitation only. A client that names no mode
	// takes forms.
	if e := client.Elicitation; fw.Elicitation && e != nil && (e.Form != nil || e.URL == nil) {
		out["elicitation"] = map[string]any{"form": map[string]any{}}
	}
	if fw.Roots && (client.RootsV2 != nil || client.Roots.ListChanged) {
		out["roots"] = map[string]any{}
	}
	return out
}

// Status reports every server's state, for /healthz and the inspection
// commands.
func (u *Upstreams) Status() []upstream.Status {
	if u == nil {
		return nil
	}
	return u.Manager.Status()
}

// Close stops every server.
func (u *Upstreams) Close() error {
	if u == nil {
		return nil
	}
	if u.trust != nil {
		u.trust.close()
	}
	return u.Manager.Close()
}

// Follow keeps b's gateway serving the plan's current catalog: whenever an
// upstream's tool list changes, the catalog is rebuilt and the gateway
// updated, so clients hear of new tools. Errors are logged; the gateway
// keeps serving the last good catalog. Supervise does this and more (a
// pending start's completion, reloads); Follow serves a gateway that
// needs no more, such as a library's.
func (p *Plan) Follow(b *Built) {
	b.sup.follow()
}

// wire sends what the servers tell every client (log messages, resource
// updates, changed prompt and resource lists) to gw.
func (u *Upstreams) wire(gw *gateway.Gateway) {
	u.mu.Lock()
	defer u.mu.Unlock()
	// The servers' log messages go to every client (each client's level
	// filters them).
	u.onLog = gw.Log
	u.onUpdated = gw.ResourceUpdated
	// Prompts and resources are listed afresh from the servers on every
	// request, so a change needs no rebuild: clients are told, and ask.
	u.onPrompts = gw.PromptsChanged
	u.onResources = gw.ResourcesChanged
	u.offered = map[string]offers{}
}

// readOffers notes what each server is known to offer beside tools, so
// that a change of it can be told.
func (u *Upstreams) readOffers() {
	u.mu.Lock()
	if u.offered == nil {
		u.offered = map[string]offers{}
	}
	u.mu.Unlock()
	for _, s := range u.serverList() {
		o := u.offersOf(s.key) // reads the cache: outside u.mu
		u.mu.Lock()
		u.offered[s.key] = o
		u.mu.Unlock()
	}
}

func (p *Plan) logf(format string, args ...any) {
	if p.Gateway.Logger != nil {
		p.Gateway.Logger.Warn(fmt.Sprintf(format, args...))
	}
}

// perHopMeta are the _meta keys the 2026-07-28 protocol puts on every
// request to describe the connection it travels on. They belong to the
// client's hop, not to the upstream's: forwarded, they would make the
// upstream connection claim the client's protocol version.
var perHopMeta = []string{
	mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientInfo, mcp.MetaKeyClientCapabilities,
	mcp.MetaKeyLogLevel, mcp.MetaKeySubscriptionID,
}

// hopMeta is the caller's _meta without the per-hop keys; everything else
// (the progress token, a tool's own keys) passes through.
func hopMeta(m mcp.Meta) mcp.Meta {
	if len(m) == 0 {
		return m
	}
	out := make(mcp.Meta, len(m))
	for k, v := range m {
		if !slices.Contains(perHopMeta, k) {
			out[k] = v
		}
	}
	return out
}

// idleGlobs warns about a server's include and exclude globs that match
// none of its own tool names (docs/design.md#config): a typo there silently hides tools,
// or fails to hide them.
func (u *Upstreams) idleGlobs(s upstreamServer) []string {
	names, ok := u.Manager.OwnToolNames(s.key)
	if !ok {
		return nil
	}
	var out []string
	check := func(key string, globs []string) {
		for i, g := range globs {
			if !slices.ContainsFunc(names, func(n string) bool { return config.MatchGlob(g, n) }) {
				out = append(out, fmt.Sprintf("mcpServers.%s.%s[%d]: %q matches none of the %d tools of MCP server %q; globs match its own tool names, without the prefix (see 'toolfold tools')", s.key, key, i, g, len(names), s.key))
			}
		}
	}
	check("include", s.include)
	check("exclude", s.exclude)
	return out
}
