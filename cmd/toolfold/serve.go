package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"reflect"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/assemble"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/httpapi"
	"github.com/toolfold/toolfold/internal/metrics"
	"github.com/toolfold/toolfold/internal/oauth"
	"github.com/toolfold/toolfold/internal/telemetry"
	"github.com/toolfold/toolfold/internal/tokens"
	"github.com/toolfold/toolfold/internal/trust"
	"go.opentelemetry.io/otel/trace"
)

func runServe(ctx context.Context, e env, args []string) error {
	return serveAs(ctx, e, "serve", "[--config F] [--http ADDR] [--mode M] [--groups a,b] [--exclude-groups c] [--read-only]", false, args)
}

// serveAs is serve under the command name that was typed (serve, or demo,
// which serves the built-in demo catalog), so that its usage names it.
func serveAs(ctx context.Context, e env, name, synopsis string, demo bool, args []string) (err error) {
	f, err := parseServeFlags(e, name, synopsis, demo, args)
	if err != nil {
		return err
	}
	d, limits := f.d, f.limits
	// SIGHUP asks for a reload instead of ending the gateway, as it does
	// for most daemons; file changes ask too. Caught before the address is
	// taken, so a SIGHUP that comes during the start waits for it rather
	// than ending the gateway.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	// On stdio, stdout carries only JSON-RPC: logs always go to stderr.
	logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: f.level}))
	// The address is taken before any server starts: a port in use must
	// fail at once, not after every upstream has been started for nothing.
	var ln net.Listener
	if f.addr != "" {
		var err error
		if ln, err = listen(listenAddr(f.addr)); err != nil {
			return err
		}
		defer ln.Close()
		d.beforeStart = func(p *assemble.Plan) error {
			return checkExposure(ln.Addr(), p.HTTP.Auth.Enabled(), limits.allowRemote || p.HTTP.AllowUnauthenticated)
		}
	}
	if f.pprofAddr != "" {
		stop, err := serveProfiler(f.pprofAddr, logger)
		if err != nil {
			return err
		}
		defer stop()
	}
	// Metrics read the sources when scraped, so they need the plan; the
	// plan needs the metrics as its observer: tie the knot with a pointer.
	var src sourceReport
	m := metrics.New(src.metrics)
	// The dashboard's recent calls per tool hear what the metrics hear.
	activity := httpapi.NewActivity(nil)
	d.observer = gateway.Observers{m, activity}
	// Traces, when the config or OTEL_* ask for them; shut down (spans
	// flushed) after serving ends.
	var tracing *telemetry.Tracing
	d.tracing = func(cfg config.TelemetryConfig) (trace.TracerProvider, bool, error) {
		var err error
		if tracing, err = telemetry.New(ctx, cfg, version(), getenv(e)); err != nil {
			return nil, false, err
		}
		if tracing.Provider == nil {
			return nil, false, nil
		}
		logger.Info("exporting traces over OTLP", "protocol", tracing.Protocol, "endpoint", tracing.Endpoint)
		return tracing.Provider, tracing.RecordArguments, nil
	}
	defer func() { shutdownTracing(ctx, tracing, logger) }()
	// The reloader's baseline is taken before the build reads the config,
	// so a save during the start is a change it sees.
	var rl *reloader
	if path := configPath(d, e); path != "" {
		rl = newReloader(path, e.lookupEnv, logger, m.ConfigReloaded)
	}
	p, b, err := build(ctx, e, d, logger, pendingStart)
	if err != nil {
		return err
	}
	defer p.Upstreams.Close()
	// Before the upstreams close (defers run last first): calls waiting
	// for a client's input, timers and watchers stop, sessions close.
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := b.Gateway.Shutdown(sctx); err != nil {
			logger.Warn("the gateway did not stop everything it started in time", "err", err)
		}
	}()
	// Clients are answered from now on; the supervisor brings the
	// upstreams' tools and keeps the catalog current. A config the full
	// catalog refuses stops serving, as it would have stopped the start.
	ctx, refuse := context.WithCancelCause(ctx)
	sup := assemble.Supervise(ctx, b, assemble.SupervisorOptions{
		StartWait:  serveWait,
		OnWarnings: func(w []string) { tellWarnings(e, w, b.Warnings) },
		OnRefused:  func(err error) { refuse(&configRefused{err}) },
	})
	defer func() {
		// Before the upstreams close: a catalog built from closed
		// servers would only say they failed. The first cause stays, so
		// a refusal that ended serving is what serve returns.
		refuse(nil)
		sup.Close()
		var refused *configRefused
		if errors.As(context.Cause(ctx), &refused) {
			err = refused.err
		}
	}()
	// An approval (toolfold pins approve, a pulled or remounted lock)
	// reaches the running catalog without a restart.
	if err := p.WatchLock(ctx); err != nil {
		logger.Warn("a changed lock file will need a restart to be read", "err", err)
	}
	// A reload makes another plan the one served; the upstreams (and so
	// the lock's watch and the pins) stay the same object throughout.
	current := sup.Plan
	if rl != nil {
		rl.setApply(func() (assemble.Reconciled, error) {
			var np *assemble.Plan
			rec, err := sup.Reload(ctx, func() (*assemble.Plan, error) {
				var err error
				if np, err = plan(ctx, e, d, logger); err != nil {
					return nil, err
				}
				np.WarnMissingGroups = d.inspecting
				return np, nil
			})
			if err != nil {
				return rec, err
			}
			rec.NeedsRestart = append(rec.NeedsRestart, rl.applyTokens(np.HTTP)...)
			return rec, nil
		})
	}
	src.set(func() []httpapi.SourceStatus { return sources(current(), b) }, p.HeldCounts)
	rctx, stopReload := context.WithCancel(ctx)
	reloadDone := make(chan struct{})
	defer func() { stopReload(); <-reloadDone }()
	go func() {
		defer close(reloadDone)
		watchReloads(rctx, rl, hup, logger)
	}()
	m.Read(metrics.Gauges{OpenSessions: b.Gateway.OpenSessions, InitialTokens: initialTokens(b.Gateway, logger), AnswerBytesInFlight: b.Gateway.AnswerBytesInFlight})
	if ln == nil {
		logger.Info("serving over stdio", "catalog", p.Origin, "mode", b.Gateway.Mode())
		err := b.Gateway.ServeStdio(ctx, e.stdin, e.stdout)
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			// Stopped from outside (a signal), or by a refused config,
			// which the deferred check above reports: neither is a
			// failure of serving.
			return nil
		}
		return err
	}
	return serveHTTP(ctx, p, b, ln, f.stateless, limits, f.drainTimeout, m.Handler(), activity, rl, current, logger)
}

