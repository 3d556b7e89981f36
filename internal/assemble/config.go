package assemble

import (
	"context"
	"log/slog"
	"slices"
	"strings"

	"github.com/toolfold/toolfold/internal/autogroup"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/cmdtool"
	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/meta"
	"github.com/toolfold/toolfold/internal/view"
)

// Switches are the deployment-level switches of the command line, the
// strongest there are (docs/design.md#config).
type Switches struct {
	// Mode overrides disclosure.mode when set.
	Mode string
	// Enable and Exclude are --groups and --exclude-groups.
	Enable, Exclude []string
	// ReadOnly is --read-only; it adds to the config's readOnly.
	ReadOnly bool
	// NoByteForwarding is --no-byte-forwarding (or
	// TOOLFOLD_BYTE_FORWARDING=off); it overrides the config's
	// byteForwarding.
	NoByteForwarding bool
}

// Options carry what assembling needs from the outside world.
type Options struct {
	// LookupEnv reads MCP_GROUP_<NAME> switches; nil reads none.
	LookupEnv config.LookupEnv
	// CacheDir keeps discovered catalogs between runs; empty disables it.
	CacheDir string
	Logger   *slog.Logger
	// Name and Version identify the gateway to clients.
	Name, Version string
	// Trust pins what the upstreams say in the config's lock file and holds
	// what changed (the trust block, internal/trust). The toolfold command
	// turns it on; code that assembles a config for a test or a library
	// leaves it off, so no lock file is written beside its config.
	Trust bool
	// TrustNoWrite judges against the lock without writing it, whatever
	// trust.readOnly says: for the commands that show what would be served.
	TrustNoWrite bool
	// Depth is how many toolfolds run above this one; the stdio servers it
	// starts are told Depth+1 (config.DepthEnvVar), so that a loop of
	// configs listing each other stops at config.MaxDepth.
	Depth int
}

