package assemble

import (
	"fmt"
	"log/slog"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/autogroup"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/tokens"
	"github.com/toolfold/toolfold/internal/view"
)

// Plan is everything needed to serve a catalog.
type Plan struct {
	// Origin says where the catalog came from, for messages ("toolfold.json",
	// "the built-in demo catalog").
	Origin string
	// Spec holds every source's tools and the groups with their rules.
	Spec catalog.Spec
	// View shapes every client's view.
	View view.Options
	// Gateway holds the presentation options.
	Gateway gateway.Options
	// Warnings are problems worth telling the user that do not stop serving.
	Warnings []string
	// Commands names the sources that are command-line programs.
	Commands map[string]bool
	// HTTP holds the config's HTTP settings: auth tokens and allowed
	// origins.
	HTTP config.HTTPConfig
	// Telemetry holds the config's telemetry settings (trace export).
	Telemetry config.TelemetryConfig
	// Upstreams are the plan's MCP servers, nil if it has none. Their tools
	// join Spec's whenever the catalog is built.
	Upstreams *Upstreams
	// AutoGroups, when set, splits big groups into derived groups every
	// time the catalog is built (disclosure.autoGroups).
	AutoGroups *autogroup.Settings

	// cfg is the config planned from, if any, to locate problems in it;
	// refs are the groups it names that each catalog must have.
	cfg  *config.Config
	refs []groupRef
	// buildHook, when set, builds catalogs in place of catalog.Build: tests
	// count the builds through it.
	buildHook func(catalog.Spec) (*catalog.Result, error)
	// trust judges what sources say against the lock file (see trustGate);
	// nil when the plan does not pin. helpCommands are the programs whose
	// actions come from their help, which it pins too.
	trust        *trustGate
	helpCommands map[string]bool
	// WarnMissingGroups makes Build warn about the groups the config
	// names that the catalog lacks instead of refusing: for the commands
	// that show a catalog, which must show it to help fix the names.
	WarnMissingGroups bool
}

// spec is the plan's tools and groups with the upstream tools known now,
// the upstreams' generation they are from, and warnings about upstream
// tools that had to be left out.
func (p *Plan) spec() (catalog.Spec, uint64, []string) {
	spec := p.Spec
	var warnings []string
	var gen uint64
	if p.Upstreams != nil {
		gen = p.Upstreams.currentGeneration() // before the tools: see there
		var tools []*catalog.Tool
		tv := p.Upstreams.trusted()
		tools, warnings = p.Upstreams.tools(tv)
		spec.Tools = append(append([]*catalog.Tool(nil), p.Spec.Tools...), tools...)
		spec.Groups = p.Upstreams.withServerInstructions(p.Upstreams.declaredGroups(p.Spec.Groups, tools, tv), tv)
		spec.Held = p.Upstreams.withGoneNotes(p.Upstreams.heldNotes(tv))
		spec.PendingSources = p.Upstreams.pending()
		spec.UnavailableSources = p.Upstreams.unavailable()
		spec.UnavailableRetry = p.Upstreams.retries(spec.UnavailableSources)
		spec.SourcePrefixes = p.Upstreams.prefixes()
	}
	if len(p.helpCommands) > 0 && p.trust != nil {
		spec.Tools, spec.Held = p.trustedHelp(spec.Tools, spec.Held)
	}
	return spec, gen, warnings
}

// Built is a plan made real.
type Built struct {
	Catalog *catalog.Catalog
	Space   *view.Space
	Gateway *gateway.Gateway
	// Warnings are the plan's and the catalog's.
	Warnings []string
	// sup supervises the catalog's life from its first build on.
	sup *Supervisor
	// pending: built by BuildPending, every upstream's tools still to
	// come; Complete brings them.
	pending bool
}