// serveFlags are serve's command line, checked.
type serveFlags struct {
	d            deployment
	limits       httpLimits
	addr         string
	stateless    bool
	drainTimeout time.Duration
	level        slog.Level
	pprofAddr    string
}

// parseServeFlags reads serve's command line under the command name that
// was typed, and refuses a flag that cannot work with a usage error.
func parseServeFlags(e env, name, synopsis string, demo bool, args []string) (serveFlags, error) {
	var f serveFlags
	fs := newFlags(e, name, synopsis)
	f.d.register(fs)
	f.d.demo = f.d.demo || demo
	f.d.pinning = true
	fs.StringVar(&f.addr, "http", "", "serve streamable HTTP at ADDR (path /mcp) instead of stdio, e.g. 127.0.0.1:8080; a bare port means 127.0.0.1 on that port")
	fs.BoolVar(&f.stateless, "stateless", false, "with --http: serve every request on its own, without sessions (auto then serves search)")
	f.limits.register(fs)
	fs.DurationVar(&f.drainTimeout, "drain-timeout", defaultDrainTimeout, "with --http: on SIGTERM or Ctrl-C, stop accepting connections and wait this long for requests in flight to finish before exiting; keep it under your supervisor's kill timeout")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error; logs go to stderr")
	fs.StringVar(&f.pprofAddr, "pprof", "", "serve Go's profiler (/debug/pprof/) at this loopback address, for performance work")
	if err := parse(fs, args); err != nil {
		return f, err
	}
	if f.drainTimeout <= 0 {
		return f, usageError{"--drain-timeout must be positive, such as --drain-timeout 30s"}
	}
	if fs.NArg() > 0 {
		return f, usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	if err := f.limits.check(); err != nil {
		return f, err
	}
	if err := f.level.UnmarshalText([]byte(*logLevel)); err != nil {
		return f, usageError{fmt.Sprintf("unknown log level %q: use debug, info, warn or error", *logLevel)}
	}
	return f, nil
}

// sourceReport is what the metrics read of the sources when scraped, set
// once the plan is built (the metrics are made before it, as its
// observer).
type sourceReport struct {
	mu     sync.Mutex
	report func() []httpapi.SourceStatus
	held   func() map[string]int
}

func (r *sourceReport) set(report func() []httpapi.SourceStatus, held func() map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.report, r.held = report, held
}

// metrics is the metrics' source function: none until set.
func (r *sourceReport) metrics() []metrics.Source {
	r.mu.Lock()
	report, held := r.report, r.held
	r.mu.Unlock()
	if report == nil {
		return nil
	}
	var counts map[string]int
	if held != nil {
		counts = held()
	}
	var out []metrics.Source
	for _, s := range report() {
		out = append(out, metrics.Source{Name: s.Name, Kind: s.Kind, State: s.State, Tools: s.Tools, IdleStops: s.IdleStops, Restarts: s.Restarts, Held: counts[s.Name]})
	}
	return out
}

// shutdownTracing flushes the last spans, if traces were exported.
func shutdownTracing(ctx context.Context, tracing *telemetry.Tracing, logger *slog.Logger) {
	if tracing == nil {
		return
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := tracing.Shutdown(sctx); err != nil {
		logger.Warn("could not export the last spans", "err", err)
	}
}

// watchReloads applies reloads as SIGHUP and the config's changes ask,
// until ctx ends; without a config file (the demo catalog) it only says
// there is nothing to reload.
func watchReloads(ctx context.Context, rl *reloader, hup <-chan os.Signal, logger *slog.Logger) {
	if rl != nil {
		rl.run(ctx, hup)
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			logger.Info("SIGHUP: nothing to reload, the built-in demo catalog has no config file")
		}
	}
}

// configRefused ends serving when the catalog a pending start completes
// to is refused: err says why.
type configRefused struct{ err error }

func (c *configRefused) Error() string { return c.err.Error() }

// getenv reads a variable of e's environment, "" when unset.
func getenv(e env) func(string) string {
	return func(key string) string {
		v, _ := e.lookupEnv(key)
		return v
	}
}

// initialTokens measures each mode's first tools/list for the metrics, once
// per catalog: the tokenizer is too slow to run at every scrape.
func initialTokens(gw *gateway.Gateway, logger *slog.Logger) func() map[string]int {
	var mu sync.Mutex
	var cat *catalog.Catalog
	var last map[string]int
	return func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		if now := gw.Catalog(); now != cat || last == nil {
			cat, last = now, map[string]int{}
			for _, m := range []expose.Mode{expose.Flat, expose.Groups, expose.Grouped, expose.Search} {
				tools, err := gw.InitialTools(m)
				if err == nil {
					var n int
					if n, err = tokens.ToolsCost(tools); err == nil {
						last[string(m)] = n
						continue
					}
				}
				logger.Warn("could not measure a mode's first tool list for the metrics", "mode", m, "err", err)
			}
		}
		return last
	}
}

