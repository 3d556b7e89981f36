package expose

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/view"
)

// Mode is how a catalog is presented to a client (docs/design.md#modes).
type Mode string

const (
	// Flat lists every tool; there is nothing to unfold.
	Flat Mode = "flat"
	// Groups lists ungrouped tools, the tools of enabled groups and the
	// meta-tools; the list changes as the client enables groups.
	Groups Mode = "groups"
	// Grouped lists one tool per top-level group; the list never changes.
	Grouped Mode = "grouped"
	// Search lists the discovery meta-tools and ungrouped tools; everything
	// else is reached through search and call_tool.
	Search Mode = "search"
	// Auto picks Groups or Search per client.
	Auto Mode = "auto"
)

// ParseMode reads a mode name.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case Flat, Groups, Grouped, Search, Auto:
		return m, nil
	case "":
		return Auto, nil
	}
	return "", fmt.Errorf("unknown mode %q: use flat, groups, grouped, search or auto", s)
}

// Options shape an exposure.
type Options struct {
	// Mode is the presentation; Auto must be resolved before Build.
	Mode Mode
	// Exposition applies to groups that do not choose their own; the zero
	// value means flat.
	Exposition catalog.Exposition
	// AnnotateDescriptions marks read-only and destructive tools in their
	// descriptions, for clients that ignore annotations.
	AnnotateDescriptions bool
	// Reserved are names the exposure must not use (the meta-tools').
	Reserved []string
	// Share is an exposure of the same space, in another mode, whose flat
	// wire tools this one reuses: they do not depend on the mode, and a
	// gateway serving several modes of a large catalog would otherwise
	// hold each tool's wire form once per mode. It is ignored when it was
	// built on another space or with other AnnotateDescriptions.
	Share *Exposure
}

// Wire is one tool as a client sees it: either a single catalog tool (flat)
// or a group folded into one tool with an "action" property (grouped).
type Wire struct {
	// Name is the wire name, unique in the exposure.
	Name string
	// Tool is the definition sent in tools/list.
	Tool *mcp.Tool
	// Target is the tool a flat wire runs; nil for a grouped wire.
	Target *catalog.Tool
	// Group is the group a grouped wire folds; nil for a flat wire.
	Group *catalog.Group
	// Actions are a grouped wire's actions, in enum order.
	Actions []*Action

	actionByName map[string]*Action
	check        *validator // flat only
	headerBound  bool       // flat only: see HeaderBound
}

// HeaderBound reports whether a flat wire's input schema binds an argument
// to an HTTP header (x-mcp-header, SEP-2243), which the streamable HTTP
// transport then checks on every call.
func (w *Wire) HeaderBound() bool { return w.headerBound }

// Action is one choice of a grouped wire.
type Action struct {
	Name  string
	Tool  *catalog.Tool
	check *validator
}

// Exposure is a catalog rendered for one mode: every wire tool, prebuilt,
// and the routes back. It is immutable and shared by all sessions.
type Exposure struct {
	mode     Mode
	annotate bool
	cat      *catalog.Catalog
	space    *view.Space
	flat     []*Wire // by tool index
	grouped  []*Wire // by group index; nil where the group has none
	routes   map[string]*Wire
	// near indexes the wire names (every tool's flat one, then the
	// groups'), made on the first misspelt name (NearNames).
	near struct {
		once  sync.Once
		index *catalog.NearIndex
	}
}

// NearNames indexes every tool's flat wire name and every group's wire
// name, for suggesting the nearest to a name that is none of them.
func (e *Exposure) NearNames() *catalog.NearIndex {
	e.near.once.Do(func() {
		names := make([]string, 0, len(e.flat)+len(e.grouped))
		for _, w := range e.flat {
			names = append(names, w.Name)
		}
		for _, w := range e.grouped {
			if w != nil {
				names = append(names, w.Name)
			}
		}
		e.near.index = catalog.NewNearIndex(names)
	})
	return e.near.index
}

