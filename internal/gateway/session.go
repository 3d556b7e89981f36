package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/groupsext"
	"github.com/toolfold/toolfold/internal/meta"
	"github.com/toolfold/toolfold/internal/rawcall"
	"github.com/toolfold/toolfold/internal/sdkshim"
	"github.com/toolfold/toolfold/internal/view"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// session is what a server knows of the clients it serves: for the groups
// mode one client and its view; for a static mode every client of that mode,
// with a view that never changes.
type session struct {
	g      *Gateway
	mode   expose.Mode
	server *mcp.Server

	// role is what this kind of session answers its own way (roles.go).
	role role

	// toolsTap sends tools/list_changed in place of the SDK's own (see
	// notifyToolsChanged); nil on a per-request server.
	toolsTap *sdkshim.ListChangedTap
	// announcer makes the SDK announce lists it does not hold (announce).
	announcer *sdkshim.RegistryAnnouncer

	// mu guards the catalog the session serves and its view, which Update
	// replaces together, and serialises reconciliations so that two
	// concurrent enable calls cannot interleave their additions and
	// removals.
	mu sync.Mutex
	// changing serialises a meta-tool's change to the view with migrate:
	// a change made to a view that migrate has already copied would be
	// lost, so each holds it from reading the view to the end of its
	// change (always before mu, never while holding it).
	changing sync.Mutex
	// announcing serialises a list change with its announcement, so that
	// a call whose change another call's reconciliation already made
	// still returns only after that announcement was written.
	announcing sync.Mutex
	st         *state
	view       *view.View
	installed  map[string]*mcp.Tool
}

// current returns the session's exposure and view, consistent with each
// other, for one request.
func (s *session) current() (*expose.Exposure, *view.View) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.server == nil {
		// A transient session (request.go) follows the catalog: a request
		// that waits for a pending source answers from the newest one.
		if st := s.g.cur.Load(); st != s.st {
			s.st, s.view = st, st.space.New()
			s.installed = s.role.tools(st, s.view)
		}
	}
	return s.st.expo[s.mode], s.view
}

// newSession builds the MCP server for one mode. v is the client's own view
// in the groups mode, nil for a shared server.
func (g *Gateway) newSession(m expose.Mode, v *view.View) *session {
	return g.newSessionNotifying(m, v, nil)
}

// newSessionNotifying is newSession for a per-request session that tells its
// client of changes to the top-level groups with groupsChanged.
func (g *Gateway) newSessionNotifying(m expose.Mode, v *view.View, groupsChanged func()) *session {
	st := g.cur.Load()
	s := &session{g: g, mode: m, st: st, view: v, installed: map[string]*mcp.Tool{}}
	switch {
	case m == perRequestMode:
		s.role = newRequestServer(st, groupsChanged)
	case v == nil:
		s.role = staticServer{mode: m}
	default:
		s.role = viewServer{mode: m}
	}
	if s.view == nil {
		s.view = st.space.New()
	}
	so := &mcp.ServerOptions{Instructions: g.opts.Instructions, Logger: g.sdkLog, Capabilities: g.caps[0]}
	if groupsChanged != nil {
		so.Capabilities = g.caps[1]
	}
	if g.opts.Extras != nil {
		so.SubscribeHandler = func(ctx context.Context, req *mcp.SubscribeRequest) error {
			if err := g.allowsSubscription(ctx, req.Params.URI); err != nil {
				return err
			}
			return g.subs.subscribe(ctx, req.Session, req.Params)
		}
		so.UnsubscribeHandler = func(ctx context.Context, req *mcp.UnsubscribeRequest) error {
			return g.subs.unsubscribe(ctx, req.Session, req.Params)
		}
	}
	s.server = mcp.NewServer(&mcp.Implementation{Name: g.opts.Name, Version: g.opts.Version}, so)
	s.announcer = sdkshim.NewRegistryAnnouncer(s.server)
	if m != perRequestMode {
		// List changes are announced by the gateway itself: a view's
		// before the result of the call that made them (see
		// notifyToolsChanged), a catalog update's once per client after
		// the whole list is reconciled (see migrate). The SDK's own,
		// debounced announcement is dropped: under load its 10 ms window
		// closes in the middle of a reconciliation and one change is
		// announced twice.
		tap, err := sdkshim.TapListChanged(s.server, sdkshim.ToolsListChanged)
		if err != nil {
			// Only an SDK that no longer builds the sending chain at once
			// fails here (TestSDKBuildsTheSendingChainAtOnce says so first).
			g.log.Error("announcing tool list changes per client", "err", err)
		}
		s.toolsTap = tap
	}
	s.server.AddReceivingMiddleware(s.middleware)
	if g.opts.Extras != nil {
		s.server.AddReceivingMiddleware(g.extrasMiddleware)
	}
	s.server.AddReceivingMiddleware(g.skillsMiddleware) // it adds to resources/list
	s.serveSkills()
	if !g.built.isOpen() {
		// Outside every handler that reads the catalog; a session made
		// once the catalog is built needs no hold.
		s.server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				g.awaitBuilt(ctx, method)
				return next(ctx, method, req)
			}
		})
	}
	// Added last, so it is outermost: it sees every handler's error.
	s.server.AddReceivingMiddleware(sdkshim.WithErrorCodes(errorCode))
	s.server.AddReceivingMiddleware(checkParams) // the gate for params, before any handler
	if g.tr != nil {
		// Outside even that: a request's span covers every handler
		// (prompts and resources included) and records its final error.
		s.server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				return s.traceMethod(ctx, method, req, next)
			}
		})
	}
	// Outermost of all: a panic in any handler fails its request alone.
	s.server.AddReceivingMiddleware(g.recoverTyped)
	if m == perRequestMode {
		s.serveGroupsExtension()
	}
	s.reconcile()
	return s
}