// Build validates the plan and builds the catalog, the view space and the
// gateway. Every problem it finds comes back as one error that names them
// all.
//
// A group the config names (an initial group, a token's) that the catalog
// lacks is an error, a *config.Error, unless a source still starting may
// bring it: then it is checked when the source's tools arrive (Follow).
func (p *Plan) Build() (*Built, error) {
	sup := newSupervisor(p) // before the tools are read: it counts changes
	space, gen, warnings, err := p.space(!p.WarnMissingGroups)
	if err != nil {
		return nil, err
	}
	if p.Gateway.ToolsCost == nil {
		p.Gateway.ToolsCost = exactToolsCost
	}
	gw, err := gateway.New(space, &p.Gateway)
	if err != nil {
		return nil, fmt.Errorf("%s cannot be presented: %w", p.origin(), err)
	}
	b := &Built{Catalog: space.Catalog(), Space: space, Gateway: gw, sup: sup}
	b.Warnings = append(append(b.Warnings, p.Warnings...), warnings...)
	sup.built(b, gen)
	return b, nil
}

// BuildPending is Build for a start that answers clients at once: its
// catalog holds the plan's own tools (commands, in-process tools), and
// every upstream server's tools are pending, as a server's are while it
// starts, so a request that needs them waits for them. Nothing is read
// from the upstreams' cache or started: Complete does that, and hands the
// catalog of what it finds to the gateway. At 20,000 cached tools that is
// seconds of work a client's initialize would otherwise wait for.
func (p *Plan) BuildPending() (*Built, error) {
	if p.Upstreams == nil {
		return p.Build()
	}
	sup := newSupervisor(p)
	spec := p.Spec
	spec.PendingSources = p.Upstreams.names()
	spec.SourcePrefixes = p.Upstreams.prefixes()
	space, _, warnings, err := p.spaceOf(spec, nil, false)
	if err != nil {
		return nil, err
	}
	if p.Gateway.ToolsCost == nil {
		p.Gateway.ToolsCost = exactToolsCost
	}
	opts := p.Gateway
	opts.Building = true // requests wait for Complete's catalog
	gw, err := gateway.New(space, &opts)
	if err != nil {
		return nil, fmt.Errorf("%s cannot be presented: %w", p.origin(), err)
	}
	b := &Built{Catalog: space.Catalog(), Space: space, Gateway: gw, pending: true, sup: sup}
	b.Warnings = append(append(b.Warnings, p.Warnings...), warnings...)
	sup.built(b, 0)
	return b, nil
}

// Complete builds the catalog of the tools known now, after BuildPending,
// hands it to b's gateway, and from then on follows the upstreams as
// Follow does. It returns the warnings of the build, and the error Build
// would have returned (a group the config names that the catalog lacks):
// then the gateway keeps the pending catalog, and the caller should stop
// serving, as a failed Build stops a start. Supervise calls it for a
// pending start; p is the plan b was built from.
func (p *Plan) Complete(b *Built) (warnings []string, err error) {
	if !b.pending {
		return nil, nil
	}
	return b.sup.complete()
}

// space builds the catalog of what is known now and the views' space over
// it, with the upstreams' generation it is from and the warnings of both
// steps. Groups the config names that the catalog cannot have are an error
// when strict, else warnings.
func (p *Plan) space(strict bool) (*view.Space, uint64, []string, error) {
	spec, gen, warnings := p.spec()
	space, _, warnings, err := p.spaceOf(spec, warnings, strict)
	return space, gen, warnings, err
}

// spaceOf is space over a given spec, with the warnings found making it.
func (p *Plan) spaceOf(spec catalog.Spec, warnings []string, strict bool) (*view.Space, uint64, []string, error) {
	first := spec
	if p.AutoGroups != nil {
		// The catalog of the declared groups is only read to derive from:
		// it gets copies of the tools, since Build fills in their indexes
		// and groups and the final build below owns the originals.
		first.Tools = make([]*catalog.Tool, len(spec.Tools))
		for i, t := range spec.Tools {
			if t != nil { // a nil tool is reported by Build
				cp := *t
				first.Tools[i] = &cp
			}
		}
	}
	res, err := p.build(first)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("the tools and groups of %s do not fit together: %w", p.origin(), err)
	}
	if p.AutoGroups != nil {
		// Derived groups depend on the tools known now, so they are made
		// on every build, from the catalog of the declared groups.
		refined, derivedWarnings := autogroup.Refine(spec, res.Catalog, *p.AutoGroups)
		again, err := p.build(refined)
		if err != nil {
			return nil, 0, nil, fmt.Errorf("the derived groups of %s do not fit its declared ones (set disclosure.autoGroups.enabled to false to go without): %w", p.origin(), err)
		}
		res = again
		warnings = append(warnings, derivedWarnings...)
		p.flushDerived(spec)
	}
	if p.cfg != nil {
		sev := config.SeverityWarning
		if strict {
			sev = config.SeverityError
		}
		problems := p.refProblems(res.Catalog, sev)
		if problems.HasErrors() {
			return nil, 0, nil, &config.Error{Problems: problems}
		}
		for _, pr := range problems {
			// Whoever tells the warnings says they are warnings.
			pr.Severity = config.SeverityError
			warnings = append(warnings, pr.String())
		}
	}
	opts := p.View
	// An initial group still on its way is enabled once it comes.
	opts.InitialGroups = p.initialGroups(res.Catalog)
	if p.AutoGroups != nil {
		opts.InitialGroups = withDerived(res.Catalog, opts.InitialGroups)
	}
	space, err := view.NewSpace(res.Catalog, &opts)
	if err != nil {
		return nil, 0, nil, err
	}
	return space, 0, append(warnings, res.Warnings...), nil
}