// FromConfig plans what a loaded config serves.
func FromConfig(ctx context.Context, cfg *config.Config, sw Switches, opts Options) (*Plan, error) {
	p := &Plan{Origin: cfg.File, HTTP: cfg.HTTP, Telemetry: cfg.Telemetry, cfg: cfg, refs: groupRefs(cfg)}
	if p.Origin == "" {
		p.Origin = "the config"
	}
	readOnly := cfg.ReadOnly || sw.ReadOnly
	p.Spec.ReadOnly = readOnly

	// Groups the config declares or implies, with their membership rules.
	groups := map[string]*catalog.GroupSpec{}
	for _, name := range cfg.GroupNames() {
		gc := cfg.Group(name)
		gs := &catalog.GroupSpec{
			ID: catalog.GroupID(name), Description: gc.Description, Instructions: gc.Instructions,
			Parent: catalog.GroupID(cfg.ParentOf(name)), Tags: gc.Tags,
			Members: catalog.Members{Globs: gc.Tools, Prefixes: gc.Prefixes, Sources: gc.Servers, Tags: gc.Tags},
		}
		if exp, err := catalog.ParseExposition(string(gc.Exposition)); err == nil {
			gs.Exposition = exp
		}
		groups[name] = gs
	}

	if opts.Trust && pinsAnything(cfg) {
		p.trust = newTrustGate(cfg, trustMemoPath(opts.CacheDir, cfg.LockPath()), opts.Logger)
		p.trust.noWrite = opts.TrustNoWrite
	}

	// Command-line programs: one group each, named after the entry.
	cmdNames := make([]string, 0, len(cfg.Commands))
	for name, c := range cfg.Commands {
		if !c.Disabled {
			cmdNames = append(cmdNames, name)
		}
	}
	slices.Sort(cmdNames)
	for _, name := range cmdNames {
		prog := Program(cfg.Commands[name])
		if p.Commands == nil {
			p.Commands = map[string]bool{}
		}
		p.Commands[name] = true
		tools, group, err := CommandTools(ctx, prog, CommandOptions{
			Separator: cfg.Exposition.Separator, CacheDir: opts.CacheDir, ReadOnly: readOnly, Logger: opts.Logger,
			Secrets: CommandSecrets(cfg.Commands[name]),
		})
		if err != nil {
			return nil, err
		}
		p.Spec.Tools = append(p.Spec.Tools, tools...)
		if prog.Discover == cmdtool.DiscoverHelp {
			if p.helpCommands == nil {
				p.helpCommands = map[string]bool{}
			}
			p.helpCommands[name] = true
		}
		if gs, ok := groups[name]; ok {
			gs.Members.Tools = append(gs.Members.Tools, group.Members.Tools...)
			if gs.Description == "" {
				gs.Description = group.Description
			}
		} else {
			groups[name] = &group
		}
	}

	// MCP servers: each one's tools join the group named after it (unless
	// its config says otherwise).
	for key, sc := range cfg.MCPServers {
		if sc.Disabled {
			continue
		}
		if group, grouped := sc.EffectiveGroup(); grouped {
			gs, ok := groups[group]
			if !ok {
				gs = &catalog.GroupSpec{ID: catalog.GroupID(group)}
				groups[group] = gs
			}
			gs.Members.Sources = append(gs.Members.Sources, key)
			if gs.Description == "" {
				gs.Description = autogroup.ServerDescription(key)
			}
		}
	}

	// A disabled server's implied group is left out: nothing can fill it.
	for _, sc := range cfg.MCPServers {
		if group, grouped := sc.EffectiveGroup(); grouped && sc.Disabled {
			if _, declared := cfg.Groups[group]; !declared && emptyRules(groups[group]) {
				delete(groups, group)
			}
		}
	}

	names := make([]string, 0, len(groups))
	for name := range groups {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p.Spec.Groups = append(p.Spec.Groups, *groups[name])
	}

	// Flags may name derived groups, which exist only once the tools are
	// known: they are applied when the groups are derived.
	enable, deferEnable := splitDerivedNames(cfg, names, sw.Enable)
	exclude, deferExclude := splitDerivedNames(cfg, names, sw.Exclude)
	states, diags := cfg.ResolveGroupStates(names, config.Overrides{Enable: enable, Exclude: exclude}, opts.LookupEnv)
	if diags.HasErrors() {
		return nil, diags.Err()
	}
	for _, w := range diags.Warnings() {
		p.Warnings = append(p.Warnings, w.String())
	}
	p.SetGroupStates(catalogStates(states))
	p.Upstreams = newUpstreams(cfg, states, opts, p.trust)
	p.AutoGroups = autoGroups(cfg, opts.LookupEnv, deferEnable, deferExclude)
	rememberDerived(p.AutoGroups, cfg, opts.CacheDir, opts.Logger)

	modeName := string(cfg.Disclosure.Mode)
	if sw.Mode != "" {
		modeName = sw.Mode
	}
	mode, err := expose.ParseMode(modeName)
	if err != nil {
		return nil, err
	}
	exp, _ := catalog.ParseExposition(string(cfg.Exposition.Default))
	initial := make([]catalog.GroupID, len(cfg.Disclosure.InitialGroups))
	for i, g := range cfg.Disclosure.InitialGroups {
		initial[i] = catalog.GroupID(g)
	}
	p.View = view.Options{MaxTools: cfg.Disclosure.MaxTools, InitialGroups: initial, HideUngrouped: cfg.Disclosure.Ungrouped == config.UngroupedHidden}
	mt := cfg.Disclosure.MetaTools
	p.Gateway = gateway.Options{
		Name: opts.Name, Version: opts.Version,
		Mode: mode, Exposition: exp, AnnotateDescriptions: cfg.Exposition.AnnotateDescriptions,
		Meta: meta.Names{Enable: mt.EnableTools, Disable: mt.DisableTools, Reset: mt.ResetTools, Find: mt.FindTools,
			Describe: mt.DescribeTools, Call: mt.CallTool, Guidance: mt.Guidance},
		ResetTools: cfg.Disclosure.ResetTools, RefreshingClients: cfg.Disclosure.RefreshingClients,
		SearchingClients: cfg.Disclosure.SearchingClients,
		// Tokens limit what a client reaches, so its lists are its own.
		PrivateLists:     cfg.HTTP.Auth.Enabled(),
		NoByteForwarding: sw.NoByteForwarding || (cfg.ByteForwarding != nil && !*cfg.ByteForwarding),
		Logger:           opts.Logger,
		// The gateway's default when the config sets none (zero).
		AnswerBytesInFlight: int64(cfg.AnswerBytesInFlight),
	}
	if p.Upstreams != nil {
		p.Gateway.Extras = p.Upstreams
		p.Gateway.StartWait = p.Upstreams.StartWait()
		// Follow passes the servers' list changes on.
		p.Gateway.ExtrasListChanged = true
	}
	return p, nil
}

func catalogStates(states map[string]config.GroupState) map[string]catalog.State {
	out := make(map[string]catalog.State, len(states))
	for name, s := range states {
		st, err := catalog.ParseState(string(s))
		if err == nil {
			out[name] = st
		}
	}
	return out
}