// listen takes the address to serve HTTP at, saying what to do when it
// cannot.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return nil, fmt.Errorf("cannot listen on %s, which another program (perhaps another toolfold) is using: %w; stop that program, or pick another address with --http, e.g. --http 127.0.0.1:8081", addr, err)
	case err != nil:
		return nil, fmt.Errorf("cannot listen on %s: %w; pick another address with --http, e.g. --http 127.0.0.1:8080", addr, err)
	}
	return ln, nil
}

// listenAddr reads --http: a bare port ("8080") is loopback on that port,
// as serving is loopback unless told otherwise; anything else is a host
// and port as net.Listen takes them (":8080" is every interface).
func listenAddr(s string) string {
	if s != "" && strings.Trim(s, "0123456789") == "" {
		return "127.0.0.1:" + s
	}
	return s
}

// defaultDrainTimeout is how long a stopping server waits for requests in
// flight: most tool calls end well within it, and it stays under the 30
// seconds Kubernetes and many supervisors give before SIGKILL.
const defaultDrainTimeout = 25 * time.Second

func serveHTTP(ctx context.Context, p *assemble.Plan, b *assemble.Built, ln net.Listener, stateless bool, limits httpLimits, drainTimeout time.Duration, metricsHandler http.Handler, activity *httpapi.Activity, rl *reloader, current func() *assemble.Plan, logger *slog.Logger) error {
	httpOpts, err := limits.options(p.HTTP)
	if err != nil {
		return err
	}
	httpOpts.Stateless = stateless
	mcpHandler, err := b.Gateway.HTTPHandler(httpOpts)
	if err != nil {
		return err
	}
	var oauthServer *oauth.Server
	if o := p.HTTP.Auth.OAuth; o != nil {
		if oauthServer, err = oauth.New(o, &oauth.Options{Logger: logger}); err != nil {
			return err
		}
		defer oauthServer.Close()
		logger.Info("accepting OAuth access tokens", "resource", o.Resource, "issuers", o.Issuers, "metadata", oauthServer.MetadataURL())
	}
	var reload func() httpapi.ReloadStatus
	var lastReload func() *httpapi.ReloadStatus
	var applied func() time.Time
	if rl != nil {
		reload = func() httpapi.ReloadStatus { return rl.reload("POST /api/reload") }
		lastReload, applied = rl.lastStatus, rl.appliedAt
	}
	api, err := httpapi.New(&httpapi.Options{
		Reload: reload, LastReload: lastReload, ConfigApplied: applied,
		MCP: httpapi.LimitedViews(mcpHandler, func(groups []string, readOnly bool) (http.Handler, error) {
			return b.Gateway.LimitedHandler(groups, readOnly, httpOpts)
		}, logger),
		Catalog: b.Gateway.Catalog,
		Sources: func() []httpapi.SourceStatus { return sources(current(), b) },
		GroupHandler: func(group string, readOnly bool) (http.Handler, error) {
			return b.Gateway.GroupHandler(group, readOnly, httpOpts)
		},
		Tokens: p.HTTP.Auth.Tokens, OAuth: oauthServer, AllowedOrigins: p.HTTP.AllowedOrigins, Logger: logger,
		Metrics: metricsHandler, Activity: activity,
		Sessions: func() []httpapi.SessionInfo {
			var out []httpapi.SessionInfo
			for _, s := range b.Gateway.Sessions() {
				out = append(out, httpapi.SessionInfo{ID: s.ID, Client: s.Client, ClientVersion: s.ClientVersion, Protocol: s.Protocol, Mode: s.Mode, Enabled: s.Enabled,
					LastSeen: s.LastSeen, Idle: s.Idle})
			}
			return out
		},
		InitialTools: func(mode string) ([]*mcp.Tool, error) { return b.Gateway.InitialTools(expose.Mode(mode)) },
		Pins: &httpapi.Pins{
			Report: func() trust.Report {
				if st := p.Trust(); st != nil {
					return pinsOf(st)
				}
				return trust.Report{Servers: []trust.ServerReport{}, Findings: []trust.Finding{}}
			},
			Approve: func(server string, items []string, who string) (any, error) {
				apps, err := p.ApprovePins(server, items, "api:"+who)
				if errors.Is(err, trust.ErrNotHeld) || errors.Is(err, assemble.ErrLockReadOnly) {
					err = fmt.Errorf("%w: %w", httpapi.ErrPinsRequest, err)
				}
				return apps, err
			},
		},
		Find: func(phrasings []string, limit int) ([]httpapi.FoundTool, error) {
			res, err := b.Gateway.Find(phrasings, limit)
			if err != nil {
				return nil, err
			}
			out := make([]httpapi.FoundTool, len(res.Tools))
			for i, t := range res.Tools {
				out[i] = httpapi.FoundTool{Name: t.Name, Group: t.Group, Description: t.Description, Score: t.Score}
			}
			return out, nil
		},
	})
	if err != nil {
		return err
	}
	if rl != nil {
		running := httpAccess{oauth: p.HTTP.Auth.OAuth}
		rl.setTokens(func(h config.HTTPConfig) []string {
			// The cap as at start: a --max-sessions flag wins over the
			// config.
			if o, err := limits.options(h); err == nil {
				b.Gateway.SetMaxSessions(o.MaxSessions)
			}
			return running.apply(api, b.Gateway, h, logger)
		})
	}
	// Streams that only wait for notifications (GET /mcp) would hold the
	// drain for its whole timeout: they end when it begins, and their
	// clients reconnect elsewhere.
	streams := &streamEnder{open: map[*streamConn]struct{}{}}
	srv := newHTTPServer(&streamHandler{e: streams, next: api}, defaultConnLimits)
	srv.ConnContext = streams.connContext
	srv.RegisterOnShutdown(streams.drain)
	ln = capConns(ln, connCapFor(fdLimit()), srv, logger)
	if !isLoopback(ln.Addr()) && !p.HTTP.Auth.Enabled() {
		logger.Warn("serving other machines without authentication, as allowed explicitly: anyone who reaches this address can call every tool", "addr", ln.Addr().String())
	}
	logger.Info("serving streamable HTTP", "url", "http://"+ln.Addr().String()+"/mcp", "catalog", p.Origin, "mode", b.Gateway.Mode())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		return drainHTTP(srv, drainTimeout, logger)
	}
}