// build builds a catalog, through the plan's hook if a test set one.
func (p *Plan) build(spec catalog.Spec) (*catalog.Result, error) {
	if p.buildHook != nil {
		return p.buildHook(spec)
	}
	return catalog.Build(spec)
}

// LogWarnings sends the warnings to a logger.
func (b *Built) LogWarnings(log *slog.Logger) {
	if log == nil {
		return
	}
	for _, w := range b.Warnings {
		log.Warn(w)
	}
}

// exactToolsCost counts o200k tokens, the figure `toolfold tokens` reports,
// so guidance and the command agree.
func exactToolsCost(tools []*mcp.Tool) int {
	n, _ := tokens.ToolsCost(tools)
	return n
}

func (p *Plan) origin() string {
	if p.Origin == "" {
		return "the catalog"
	}
	return p.Origin
}

// SetGroupStates applies resolved deployment switches (flags, environment,
// config) to the plan's groups.
func (p *Plan) SetGroupStates(states map[string]catalog.State) {
	for i := range p.Spec.Groups {
		if s, ok := states[string(p.Spec.Groups[i].ID)]; ok {
			p.Spec.Groups[i].Default = s
		}
	}
}

// GroupIDs lists the plan's groups, for switch resolution.
func (p *Plan) GroupIDs() []string {
	out := make([]string, len(p.Spec.Groups))
	for i, g := range p.Spec.Groups {
		out[i] = string(g.ID)
	}
	return out
}

// AddSpec adds a Go library server's tools and groups to the plan, beside
// what the config declares. Its groups keep the states the code gave them;
// a tool or group name that collides with the config's is refused when the
// plan is built. A read-only spec brings only its read-only tools: the
// plan's own ReadOnly covers the whole catalog, not one library server.
func (p *Plan) AddSpec(spec catalog.Spec) {
	if !spec.ReadOnly {
		p.Spec.Tools = append(p.Spec.Tools, spec.Tools...)
		p.Spec.Groups = append(p.Spec.Groups, spec.Groups...)
		return
	}
	dropped := map[catalog.ToolID]bool{}
	for _, t := range spec.Tools {
		if t.ReadOnly() {
			p.Spec.Tools = append(p.Spec.Tools, t)
		} else {
			dropped[t.ID] = true
		}
	}
	// Groups stop naming the dropped tools, so that the build does not
	// warn about tools "no source offers".
	for _, g := range spec.Groups {
		g.Members.Tools = slices.DeleteFunc(slices.Clone(g.Members.Tools), func(id catalog.ToolID) bool { return dropped[id] })
		p.Spec.Groups = append(p.Spec.Groups, g)
	}
}

// withDerived adds to groups enabled in every view the groups derived
// inside them: a group the config enables from the start keeps all its
// tools visible once they sit in derived groups.
func withDerived(cat *catalog.Catalog, initial []catalog.GroupID) []catalog.GroupID {
	out := slices.Clone(initial)
	for _, id := range initial {
		g, ok := cat.Group(id)
		if !ok {
			continue
		}
		g.Walk(func(d *catalog.Group) {
			if d.Derived && !slices.Contains(out, d.ID) {
				out = append(out, d.ID)
			}
		})
	}
	return out
}