// serverCapabilities are what every server of the gateway advertises;
// notifying is for the per-request server of a stdio connection, which
// sends notifications/groups/list_changed (see ServeStdio). The gateway
// makes both once: the SDK copies them before it adds to them
// (TestSDKCopiesTheServerCapabilities), so every session's server shares
// them.
func (g *Gateway) serverCapabilities(notifying bool) *mcp.ServerCapabilities {
	// Every mode may see its list change when the catalog does (an upstream
	// finishing its start, or announcing new tools); only the groups mode
	// also changes it per client.
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}, Logging: &mcp.LoggingCapabilities{}}
	if g.opts.Extras != nil {
		caps.Prompts = &mcp.PromptCapabilities{ListChanged: g.opts.ExtrasListChanged}
		caps.Resources = &mcp.ResourceCapabilities{Subscribe: true, ListChanged: g.opts.ExtrasListChanged}
		caps.Completions = &mcp.CompletionCapabilities{}
	}
	// Every server advertises the grouping extension; the per-request
	// server answers it (a client that declares it is served there).
	// listChanged only where toolfold can send the notification, which
	// the SDK does not know (see ServeStdio).
	settings := map[string]any{}
	if notifying {
		settings["listChanged"] = true
	}
	caps.AddExtension(groupsext.ID, settings)
	// Groups are served as skills too (skills.go), which are resources.
	caps.AddExtension(skillsExtension, map[string]any{})
	if caps.Resources == nil {
		caps.Resources = &mcp.ResourceCapabilities{}
	}
	return caps
}

// notifyToolsChanged tells the session's client that its list changed,
// now: on the context of the call that changed it, so that over streamable
// HTTP it travels on that call's response stream, and on every transport
// it is written before the call's result. It bypasses the SDK's debounce,
// which would send it after the result, and sometimes twice.
func (s *session) notifyToolsChanged(ctx context.Context, ss *mcp.ServerSession) {
	if s.toolsTap == nil || ss == nil {
		return
	}
	if err := s.toolsTap.Notify(ctx, ss); err != nil {
		s.g.log.Warn("telling a client its tool list changed", "err", err)
	}
}

// migrate moves the session to a new catalog, keeping the groups it had
// enabled that still exist, and reconciles its list. quiet tells no
// client: none was answered from the catalog it replaces.
func (s *session) migrate(st *state, quiet bool) {
	s.changing.Lock()
	s.mu.Lock()
	old := s.view.Snapshot()
	oldGroups := s.st.space.Catalog().Groups()
	keep := map[string]bool{}
	old.Enabled.Each(func(i int) { keep[string(oldGroups[i].ID)] = true })
	v := st.space.New()
	if len(keep) > 0 {
		// Reset enables parents before children and drops what is gone.
		v.Reset(keep)
	}
	s.st, s.view = st, v
	s.mu.Unlock()
	s.changing.Unlock()
	s.role.listChanged(s, st, quiet)
}

// desired is the tool list the client should see now. The caller holds
// s.mu.
func (s *session) desired() map[string]*mcp.Tool {
	return s.role.tools(s.st, s.view)
}

