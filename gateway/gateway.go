// Package gateway runs the toolfold gateway inside a Go program: the MCP
// servers and command-line programs of a toolfold config, and the tools of
// library servers (toolfold.Server) called in-process, served together as
// one MCP server with progressive disclosure, as `toolfold serve` does.
//
//	srv := toolfold.NewServer(&toolfold.Options{Name: "local"})
//	toolfold.AddTool(srv.Group("local", nil), &mcp.Tool{Name: "hello"}, hello)
//	gw, err := gateway.Open(ctx, &gateway.Options{Config: "toolfold.json", Servers: []*toolfold.Server{srv}})
//	if err != nil { ... }
//	defer gw.Close()
//	err = gw.Run(ctx, &mcp.StdioTransport{})
//
// The library alone (package toolfold) does not link this package, so a
// plain library server carries no config loader and no upstream machinery.
package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold"
	"github.com/toolfold/toolfold/internal/assemble"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/config"
	gw "github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/httpapi"
	"github.com/toolfold/toolfold/internal/libspec"
	"github.com/toolfold/toolfold/internal/oauth"
)

// Options say what the gateway serves. The zero value serves nothing.
type Options struct {
	// Config is a toolfold config file (JSON or YAML, or a Claude Desktop
	// style mcpServers file); empty serves only Servers.
	Config string
	// Servers are library servers whose tools and groups join the catalog,
	// called in-process. Their tool and group names must differ from the
	// config's. The config's presentation applies to them (a server's own
	// Options.Mode and the like are not used); their groups keep the
	// states the code gave them. The gateway serves what each server holds
	// when Open reads it: tools and groups added to a server afterwards
	// are served by the server's own Run or Handler, not by this gateway.
	Servers []*toolfold.Server
	// Mode overrides the config's disclosure.mode, like --mode.
	Mode toolfold.Mode
	// Name and Version identify the gateway to clients; empty means
	// "toolfold".
	Name, Version string
	// Wait bounds how long Open waits for MCP servers that have no cached
	// tool list; the rest join the catalog when ready, and clients are
	// told. Zero means 2 seconds.
	Wait time.Duration
	// LookupEnv expands ${VAR} in the config and reads MCP_GROUP_<NAME>
	// switches; nil reads the process environment.
	LookupEnv func(name string) (string, bool)
	// CacheDir keeps discovered tool lists between runs; empty means the
	// user cache directory's "toolfold".
	CacheDir string
	// Logger receives the gateway's logs and warnings; nil discards them.
	Logger *slog.Logger
}

// Gateway serves one catalog to any number of clients. Close it when done:
// it stops the MCP servers it started.
type Gateway struct {
	logger   *slog.Logger
	plan     *assemble.Plan
	built    *assemble.Built
	sup      *assemble.Supervisor // keeps the catalog current
	warnings []string

	mu      sync.Mutex
	closers []func() // of what Handler started
}

// Open loads the config, adds the library servers, starts the MCP servers
// that have no cached tool list (waiting at most opts.Wait) and builds the
// catalog. A bad config is refused with every problem listed.
func Open(ctx context.Context, opts *Options) (*Gateway, error) {
	o := withDefaults(opts)
	g := &Gateway{logger: o.Logger}
	cfg, warnings, err := loadConfig(o)
	if err != nil {
		return nil, err
	}
	g.warnings = warnings
	p, err := assemble.FromConfig(ctx, cfg, assemble.Switches{Mode: string(o.Mode)},
		assemble.Options{LookupEnv: o.LookupEnv, CacheDir: o.CacheDir, Logger: o.Logger, Name: o.Name, Version: o.Version})
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	if o.Config == "" {
		p.Origin = "the library servers"
	}
	if err := addLibraryServers(p, o.Servers); err != nil {
		p.Upstreams.Close()
		return nil, err
	}
	if p.Upstreams != nil {
		for server, err := range p.Upstreams.Discover(ctx, o.Wait) {
			if err != nil {
				g.warnings = append(g.warnings, fmt.Sprintf("MCP server %q is not available: %v", server, err))
			}
		}
	}
	b, err := p.Build()
	if err != nil {
		p.Upstreams.Close()
		return nil, fmt.Errorf("gateway: %w", err)
	}
	g.plan, g.built = p, b
	g.warnings = append(g.warnings, b.Warnings...)
	for _, w := range g.warnings {
		o.Logger.Warn(w)
	}
	// ctx bounds Open alone: the supervisor, which needs none for a
	// catalog already built, lives until Close.
	g.sup = assemble.Supervise(context.WithoutCancel(ctx), b, assemble.SupervisorOptions{})
	return g, nil
}