// drainHTTP stops srv gracefully, so that a planned restart loses no call:
// the listener closes first (a balancer's new connections are refused and
// go to another replica, which is always safe to retry), requests in
// flight run to their answer, and each connection closes once it is idle.
// Requests still running after timeout are cut off.
func drainHTTP(srv *http.Server, timeout time.Duration, logger *slog.Logger) error {
	logger.Info("stopping: new connections are refused, requests in flight may finish", "drain_timeout", timeout.String())
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		logger.Warn("stopping: requests still running after the drain timeout are cut off; raise --drain-timeout if your tool calls take longer", "drain_timeout", timeout.String())
		if err := srv.Close(); err != nil {
			return fmt.Errorf("closing the connections left after draining: %w", err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("draining HTTP connections: %w", err)
	}
	logger.Info("stopped: every request in flight was answered")
	return nil
}

// streamEnder ends GET requests (the event streams a client opens to hear
// notifications) once draining begins, instead of letting them hold the
// drain until its timeout. It cancels the context of each connection
// serving one, which its request's context is made from: serve speaks
// HTTP/1.1, whose connection serves one request at a time, so no other
// request is cut off. A cancel per connection, made once as it opens,
// costs each session's stream a map entry while it lasts; a context and
// an AfterFunc of its own, and the request copy to carry them, cost 1 KiB
// (heap profile of 1,000 idle sessions).
type streamEnder struct {
	mu       sync.Mutex
	draining bool
	open     map[*streamConn]struct{} // serving a GET now
}

// streamConn cancels the context of one connection.
type streamConn struct{ cancel context.CancelFunc }

type streamConnKey struct{}

// connContext is the http.Server's ConnContext.
func (e *streamEnder) connContext(ctx context.Context, _ net.Conn) context.Context {
	ctx, cancel := context.WithCancel(ctx)
	return context.WithValue(ctx, streamConnKey{}, &streamConn{cancel: cancel})
}

// streamHandler notes each GET served by next as a stream for e to end
// on drain, and ends one that begins after. It is a type rather than an
// http.HandlerFunc (whose ServeHTTP is one more frame) because the stream
// parks its goroutine with this frame on the stack for the session's life
// (see httpFront.ServeHTTP).
type streamHandler struct {
	e    *streamEnder
	next http.Handler
}

func (h *streamHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		h.next.ServeHTTP(w, r)
		return
	}
	c := h.e.begin(r)
	defer h.e.end(c)
	h.next.ServeHTTP(w, r)
}