// reconcile brings the server's tool list in line with the view, and
// reports whether it changed. It announces nothing: the caller does, once
// for the whole change (notifyToolsChanged), the SDK's own debounced
// announcement being dropped (see newSessionNotifying).
func (s *session) reconcile() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.server == nil {
		return false // a transient session has no registry
	}
	changed := false
	want := s.desired()
	var removed []string
	for name := range s.installed {
		if _, keep := want[name]; !keep {
			removed = append(removed, name)
		}
	}
	if len(removed) > 0 {
		s.server.RemoveTools(removed...)
		for _, name := range removed {
			delete(s.installed, name)
		}
		changed = true
	}
	for name, tool := range want {
		if prev, ok := s.installed[name]; ok && (prev == tool || sameTool(prev, tool)) {
			continue
		}
		s.server.AddTool(tool, s.unreachable)
		s.installed[name] = tool
		changed = true
	}
	return changed
}

// sameTool reports whether two definitions would look the same to a
// client: meta-tools are rebuilt on every reconcile, and a new catalog
// brings new pointers for tools that may not have changed at all.
func sameTool(a, b *mcp.Tool) bool {
	if a.Name != b.Name || a.Description != b.Description {
		return false
	}
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// unreachable is the handler registered with the SDK. Every tools/call is
// answered by the middleware first, so it runs only if the SDK grows a new
// path into tools; it then routes like the middleware does.
func (s *session) unreachable(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return s.callTool(ctx, req)
}

func (s *session) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if s.mode == perRequestMode {
			if res, err, ok := s.perRequestMiddleware(ctx, method, req); ok {
				return res, err
			}
			return next(ctx, method, req)
		}
		if method == "tools/call" {
			if r, ok := req.(*mcp.CallToolRequest); ok {
				return s.serveCall(ctx, r)
			}
		}
		if method == "tools/list" {
			s.awaitList(ctx, req)
			res, err := next(ctx, method, req)
			if list, ok := res.(*mcp.ListToolsResult); ok && list != nil {
				// The SDK marks every list public; say what this one
				// depends on. Its ttlMs stays 0, as the SDK sends it: a
				// session's list changes with the client's own calls and
				// with the catalog, and list_changed says when.
				list.Cacheable.CacheScope = s.g.listCacheable().CacheScope
				if s.mode == expose.Groups {
					list.Cacheable.CacheScope = "private" // the client's own view
				}
			}
			return res, err
		}
		return next(ctx, method, req)
	}
}

// serveCall answers a tools/call, with its metrics.
func (s *session) serveCall(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var info *auth.TokenInfo
	if r.Extra != nil {
		info = r.Extra.TokenInfo
	}
	ticket := s.g.admitCall(ctx, pathTyped, info)
	if s.g.tr != nil {
		attrs := []attribute.KeyValue{semconv.McpProtocolVersionKey.String(r.ProtocolVersion())}
		if r.Session != nil && r.Session.ID() != "" {
			attrs = append(attrs, semconv.McpSessionIDKey.String(r.Session.ID()))
		}
		ctx = ticket.traceCall(withClientContext(ctx, r.Params.Meta, headerOf(r.Extra)), attrs...)
	}
	ctx = ticket.recording(ctx)
	var res *mcp.CallToolResult
	var err error
	var detached *callRecord
	if r.ProtocolVersion() >= statelessProtocol {
		// The client cannot be sent requests: a source that needs input
		// asks it through results (see input.go). The call runs detached,
		// with its own recorder; this request reports what it had done by
		// the end of this round.
		var rec callRecord
		res, rec, err = serveInput(ctx, s.g.inputs, toolRequest(r), func(ctx context.Context) (*mcp.CallToolResult, error) {
			return s.callTool(ctx, r)
		})
		detached = &rec
	} else {
		res, err = s.callTool(ctx, r)
	}
	rec := ticket.record(detached)
	result := outcome(res, err, rec)
	// A call through call_tool counts under the tool it reached, with the
	// meta-tool apart as via.
	tool, via := s.metricName(r.Params.Name), ""
	if rec.tool != "" {
		tool, via = rec.tool, tool
	}
	ticket.finish(ctx, tool, via, rec.source, result)
	if err == nil && r.ProtocolVersion() >= statelessProtocol {
		res = sdkshim.Complete(res)
	}
	return res, err
}