// Build renders space's catalog for opts.Mode. It fails when two wire names
// collide, naming both sources of the name.
func Build(space *view.Space, opts *Options) (*Exposure, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Mode == "" || o.Mode == Auto {
		return nil, fmt.Errorf("expose.Build needs a concrete mode, not %q", o.Mode)
	}
	cat := space.Catalog()
	e := &Exposure{
		mode: o.Mode, annotate: o.AnnotateDescriptions, cat: cat, space: space,
		flat:    make([]*Wire, len(cat.Tools())),
		grouped: make([]*Wire, len(cat.Groups())),
		routes:  make(map[string]*Wire, len(cat.Tools())+len(cat.Groups())),
	}
	// origin names what claimed each wire name, spelled out only for a
	// collision: formatting it for each of 20,000 tools would be waste.
	type claimant struct{ kind, id string }
	origin := make(map[string]claimant, len(cat.Tools())+len(o.Reserved))
	for _, r := range o.Reserved {
		origin[r] = claimant{"meta-tool", r}
	}
	var problems, schemaProblems []string
	claim := func(name string, what claimant, w *Wire) {
		if prev, taken := origin[name]; taken {
			problems = append(problems, fmt.Sprintf("wire name %q is claimed by both the %s %q and the %s %q: rename one (a prefix, a group name or a meta-tool name)", name, prev.kind, prev.id, what.kind, what.id))
			return
		}
		origin[name] = what
		e.routes[name] = w
	}
	infos := make([]*schemaInfo, len(cat.Tools()))
	share := o.Share
	if share != nil && (share.space != space || share.annotate != o.AnnotateDescriptions) {
		share = nil
	}
	for _, t := range cat.Tools() {
		var w *Wire
		if share != nil {
			w = share.flat[t.Index]
		} else {
			info, err := readSchema(t.Def.InputSchema)
			if err != nil {
				schemaProblems = append(schemaProblems, fmt.Sprintf("tool %q: %v", t.ID, err))
				continue
			}
			w = e.flatWire(t, info, o.AnnotateDescriptions)
		}
		infos[t.Index] = w.check.info
		e.flat[t.Index] = w
		claim(w.Name, claimant{"tool", string(t.ID)}, w)
	}
	if len(schemaProblems) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(append(schemaProblems, problems...), "\n"))
	}
	for _, g := range cat.Groups() {
		// A group whose tools all sit in groups inside it (a split
		// server in the groups mode) has nothing to act on: offering a
		// tool whose "action" admits no value would only mislead.
		if w := e.groupWireFor(g, infos, &o); w != nil && len(w.Actions) > 0 {
			e.grouped[g.Index] = w
			claim(w.Name, claimant{"group", string(g.ID)}, w)
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(problems, "\n"))
	}
	return e, nil
}

// groupWireFor is the grouped tool a group is offered as in o's mode, or
// nil: in the grouped mode every top-level group, in the groups mode those
// whose exposition is grouped.
func (e *Exposure) groupWireFor(g *catalog.Group, infos []*schemaInfo, o *Options) *Wire {
	switch {
	case o.Mode == Grouped && g.Parent == nil:
		return e.groupedWire(g, infos, true, o.AnnotateDescriptions)
	case o.Mode == Groups && exposition(g, o.Exposition) == catalog.Grouped:
		return e.groupedWire(g, infos, false, o.AnnotateDescriptions)
	}
	return nil
}

func exposition(g *catalog.Group, def catalog.Exposition) catalog.Exposition {
	if g.Exposition != catalog.Inherit {
		return g.Exposition
	}
	if def == catalog.Grouped {
		return catalog.Grouped
	}
	return catalog.Flat
}

// Mode returns the mode the exposure renders.
func (e *Exposure) Mode() Mode { return e.mode }

// Space returns the view space the exposure was built on.
func (e *Exposure) Space() *view.Space { return e.space }

// Catalog returns the catalog the exposure renders.
func (e *Exposure) Catalog() *catalog.Catalog { return e.cat }

// Route finds the wire tool a name refers to: one map lookup.
func (e *Exposure) Route(name string) (*Wire, bool) {
	w, ok := e.routes[name]
	return w, ok
}

// FlatWire returns a tool's flat wire tool, which names it in find results
// and call_tool whatever the mode.
func (e *Exposure) FlatWire(t *catalog.Tool) *Wire { return e.flat[t.Index] }

// GroupWire returns a group's grouped wire tool, if this mode has one.
func (e *Exposure) GroupWire(g *catalog.Group) (*Wire, bool) {
	w := e.grouped[g.Index]
	return w, w != nil
}