// begin notes the stream r begins on its connection, or ends it at once
// while draining; it returns what end takes (nil for a request that came
// without connContext's cancel).
func (e *streamEnder) begin(r *http.Request) *streamConn {
	c, ok := r.Context().Value(streamConnKey{}).(*streamConn)
	if !ok {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.draining {
		c.cancel()
		return c
	}
	e.open[c] = struct{}{}
	return c
}

func (e *streamEnder) end(c *streamConn) {
	if c == nil {
		return
	}
	e.mu.Lock()
	delete(e.open, c)
	e.mu.Unlock()
}

// drain ends the streams open now and every one that begins after.
func (e *streamEnder) drain() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.draining = true
	for c := range e.open {
		c.cancel()
	}
}

// sources reports every source's state: the upstream servers', and the
// in-process ones (commands, Go tools), which are always ready.
func sources(p *assemble.Plan, b *assemble.Built) []httpapi.SourceStatus {
	out := httpapi.UpstreamSources(p.Upstreams.Status())
	seen := map[string]bool{}
	for _, s := range out {
		seen[s.Name] = true
	}
	counts := map[string]int{}
	for _, t := range b.Gateway.Catalog().Tools() {
		if !seen[t.Source] {
			counts[t.Source]++
		}
	}
	names := make([]string, 0, len(counts))
	for n := range counts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		kind := httpapi.KindLibrary
		if p.Commands[n] {
			kind = httpapi.KindCommand
		}
		out = append(out, httpapi.SourceStatus{Name: n, Kind: kind, State: httpapi.StateReady, Tools: counts[n]})
	}
	return out
}

