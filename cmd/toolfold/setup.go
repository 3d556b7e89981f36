package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/toolfold/toolfold/internal/assemble"
	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/demo"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/libspec"
	"go.opentelemetry.io/otel/trace"
)

// deployment are the switches shared by the commands that read a catalog.
type deployment struct {
	config        string
	mode          string
	groups        string
	excludeGroups string
	readOnly      bool
	// noByteForwarding is --no-byte-forwarding.
	noByteForwarding bool
	// demo serves the built-in demo catalog instead of a config file.
	demo bool
	// observer hears calls and sessions (serve's metrics); not a flag.
	observer gateway.Observer
	// tracing, when set, builds the tracer the gateway traces with from
	// the plan's telemetry block (serve only); not a flag.
	tracing func(config.TelemetryConfig) (trace.TracerProvider, bool, error)
	// beforeStart, when set, checks the plan before any server starts
	// (serve refuses an exposed address there); not a flag.
	beforeStart func(*assemble.Plan) error
	// inspecting marks the commands that show a catalog rather than
	// serve it: a group the config names that the catalog lacks is a
	// warning there, so they still show the groups to fix the name by.
	inspecting bool
	// pinning writes first-sight pins and held items to the lock file
	// (serve); the other commands judge against it without writing.
	pinning bool
}

func (d *deployment) register(fs interface {
	StringVar(*string, string, string, string)
	BoolVar(*bool, string, bool, string)
}) {
	fs.StringVar(&d.config, "config", "", "config file (default: $TOOLFOLD_CONFIG, else ./toolfold.json, ./toolfold.yaml or ./toolfold.yml)")
	fs.BoolVar(&d.demo, "demo", false, "use the built-in demo catalog (in-process tools that need nothing installed) instead of a config file")
	fs.StringVar(&d.mode, "mode", "", "presentation: auto, flat, groups, grouped or search (default: the config's, else auto)")
	fs.StringVar(&d.groups, "groups", "", "comma-separated groups enabled in every view")
	fs.StringVar(&d.excludeGroups, "exclude-groups", "", "comma-separated groups removed with all their tools")
	fs.BoolVar(&d.readOnly, "read-only", false, "serve only tools that declare themselves read-only")
	fs.BoolVar(&d.noByteForwarding, "no-byte-forwarding", false, "send every tools/call through the typed path, none as bytes (also TOOLFOLD_BYTE_FORWARDING=off, or \"byteForwarding\": false)")
}

// configError is a config with problems: every one is printed, one a line.
type configError struct{ diags config.Diagnostics }

func (c configError) Error() string {
	return fmt.Sprintf("the config has %d problem(s); fix them and run 'toolfold check':\n%s", len(c.diags.Errors()), c.diags.String())
}

// noConfigError is the message of every command that needs a catalog when
// no config file is found: the demo is served only when asked for, so that
// a client pointed at the wrong folder fails loudly instead of quietly
// serving tools nobody configured (docs/design.md#command-line).
func noConfigError() error {
	return fmt.Errorf(`no config file found (looked at --config, $%s, then %s in the current folder). Write a toolfold.json that lists your MCP servers, for example:

  {"mcpServers": {
    "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}
  }}

or run 'toolfold demo' to try the built-in demo catalog`, config.ConfigEnvVar, strings.Join(config.DefaultFileNames(), ", "))
}

// plan finds what to serve: the config file, or the built-in demo when
// --demo asks for it.
func plan(ctx context.Context, e env, d deployment, logger *slog.Logger) (*assemble.Plan, error) {
	if _, err := expose.ParseMode(d.mode); err != nil {
		return nil, usageError{err.Error()}
	}
	if d.demo && d.config != "" {
		return nil, usageError{"--demo and --config both name a catalog; give one"}
	}
	noBytes, err := byteForwardingOff(d.noByteForwarding, e.lookupEnv)
	if err != nil {
		return nil, err
	}
	sw := assemble.Switches{Mode: d.mode, Enable: splitList(d.groups), Exclude: splitList(d.excludeGroups), ReadOnly: d.readOnly, NoByteForwarding: noBytes}
	raw, _ := e.lookupEnv(config.DepthEnvVar)
	depth, err := config.ParseDepth(raw)
	if err != nil {
		return nil, err
	}
	opts := assemble.Options{LookupEnv: e.lookupEnv, CacheDir: cacheDir(e), Logger: logger, Name: "toolfold", Version: version(), Depth: depth,
		Trust: !d.demo, TrustNoWrite: !d.pinning}
	var path string
	if !d.demo {
		cwd, _ := os.Getwd()
		p, found, err := config.Find(d.config, e.lookupEnv, cwd)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, noConfigError()
		}
		path = p
	}
	if d.demo {
		srv := demo.New(nil)
		spec, err := libspec.Of(srv)
		if err != nil {
			return nil, err
		}
		opts.Name = srv.Options().Name
		p, err := assemble.FromSpec("the built-in demo catalog", spec, sw, opts)
		if err != nil {
			return nil, err
		}
		p.Gateway.Instructions = srv.Options().Instructions
		return p, nil
	}
	// Without its own path, toolfold cannot tell an entry that runs it
	// again; the depth limit still stops such a loop.
	self, _ := os.Executable()
	cfg, diags := config.Load(path, config.Options{LookupEnv: e.lookupEnv, Self: self, Depth: depth})
	for _, w := range diags.Warnings() {
		// The diagnostic already says "warning:" after its location.
		fmt.Fprintln(e.stderr, w.String())
	}
	if diags.HasErrors() {
		return nil, configError{diags}
	}
	return assemble.FromConfig(ctx, cfg, sw, opts)
}