// callTool answers tools/call: a meta-tool, or a wire tool the client can
// reach, or a clear refusal.
func (s *session) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	name := req.Params.Name
	n := s.g.Names()
	if kind := n.Kind(name); kind != meta.NotMeta && s.offersMeta(name) {
		return s.callMeta(ctx, req, kind)
	}
	expo, v := s.current()
	w, ok := expo.Route(name)
	if !ok {
		// A tool of a source still starting is not missing: wait for it.
		start := time.Now()
		s.await(ctx, func(e *expose.Exposure) bool { _, ok := e.Route(name); return ok })
		expo, v = s.current()
		if w, ok = expo.Route(name); !ok {
			return meta.ErrorResult(meta.UnknownToolMessage(n, expo, name, s.metaNames()) + sourcesNote(expo.Catalog(), name, time.Since(start))), nil
		}
	}
	snap := v.Snapshot()
	if !s.role.reaches(expo, snap, w) {
		return meta.ErrorResult(meta.HiddenToolMessage(n, w, snap)), nil
	}
	return s.run(ctx, req, w, req.Params.Arguments)
}

func (s *session) offersMeta(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.installed[name]
	return ok
}

func (s *session) metaNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for name := range s.installed {
		if s.g.Names().Kind(name) != meta.NotMeta {
			out = append(out, name)
		}
	}
	return out
}

// run resolves a wire tool's arguments and calls the catalog tool.
func (s *session) run(ctx context.Context, req *mcp.CallToolRequest, w *expose.Wire, args json.RawMessage) (*mcp.CallToolResult, error) {
	tool, toolArgs, err := w.Resolve(args)
	if err != nil {
		return meta.ErrorResult(err.Error()), nil
	}
	noteSource(ctx, tool.Source)
	inner := &mcp.CallToolRequest{
		Session: req.Session,
		Extra:   req.Extra,
		Params:  &mcp.CallToolParamsRaw{Meta: req.Params.Meta, Name: tool.Name, Arguments: toolArgs},
	}
	if tr := s.g.tr; tr != nil {
		// The source's request joins the trace as the child of a client
		// span, in its _meta (and, for a remote source, its headers).
		var span trace.Span
		ctx, span = tr.clientSpan(ctx, tool.Name, tool.Source)
		inner.Params.Meta = injectMeta(ctx, req.Params.Meta)
		defer func() { endCall(span, sourceOutcome(ctx)) }()
	} else {
		// Untraced, the client's trace still reaches the source: its
		// _meta goes as it came, and a context sent in HTTP headers joins it.
		inner.Params.Meta = headerMeta(req.Params.Meta, headerOf(req.Extra))
	}
	res, err := tool.Handler(ctx, inner)
	noteAnswer(ctx, res, err)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// A JSON-RPC error is a handler's way to answer at the protocol
		// level (the Go SDK's convention for tool handlers too): a source
		// passing on an upstream's refusal that only the client can act
		// on, such as a missing client capability.
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) {
			return nil, rpcErr
		}
		return meta.ErrorResult(fmt.Sprintf("%s failed: %v", w.Name, err)), nil
	}
	if res == nil {
		res = &mcp.CallToolResult{}
	}
	if res.Content == nil {
		res.Content = []mcp.Content{} // the protocol requires the field
	}
	return res, nil
}

// withNotes adds notes about how the arguments were read to a result, as
// text after its own content.
func withNotes(res *mcp.CallToolResult, notes []string) *mcp.CallToolResult {
	for _, n := range notes {
		res.Content = append(res.Content, &mcp.TextContent{Text: n})
	}
	return res
}

// exampleGroup is a group name to show in a correct call: a real one.
func exampleGroup(expo *expose.Exposure) string {
	for _, g := range expo.Catalog().Groups() {
		if g.Parent == nil {
			return string(g.ID)
		}
	}
	return "<group>"
}

func (s *session) disc() *meta.Discovery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.disc[s.mode]
}

// afterChange brings the list in line with a call's change to the view and
// tells the client, before the call's result, if its list changed.
func (s *session) afterChange(ctx context.Context, ss *mcp.ServerSession, ch *view.Change) {
	if ch.Before.Version == ch.After.Version {
		return
	}
	s.announcing.Lock()
	defer s.announcing.Unlock()
	if s.reconcile() {
		s.notifyToolsChanged(ctx, ss)
	}
}

// metricName is the tool label of a call: the wire name when the gateway
// knows it, else "(unknown)", so that names a model invents cannot grow the
// metrics without bound.
func (s *session) metricName(name string) string {
	if s.g.Names().Kind(name) != meta.NotMeta {
		return name
	}
	expo, _ := s.current()
	if _, ok := expo.Route(name); ok {
		return name
	}
	return "(unknown)"
}

// rawOutcome is outcome for the byte paths: relay.Answer's judgement, unless
// the source ended the call with an error that says how it failed.
func rawOutcome(answered string, call *rawcall.Call) string {
	if answered == "refused" {
		return answered
	}
	if f := failureOutcome(call.Err); f != "" {
		return f
	}
	return answered
}