// GroupWires are the wire tools that enabling g alone adds in the groups
// mode: its grouped tool if it is exposed grouped, else one flat tool per
// direct member, sorted by name.
func (e *Exposure) GroupWires(g *catalog.Group) []*Wire {
	if w := e.grouped[g.Index]; w != nil {
		return []*Wire{w}
	}
	out := make([]*Wire, 0, len(g.Tools))
	for _, t := range g.Tools {
		out = append(out, e.flat[t.Index])
	}
	slices.SortFunc(out, func(a, b *Wire) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Listed returns the wire tools a client in state s sees in tools/list,
// meta-tools aside, sorted by name.
func (e *Exposure) Listed(s view.Snapshot) []*Wire {
	var out []*Wire
	switch e.mode {
	case Flat:
		out = slices.Clone(e.flat)
	case Search:
		for _, t := range e.cat.Ungrouped() {
			if s.Tools.Has(t.Index) {
				out = append(out, e.flat[t.Index])
			}
		}
	case Grouped:
		for _, t := range e.cat.Ungrouped() {
			if s.Tools.Has(t.Index) {
				out = append(out, e.flat[t.Index])
			}
		}
		for _, g := range e.cat.Roots() {
			if w := e.grouped[g.Index]; w != nil {
				out = append(out, w)
			}
		}
	case Groups:
		seen := view.NewSet(len(e.flat))
		for _, t := range e.cat.Ungrouped() {
			if s.Tools.Has(t.Index) {
				seen.Add(t.Index)
			}
		}
		s.Enabled.Each(func(gi int) {
			g := e.cat.Groups()[gi]
			if w := e.grouped[gi]; w != nil {
				out = append(out, w)
				return
			}
			for _, t := range g.Tools {
				seen.Add(t.Index)
			}
		})
		seen.Each(func(ti int) { out = append(out, e.flat[ti]) })
	}
	slices.SortFunc(out, func(a, b *Wire) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Reachable reports whether a client in state s may call w directly with
// tools/call. Only the groups mode hides anything: elsewhere a client that
// knows a name (from find_tools, say) may use it.
func (e *Exposure) Reachable(s view.Snapshot, w *Wire) bool {
	if e.mode != Groups {
		return true
	}
	if w.Group != nil {
		return s.Enabled.Has(w.Group.Index)
	}
	return s.Tools.Has(w.Target.Index)
}

func (e *Exposure) flatWire(t *catalog.Tool, info *schemaInfo, annotate bool) *Wire {
	// The wire, its definition and its validator live and die together:
	// one allocation instead of three per tool.
	fw := &flatWire{def: *t.Def, check: validator{info: info}}
	def := &fw.def
	def.Name = WireName(string(t.ID))
	if raw, isRaw := def.InputSchema.(json.RawMessage); isRaw && !sameText(raw, info.raw) || def.InputSchema == nil {
		def.InputSchema = info.raw // normalised to an object schema
	}
	if annotate {
		def.Description = marker(t) + def.Description
	}
	fw.Wire = Wire{Name: def.Name, Tool: def, Target: t, check: &fw.check,
		headerBound: bytes.Contains(info.raw, []byte(`"x-mcp-header"`))}
	return &fw.Wire
}

// flatWire is a flat Wire with what it points to.
type flatWire struct {
	Wire
	def   mcp.Tool
	check validator
}

// sameText reports whether a and b are the same bytes in memory: then the
// definition's own schema value is kept rather than boxed again, once per
// tool.
func sameText(a, b json.RawMessage) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

func marker(t *catalog.Tool) string {
	switch {
	case t.ReadOnly():
		return "[READ-ONLY] "
	case t.Destructive():
		return "[DESTRUCTIVE] "
	}
	return ""
}

// groupedWire folds g into one tool. With subtree, descendants' tools join
// as "sub.tool" actions (the grouped mode, where nothing is ever enabled);
// otherwise only g's own tools do (the groups mode, where each enabled group
// brings its own wire tool).
func (e *Exposure) groupedWire(g *catalog.Group, infos []*schemaInfo, subtree, annotate bool) *Wire {
	w := &Wire{Name: WireName(string(g.ID)), Group: g, actionByName: map[string]*Action{}}
	seen := map[catalog.ToolID]bool{}
	var add func(grp *catalog.Group, path string)
	add = func(grp *catalog.Group, path string) {
		local := map[string]int{}
		for _, t := range grp.Tools {
			local[t.Name]++
		}
		for _, t := range grp.Tools {
			if seen[t.ID] {
				continue // a tool shows once, at its shallowest place
			}
			seen[t.ID] = true
			name := t.Name
			if local[name] > 1 {
				name = string(t.ID) // two sources with the same tool name
			}
			a := &Action{Name: path + name, Tool: t, check: &validator{info: infos[t.Index]}}
			w.Actions = append(w.Actions, a)
			w.actionByName[a.Name] = a
		}
		if subtree {
			for _, c := range grp.Children {
				add(c, path+c.LocalName()+".")
			}
		}
	}
	add(g, "")
	w.Tool = &mcp.Tool{
		Name:        w.Name,
		Description: groupedDescription(g, w.Actions, subtree, annotate),
		InputSchema: groupedSchema(w.Actions, infos),
		Annotations: mergeAnnotations(w.Actions),
	}
	return w
}

func groupedDescription(g *catalog.Group, actions []*Action, withInstructions, annotate bool) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(g.Description))
	if withInstructions && g.Instructions != "" {
		b.WriteString("\n\n")
		b.WriteString(strings.TrimSpace(g.Instructions))
	}
	b.WriteString("\n\nSet \"action\" to one of these and pass that action's parameters beside it:")
	for _, a := range actions {
		fmt.Fprintf(&b, "\n- %s", a.Name)
		desc := firstSentence(a.Tool.Def.Description, 120)
		if annotate {
			desc = strings.TrimSpace(marker(a.Tool) + desc)
		}
		if desc != "" {
			b.WriteString(": " + desc)
		}
	}
	return b.String()
}

// groupedSchema unites the actions' parameters. A parameter's description
// says which actions use and require it; the call itself is checked against
// the chosen action's own schema, so the union can stay permissive where
// actions disagree on a parameter's type.
func groupedSchema(actions []*Action, infos []*schemaInfo) json.RawMessage {
	type merged struct {
		name     string
		variants []map[string]any
		keys     []string
		desc     string
		usedBy   []string
		required []string
	}
	var order []*merged
	byName := map[string]*merged{}
	names := make([]string, len(actions))
	for i, a := range actions {
		names[i] = a.Name
		props, required := infos[a.Tool.Index].properties()
		for _, p := range props {
			m := byName[p.name]
			if m == nil {
				m = &merged{name: p.name}
				byName[p.name] = m
				order = append(order, m)
			}
			m.usedBy = append(m.usedBy, a.Name)
			if slices.Contains(required, p.name) {
				m.required = append(m.required, a.Name)
			}
			schema := p.schema()
			if d, _ := schema["description"].(string); d != "" && m.desc == "" {
				m.desc = strings.TrimSpace(d)
			}
			if key := canonical(schema); !slices.Contains(m.keys, key) {
				m.keys = append(m.keys, key)
				m.variants = append(m.variants, withoutDescription(schema))
			}
		}
	}
	props := make([]kv, 0, len(order)+1)
	props = append(props, kv{"action", map[string]any{
		"type": "string", "enum": names,
		"description": "The action to run; the tool description says what each does.",
	}})
	for _, m := range order {
		var schema map[string]any
		if len(m.variants) == 1 {
			schema = m.variants[0]
		} else {
			anyOf := make([]any, len(m.variants))
			for i, v := range m.variants {
				anyOf[i] = v
			}
			schema = map[string]any{"anyOf": anyOf}
		}
		schema["description"] = usageNote(m.desc, m.usedBy, m.required, len(actions))
		props = append(props, kv{m.name, schema})
	}
	out, _ := json.Marshal(orderedSchema{props: props})
	return out
}

func withoutDescription(s map[string]any) map[string]any {
	c := make(map[string]any, len(s))
	for k, v := range s {
		if k != "description" {
			c[k] = v
		}
	}
	return c
}

func usageNote(desc string, usedBy, required []string, total int) string {
	var note string
	switch {
	case len(usedBy) == total && total > 1:
		note = "All actions"
	default:
		note = "Used by " + strings.Join(usedBy, ", ")
	}
	if len(required) > 0 {
		if len(required) == total && total > 1 {
			note += "; required by all"
		} else {
			note += "; required by " + strings.Join(required, ", ")
		}
	}
	if desc == "" {
		return note + "."
	}
	return desc + " (" + note + ")"
}

type kv struct {
	key   string
	value any
}

// orderedSchema encodes an object schema whose properties keep the order in
// which the actions declared them.
type orderedSchema struct{ props []kv }

func (o orderedSchema) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i, p := range o.props {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(p.key)
		v, err := json.Marshal(p.value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteString(`},"required":["action"]}`)
	return []byte(b.String()), nil
}

func mergeAnnotations(actions []*Action) *mcp.ToolAnnotations {
	if len(actions) == 0 {
		return nil
	}
	readOnly, idempotent := true, true
	var destructive, openWorld *bool
	allNotDestructive, allClosed := true, true
	for _, a := range actions {
		an := a.Tool.Def.Annotations
		if an == nil {
			an = &mcp.ToolAnnotations{}
		}
		readOnly = readOnly && an.ReadOnlyHint
		idempotent = idempotent && an.IdempotentHint
		if a.Tool.Destructive() {
			destructive = ptr(true)
		}
		if !an.ReadOnlyHint && (an.DestructiveHint == nil || *an.DestructiveHint) {
			allNotDestructive = false
		}
		if an.OpenWorldHint != nil && *an.OpenWorldHint {
			openWorld = ptr(true)
		}
		if an.OpenWorldHint == nil || *an.OpenWorldHint {
			allClosed = false
		}
	}
	if destructive == nil && allNotDestructive && !readOnly {
		destructive = ptr(false)
	}
	if openWorld == nil && allClosed {
		openWorld = ptr(false)
	}
	return &mcp.ToolAnnotations{ReadOnlyHint: readOnly, IdempotentHint: idempotent, DestructiveHint: destructive, OpenWorldHint: openWorld}
}

func ptr[T any](v T) *T { return &v }