// runDemo is `toolfold demo [serve flags]`: serve with --demo.
func runDemo(ctx context.Context, e env, args []string) error {
	return serveAs(ctx, e, "demo", "[--http ADDR] [--mode M] [--groups a,b] [--exclude-groups c] [--read-only]", true, args)
}

// Waiting for upstream servers before the first catalog is built.
const (
	// serveWait bounds how long serve waits for servers that have no cached
	// tool list before it answers its first client. Those still starting
	// after it are pending: requests that need their tools wait for them
	// (at most their startTimeout; see gateway/pending.go), and clients
	// that refresh their lists are told when they arrive.
	serveWait = 2 * time.Second
	// inspectWait is how long the inspection commands wait: they must show
	// everything, but a server that hangs at start must not hang them.
	inspectWait = 2 * time.Minute
)

// noDiscovery makes build use cached tool lists only and start nothing.
const noDiscovery = -1

// pendingStart makes build answer at once: every upstream server's tools
// are pending until the catalog supervisor (assemble.Supervise) brings
// them, so a client's initialize never waits for the cache to be read or
// the catalog to be built.
const pendingStart = -2

// build plans and builds, and logs the warnings. Upstream servers with no
// cached tool list are started and waited for, at most wait (noDiscovery:
// none is started; pendingStart: nothing is read or started, and the
// catalog supervisor brings the tools). The caller closes the plan's
// upstreams when done.
func build(ctx context.Context, e env, d deployment, logger *slog.Logger, wait time.Duration) (*assemble.Plan, *assemble.Built, error) {
	p, err := plan(ctx, e, d, logger)
	if err != nil {
		return nil, nil, err
	}
	if d.observer != nil {
		p.Gateway.Observer = d.observer
	}
	if d.tracing != nil {
		tp, args, err := d.tracing(p.Telemetry)
		if err != nil {
			p.Upstreams.Close()
			return nil, nil, err
		}
		p.Gateway.Tracer, p.Gateway.TraceArguments = tp, args
	}
	p.WarnMissingGroups = d.inspecting
	if d.beforeStart != nil {
		if err := d.beforeStart(p); err != nil {
			p.Upstreams.Close()
			return nil, nil, err
		}
	}
	var b *assemble.Built
	if wait == pendingStart {
		b, err = p.BuildPending()
	} else {
		discover(ctx, e, p, logger, wait)
		b, err = p.Build()
	}
	if err != nil {
		p.Upstreams.Close()
		return nil, nil, err
	}
	tellWarnings(e, b.Warnings, nil)
	return p, b, nil
}

// discover starts the upstream servers with no cached tool list and waits
// for them, at most wait (noDiscovery: starts none).
func discover(ctx context.Context, e env, p *assemble.Plan, logger *slog.Logger, wait time.Duration) {
	if p.Upstreams == nil || wait == noDiscovery {
		return
	}
	for name, err := range p.Upstreams.Discover(ctx, wait) {
		// With a logger, the upstream machinery has already logged
		// the failure (at warn): one message per fact.
		if err != nil && logger == nil {
			fmt.Fprintf(e.stderr, "warning: MCP server %q is not available: %v\n", name, err)
		}
	}
}

// tellWarnings writes each warning once, leaving out those told before.
func tellWarnings(e env, warnings, before []string) {
	told := map[string]bool{} // once each, however many steps found it
	for _, w := range before {
		told[w] = true
	}
	for _, w := range warnings {
		if !told[w] {
			told[w] = true
			fmt.Fprintln(e.stderr, "warning:", w)
		}
	}
}

// cacheDir is where discovered catalogs are kept between runs.
func cacheDir(e env) string {
	if dir, ok := e.lookupEnv("TOOLFOLD_CACHE_DIR"); ok && dir != "" {
		return dir
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(base, "toolfold")
}

// byteForwardingOff reads the switches that turn byte forwarding off:
// --no-byte-forwarding, else TOOLFOLD_BYTE_FORWARDING (on or off); the
// config's byteForwarding decides when neither says.
func byteForwardingOff(flag bool, lookup func(string) (string, bool)) (bool, error) {
	if flag {
		return true, nil
	}
	v, ok := lookup("TOOLFOLD_BYTE_FORWARDING")
	if !ok {
		return false, nil
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "off", "false", "0", "no":
		return true, nil
	case "on", "true", "1", "yes", "":
		return false, nil
	}
	return false, usageError{fmt.Sprintf("TOOLFOLD_BYTE_FORWARDING=%q: set it to on or off", v)}
}