// FromSpec plans a catalog that comes from Go code (the built-in demo, a
// library server), with the same deployment switches as a config.
func FromSpec(origin string, spec catalog.Spec, sw Switches, opts Options) (*Plan, error) {
	p := &Plan{Origin: origin, Spec: spec}
	p.Spec.ReadOnly = p.Spec.ReadOnly || sw.ReadOnly
	// The same precedence as a config's groups: flags, then environment,
	// then what the code declared.
	empty := &config.Config{Groups: map[string]config.GroupConfig{}}
	for _, g := range spec.Groups {
		gc := config.GroupConfig{Name: string(g.ID), Parent: string(g.Parent), Default: config.GroupState(g.Default.String())}
		empty.Groups[string(g.ID)] = gc
	}
	states, diags := empty.ResolveGroupStates(p.GroupIDs(), config.Overrides{Enable: sw.Enable, Exclude: sw.Exclude}, opts.LookupEnv)
	if diags.HasErrors() {
		return nil, diags.Err()
	}
	for _, w := range diags.Warnings() {
		p.Warnings = append(p.Warnings, w.String())
	}
	p.SetGroupStates(catalogStates(states))
	mode, err := expose.ParseMode(sw.Mode)
	if err != nil {
		return nil, err
	}
	p.Gateway = gateway.Options{Name: opts.Name, Version: opts.Version, Mode: mode, AnnotateDescriptions: true, Logger: opts.Logger}
	return p, nil
}

func emptyRules(gs *catalog.GroupSpec) bool {
	if gs == nil {
		return true
	}
	m := gs.Members
	return len(m.Tools)+len(m.Globs)+len(m.Prefixes)+len(m.Sources)+len(m.Tags) == 0
}

// autoGroups turns disclosure.autoGroups and the per-server and per-group
// switches into derivation settings; nil when derivation is off.
func autoGroups(cfg *config.Config, lookup config.LookupEnv, enable, exclude []string) *autogroup.Settings {
	ag := cfg.Disclosure.AutoGroups
	if !ag.Enabled {
		return nil
	}
	s := &autogroup.Settings{Size: ag.Size, Named: append(slices.Clone(enable), exclude...)}
	// Only groups the config knows, as it says (groups of Go library
	// servers and groups tools declare in their _meta were made by hand
	// upstream: they are kept as given). The config's own check of names
	// that only derivation can bring follows the same rule.
	splits := cfg.SplitGroups()
	s.Derive = func(g *catalog.Group) bool { return splits[string(g.ID)] }
	if lookup != nil || len(s.Named) > 0 {
		s.State = func(id catalog.GroupID, inherited catalog.State) catalog.State {
			// Strongest first, as for declared groups: flags, then the
			// environment.
			switch {
			case slices.Contains(exclude, string(id)):
				return catalog.Excluded
			case slices.Contains(enable, string(id)):
				return catalog.Enabled
			case lookup == nil:
				return inherited
			}
			raw, ok := lookup(config.GroupEnvVar(string(id)))
			if !ok {
				return inherited
			}
			if st, valid := config.ParseGroupSwitch(raw); valid {
				if cs, err := catalog.ParseState(string(st)); err == nil {
					return cs
				}
			}
			return inherited
		}
	}
	for name, gc := range cfg.Groups {
		for _, m := range gc.Merge {
			if s.Merge == nil {
				s.Merge = map[catalog.GroupID][]catalog.GroupID{}
			}
			s.Merge[catalog.GroupID(name)] = append(s.Merge[catalog.GroupID(name)], catalog.GroupID(m))
		}
	}
	return s
}

// splitDerivedNames separates the names of a flag that the config knows
// from those that may name derived groups: unknown names inside a known
// group ("twilio.queue" inside "twilio").
func splitDerivedNames(cfg *config.Config, known []string, names []string) (kept, derived []string) {
	for _, n := range names {
		parent, _, dotted := strings.Cut(n, ".")
		if dotted && !slices.Contains(known, n) && slices.Contains(known, parent) && cfg.Disclosure.AutoGroups.Enabled {
			derived = append(derived, n)
			continue
		}
		kept = append(kept, n)
	}
	return kept, derived
}

// pinsAnything reports whether a config has anything to pin: an MCP server
// or a program whose actions come from its help (declared actions are the
// config's own words, reviewed with it).
func pinsAnything(cfg *config.Config) bool {
	for _, sc := range cfg.MCPServers {
		if !sc.Disabled {
			return true
		}
	}
	for _, c := range cfg.Commands {
		if !c.Disabled && Program(c).Discover == cmdtool.DiscoverHelp {
			return true
		}
	}
	return false
}