func isLoopback(a net.Addr) bool {
	tcp, ok := a.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// serveProfiler serves net/http/pprof's handlers on a loopback address of
// their own, never on the MCP listener: a profile shows arguments in flight.
func serveProfiler(addr string, logger *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, usageError{fmt.Sprintf("--pprof: cannot listen on %s: %v", addr, err)}
	}
	if !isLoopback(ln.Addr()) {
		ln.Close()
		return nil, usageError{fmt.Sprintf("--pprof %s: the profiler serves loopback only; use 127.0.0.1:PORT", addr)}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	logger.Info("serving the profiler", "url", "http://"+ln.Addr().String()+"/debug/pprof/")
	return func() { srv.Close() }, nil
}

// configPath is the config file serve reads, "" for the demo catalog.
func configPath(d deployment, e env) string {
	if d.demo {
		return ""
	}
	cwd, _ := os.Getwd()
	path, found, err := config.Find(d.config, e.lookupEnv, cwd)
	if err != nil || !found {
		return ""
	}
	return path
}

// applyTokens makes a reloaded http.auth.tokens judge the next request,
// and ends the sessions opened with a token that was revoked or changed:
// they were granted under rules that no longer hold. It returns the
// settings left for a restart.
func applyTokens(api *httpapi.API, gw *gateway.Gateway, h config.HTTPConfig, logger *slog.Logger) []string {
	revoked, err := api.SetTokens(h.Auth.Tokens)
	if err != nil {
		logger.Warn("config reload: the new tokens are not applied; the running ones keep serving", "err", err)
		return []string{"http.auth.tokens"}
	}
	for _, name := range revoked {
		n := gw.EndSessionsOf(name)
		logger.Info("audit: token revoked or changed by a config reload; its sessions end", "token", name, "sessions_ended", n)
	}
	return nil
}

// httpAccess is what a reload may change of who the HTTP side admits,
// besides tokens: the OAuth config serving now (to rebuild its server only
// when it changed).
type httpAccess struct {
	oauth *config.OAuthConfig
}

// apply makes the reloaded tokens, allowed origins and OAuth config judge
// the next request, and returns what needs a restart instead. Called one
// reload at a time.
func (a *httpAccess) apply(api *httpapi.API, gw *gateway.Gateway, h config.HTTPConfig, logger *slog.Logger) []string {
	out := applyTokens(api, gw, h, logger)
	if err := api.SetOrigins(h.AllowedOrigins); err != nil {
		logger.Warn("config reload: the new allowed origins are not applied; the running ones keep serving", "err", err)
		out = append(out, "http.allowedOrigins")
	}
	if reflect.DeepEqual(a.oauth, h.Auth.OAuth) {
		return out
	}
	var srv *oauth.Server
	if o := h.Auth.OAuth; o != nil {
		var err error
		if srv, err = oauth.New(o, &oauth.Options{Logger: logger}); err != nil {
			logger.Warn("config reload: the new http.auth.oauth is not applied; the running one keeps serving", "err", err)
			return append(out, "http.auth.oauth")
		}
	}
	old, err := api.SetOAuth(srv)
	if err != nil {
		if srv != nil {
			srv.Close()
		}
		logger.Warn("config reload: the new http.auth.oauth is not applied; the running one keeps serving", "err", err)
		return append(out, "http.auth.oauth")
	}
	// The start's server is closed by serve's defer too; Close is
	// idempotent (a context's cancel).
	old.Close()
	a.oauth = h.Auth.OAuth
	logger.Info("audit: OAuth config replaced by a config reload", "resource", h.Auth.OAuth.Resource, "issuers", h.Auth.OAuth.Issuers, "rules", len(h.Auth.OAuth.Rules))
	return out
}