// withDefaults is a copy of opts (which may be nil) with the documented
// default in every field left empty that has one.
func withDefaults(opts *Options) Options {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Name == "" {
		o.Name = "toolfold"
	}
	if o.CacheDir == "" {
		if base, err := os.UserCacheDir(); err == nil {
			o.CacheDir = filepath.Join(base, "toolfold")
		}
	}
	if o.Wait == 0 {
		o.Wait = 2 * time.Second
	}
	return o
}

// loadConfig loads o.Config, or without one the empty config, with every
// default a config has. It returns the config's warnings, and an error
// listing every problem when it has any.
func loadConfig(o Options) (*config.Config, []string, error) {
	copts := config.Options{LookupEnv: o.LookupEnv}
	cfg, diags := config.Parse("(no config)", []byte("{}"), copts)
	var warnings []string
	if o.Config != "" {
		cfg, diags = config.Load(o.Config, copts)
		// Without a config, the empty one's "no servers" warning is no news.
		for _, w := range diags.Warnings() {
			warnings = append(warnings, w.String())
		}
	}
	if diags.HasErrors() {
		return nil, nil, fmt.Errorf("the config %s has problems; fix them (toolfold check --config %s lists them too):\n%s", o.Config, o.Config, diags.Errors().String())
	}
	return cfg, warnings, nil
}

// addLibraryServers adds the tools of the library servers to the plan. A
// tool name that the config or another library server already uses is an
// error, since clients see library tools by their own names.
func addLibraryServers(p *assemble.Plan, servers []*toolfold.Server) error {
	owner := map[string]string{} // a library tool's name → its server, described
	for i, srv := range servers {
		who := libraryName(i, srv)
		spec, err := libspec.Of(srv)
		if err != nil {
			return fmt.Errorf("gateway: %s: %w", who, err)
		}
		for _, t := range spec.Tools {
			if spec.ReadOnly && !t.ReadOnly() {
				continue // not served, so in no one's way
			}
			if err := claimToolName(p, owner, who, t); err != nil {
				return err
			}
		}
		p.AddSpec(spec)
	}
	return nil
}

// claimToolName records that the library server who serves t, unless the
// config or an earlier library server has a tool of that name.
func claimToolName(p *assemble.Plan, owner map[string]string, who string, t *catalog.Tool) error {
	id := string(t.ID)
	if i := slices.IndexFunc(p.Spec.Tools, func(c *catalog.Tool) bool { return c.ID == t.ID }); i >= 0 && owner[id] == "" {
		return fmt.Errorf("gateway: %s has a tool %q, and so has the config's %q: rename the library tool, or give %q a different prefix in the config", who, t.ID, p.Spec.Tools[i].Source, p.Spec.Tools[i].Source)
	}
	if prev, dup := owner[id]; dup {
		return fmt.Errorf("gateway: %s and %s both have a tool %q, and clients see library tools by their own names: rename the tool in one of them", prev, who, t.ID)
	}
	owner[id] = who
	return nil
}

// libraryName describes the i-th library server for a message; the index
// tells apart servers left with the default name.
func libraryName(i int, srv *toolfold.Server) string {
	return fmt.Sprintf("library server %q (Servers[%d])", srv.Options().Name, i)
}

// Warnings are the problems Open found that do not stop serving: config
// warnings, MCP servers that did not start, groups with no tools.
func (g *Gateway) Warnings() []string { return g.warnings }

