package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/assemble"
	"github.com/toolfold/toolfold/internal/cmdtool"
	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/gateway"
)

func runCheck(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "check", "[--config F]")
	var d deployment
	d.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	path := "the built-in demo catalog"
	if !d.demo {
		cwd, _ := os.Getwd()
		p, found, err := config.Find(d.config, e.lookupEnv, cwd)
		if err != nil {
			return err
		}
		if !found {
			return noConfigError()
		}
		path = p
	}
	// check starts nothing: it reads the config and the tool lists cached
	// by earlier runs, so it is fast and safe to run anywhere.
	dd := deployment{mode: d.mode, groups: d.groups, excludeGroups: d.excludeGroups, readOnly: d.readOnly, demo: d.demo}
	if !d.demo {
		dd.config = path
	}
	p, b, err := build(ctx, e, dd, nil, noDiscovery)
	if err != nil {
		var ce configError
		var found *config.Error
		switch {
		case errors.As(err, &ce):
			// Every problem, one a line, then the count: the config's own
			// messages already name file, key and fix.
			fmt.Fprintln(e.stdout, ce.diags.String())
			return fmt.Errorf("%s has %d problem(s)", path, len(ce.diags.Errors()))
		case errors.As(err, &found):
			// Found against the cached tool lists: a group the config
			// names that nothing derives, in the same form.
			fmt.Fprintln(e.stdout, found.Problems.String())
			return fmt.Errorf("%s has %d problem(s)", path, len(found.Problems))
		}
		return err
	}
	defer p.Upstreams.Close()
	// The config read again, quietly (its warnings were told above), for
	// the programs it names: a valid config that cannot start them is not
	// one that serves.
	cfg, diags := config.Load(path, config.Options{LookupEnv: e.lookupEnv})
	if d.demo || diags.HasErrors() {
		cfg = nil
	}
	if cfg != nil {
		missing := missingPrograms(cfg)
		for _, w := range missing.Warnings() {
			fmt.Fprintln(e.stderr, w.String())
		}
		if errs := missing.Errors(); len(errs) > 0 {
			fmt.Fprintln(e.stdout, errs.String())
			return fmt.Errorf("%s has %d problem(s)", path, len(errs))
		}
	}
	fmt.Fprintf(e.stdout, "%s is valid: %d tools in %d groups.\n", path, len(b.Catalog.Tools()), len(b.Catalog.Groups()))
	if st := p.Trust(); st != nil {
		// What serve would hold, and what the scan finds, in the cached
		// lists: a held item is not a config problem, but it is news.
		held := 0
		for _, sp := range st.Lock.Servers {
			held += len(sp.Held)
		}
		if held > 0 {
			fmt.Fprintf(e.stdout, "%d upstream definition(s) differ from %s and are held; 'toolfold pins' shows them and how to approve them.\n", held, st.LockFile)
		}
		for _, f := range st.Findings {
			fmt.Fprintf(e.stdout, "scan finding: %s\n", f)
		}
	}
	if cfg != nil {
		home, _ := e.lookupEnv("HOME")
		sandboxReport(e.stdout, cfg, home)
	}
	if p.Upstreams != nil {
		var unknown []string
		for _, st := range p.Upstreams.Status() {
			if !st.ToolsCached && !st.Disabled {
				unknown = append(unknown, st.Name)
			}
		}
		if len(unknown) > 0 {
			fmt.Fprintf(e.stdout, "The tools of %s are not known yet (no cached list), so the groups' rules, and the names of groups derived from them or declared by the servers, were not checked against them; 'toolfold tools' starts the servers and caches their lists.\n", strings.Join(unknown, ", "))
		}
	}
	return nil
}

// missingPrograms finds the programs of servers and commands that are not
// on this machine: a problem, except for a server marked optional, whose
// absence the rest is meant to survive. Disabled entries are not started,
// so they are not looked for.
func missingPrograms(cfg *config.Config) config.Diagnostics {
	var out config.Diagnostics
	for _, key := range slices.Sorted(maps.Keys(cfg.MCPServers)) {
		s := cfg.MCPServers[key]
		if s.Disabled || s.Command == "" {
			continue
		}
		// As the server is started: the name on toolfold's own PATH, or a
		// path relative to its cwd.
		name := s.Command
		if strings.ContainsRune(name, '/') && !filepath.IsAbs(name) && s.Cwd != "" {
			name = filepath.Join(s.Cwd, name)
		}
		if _, err := exec.LookPath(name); err == nil {
			continue
		}
		keyPath := "mcpServers." + key + ".command"
		if s.Optional {
			out = append(out, cfg.Problemf(config.SeverityWarning, keyPath, "program %q is not found on PATH or is not executable; server %q is optional, so the rest serves without it", s.Command, key))
		} else {
			out = append(out, cfg.Problemf(config.SeverityError, keyPath, "program %q is not found on PATH or is not executable; install it, fix \"command\", or mark the server \"optional\": true to serve the rest without it", s.Command))
		}
	}
	for _, key := range slices.Sorted(maps.Keys(cfg.Commands)) {
		c := cfg.Commands[key]
		if c.Disabled {
			continue
		}
		if _, err := cmdtool.ResolveCommand(assemble.Program(c)); err != nil {
			out = append(out, cfg.Problemf(config.SeverityError, "commands."+key+".command", "%v", err))
		}
	}
	return out
}

func runCall(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "call", "[--config F] [--mode M] TOOL [JSON]")
	var d deployment
	d.register(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return usageError{"name one tool, and optionally its arguments as a JSON object: toolfold call TOOL '{\"key\": \"value\"}'"}
	}
	name := pos[0]
	var arguments json.RawMessage
	if len(pos) == 2 {
		arguments = json.RawMessage(pos[1])
		var obj map[string]any
		if err := json.Unmarshal(arguments, &obj); err != nil {
			return usageError{fmt.Sprintf("the arguments must be a JSON object, like '{\"key\": \"value\"}': %v", err)}
		}
	}
	// Every tool is reachable by name in the flat mode; --mode calls the
	// names another mode exposes (a grouped tool with its "action").
	if d.mode == "" {
		d.mode = "flat"
	}
	d.inspecting = true
	p, b, err := build(ctx, e, d, nil, inspectWait)
	if err != nil {
		return err
	}
	defer p.Upstreams.Close()
	res, err := callInProcess(ctx, b.Gateway, name, arguments)
	if err != nil {
		return err
	}
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			fmt.Fprintln(e.stdout, c.Text)
		default:
			raw, _ := json.Marshal(c)
			fmt.Fprintln(e.stdout, string(raw))
		}
	}
	if len(res.Content) == 0 && res.StructuredContent != nil {
		raw, _ := json.MarshalIndent(res.StructuredContent, "", "  ")
		fmt.Fprintln(e.stdout, string(raw))
	}
	if res.IsError {
		return fmt.Errorf("%s returned an error (shown above)", name)
	}
	return nil
}

// callInProcess calls one tool through the gateway over an in-memory
// connection, exactly as a client would.
func callInProcess(ctx context.Context, gw *gateway.Gateway, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	ct, st := mcp.NewInMemoryTransports()
	ss, err := gw.Connect(ctx, gateway.ClientInfo{Name: "toolfold-call"}, st)
	if err != nil {
		return nil, err
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "toolfold-call", Version: version()}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: name}
	if args != nil {
		params.Arguments = args
	}
	return cs.CallTool(ctx, params)
}