// Run serves one client over t until it disconnects or ctx ends; when ctx
// ends first it closes the session and returns ctx.Err(). Over
// *mcp.StdioTransport or *mcp.IOTransport it reads the client's first
// message to choose its mode, as `toolfold serve` does.
func (g *Gateway) Run(ctx context.Context, t mcp.Transport) error {
	switch t := t.(type) {
	case *mcp.StdioTransport:
		return g.built.Gateway.ServeStdio(ctx, stdio{os.Stdin}, stdio{os.Stdout})
	case *mcp.IOTransport:
		return g.built.Gateway.ServeStdio(ctx, t.Reader, t.Writer)
	}
	session, err := g.built.Gateway.Connect(ctx, gw.ClientInfo{}, t)
	if err != nil {
		return err
	}
	return gw.WaitOrCancel(ctx, session)
}

// Connect serves one client over t as if it had named itself clientName,
// and returns once the session has started; for tests and in-process use.
func (g *Gateway) Connect(ctx context.Context, t mcp.Transport, clientName string) (*mcp.ServerSession, error) {
	return g.built.Gateway.Connect(ctx, gw.ClientInfo{Name: clientName}, t)
}

// Handler serves streamable HTTP MCP with a view per session; mount it at
// /mcp (it serves MCP at whatever path it is given). It applies the
// config's http block as `toolfold serve --http` does: with http.auth,
// every request needs a token the config accepts, and a token limited to
// groups or to read-only tools sees only those; Origin is checked against
// http.allowedOrigins. With http.auth.oauth, route the protected resource
// metadata path (under /.well-known/) to this handler too, or mount it at
// "/", so that clients can discover the authorization server.
//
// Each call's options apply to the sessions of the handler it returns.
func (g *Gateway) Handler(opts *toolfold.HTTPOptions) (http.Handler, error) {
	var o gw.HTTPOptions
	if opts != nil {
		o = gw.HTTPOptions{Stateless: opts.Stateless, SessionTimeout: opts.SessionTimeout}
	}
	core := g.built.Gateway
	mcpHandler, err := core.HTTPHandler(&o)
	if err != nil {
		return nil, err
	}
	cfg := g.plan.HTTP
	var oauthServer *oauth.Server
	if c := cfg.Auth.OAuth; c != nil {
		if oauthServer, err = oauth.New(c, &oauth.Options{Logger: g.logger}); err != nil {
			return nil, fmt.Errorf("gateway: the config's http.auth.oauth cannot be applied: %w", err)
		}
		g.mu.Lock()
		g.closers = append(g.closers, oauthServer.Close)
		g.mu.Unlock()
	}
	api, err := httpapi.New(&httpapi.Options{
		MCP: httpapi.LimitedViews(mcpHandler, func(groups []string, readOnly bool) (http.Handler, error) {
			return core.LimitedHandler(groups, readOnly, &o)
		}, g.logger),
		Catalog: core.Catalog,
		Tokens:  cfg.Auth.Tokens, OAuth: oauthServer, AllowedOrigins: cfg.AllowedOrigins, Logger: g.logger,
	})
	if err != nil {
		return nil, fmt.Errorf("gateway: the config's http block cannot be applied: %w", err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if oauthServer == nil || !oauthServer.IsMetadataPath(r.URL.Path) {
			// The API serves MCP at /mcp; this handler serves it wherever
			// it is mounted, as the SDK's handler does.
			r2 := r.Clone(r.Context())
			r2.URL.Path, r2.URL.RawPath = "/mcp", ""
			r = r2
		}
		api.ServeHTTP(w, r)
	}), nil
}

// Close stops the MCP servers the gateway started, and what its handlers
// started to check tokens.
func (g *Gateway) Close() error {
	g.mu.Lock()
	closers := g.closers
	g.closers = nil
	g.mu.Unlock()
	for _, c := range closers {
		c()
	}
	if g.sup != nil {
		// No catalog is rebuilt for a gateway that is closing.
		g.sup.Close()
	}
	if g.built != nil && g.built.Gateway != nil {
		// Its sessions and goroutines first: they may be calling the
		// upstreams.
		_ = g.built.Gateway.Close()
	}
	if g.plan == nil || g.plan.Upstreams == nil {
		return nil
	}
	return g.plan.Upstreams.Close()
}

// stdio adapts the process's standard streams; closing them is the
// process's business, not the gateway's.
type stdio struct{ f *os.File }

func (s stdio) Read(p []byte) (int, error)  { return s.f.Read(p) }
func (s stdio) Write(p []byte) (int, error) { return s.f.Write(p) }
func (s stdio) Close() error                { return nil }
