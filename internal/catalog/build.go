package catalog

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"time"
)

// MetaGroupsKey is the _meta key through which a tool names the groups it
// belongs to, as a list of strings.
const MetaGroupsKey = "io.modelcontextprotocol/groups"

// MetaTagsKeys are the _meta keys read as a tool's tags (a list of strings),
// matched by a group's Members.Tags.
var metaTagsKeys = []string{"io.modelcontextprotocol/tags", "tags"}

// Spec is everything a catalog is built from.
type Spec struct {
	// Tools offered by the sources. ID, Def and Handler must be set; Name
	// defaults to Def.Name. Index and Groups are filled in by Build.
	Tools []*Tool
	// Groups and the rules that decide their members.
	Groups []GroupSpec
	// ReadOnly drops every tool that does not declare readOnlyHint.
	ReadOnly bool
	// PendingSources are sources whose tools are not known yet (a server
	// still starting, or never started): rules naming them, and groups made
	// of them, are not reported as matching nothing, and requests that may
	// need their tools wait for them (see Catalog.Pending).
	PendingSources []string
	// UnavailableSources are sources whose tools are not known because they
	// failed to start, each with why, for a person. Like pending ones, their
	// rules and groups are not reported as matching nothing.
	UnavailableSources map[string]string
	// UnavailableRetry says, for the unavailable sources that toolfold
	// tries to start again by itself, when the next try is.
	UnavailableRetry map[string]time.Time
	// Held maps the IDs of tools a source gave but toolfold does not serve
	// (their definitions changed since they were pinned, see internal/trust)
	// to the refusal a call to them gets. They are in no list, search or
	// group; only a call by name learns why.
	Held map[ToolID]string
	// SourcePrefixes are the starts of each source's tool IDs, separator
	// included ("github__"), for the sources that namespace their tools:
	// they tell whose a name is when no tool has it (Catalog.SourceOf).
	SourcePrefixes map[string]string
}

// GroupSpec describes one group.
type GroupSpec struct {
	ID           GroupID
	Description  string
	Instructions string
	// Parent is empty for a top-level group.
	Parent     GroupID
	Tags       []string
	Default    State
	Exposition Exposition
	Members    Members
	// Derived marks a group made by toolfold rather than declared (see
	// internal/autogroup). Its tools leave the direct members of its
	// ancestors: they are reached through it.
	Derived bool
	// DeclaredBy names the upstream server that declared the group through
	// the groups extension; empty for groups of the config or the code.
	DeclaredBy string
}

// Members are the rules that put tools in a group. A tool that matches any
// rule is a member.
type Members struct {
	// Tools lists exact tool IDs.
	Tools []ToolID
	// Globs match tool IDs with path.Match syntax ("github__*issue*").
	Globs []string
	// Prefixes match the start of tool IDs ("github__issue_").
	Prefixes []string
	// Sources take every tool of these sources.
	Sources []string
	// Tags take every tool whose _meta tags include one of these.
	Tags []string
}

// Result is a built catalog and what the build noticed that is not fatal.
type Result struct {
	Catalog  *Catalog
	Warnings []string
}

// Build validates spec and builds an immutable catalog. Problems that make
// the catalog meaningless (unknown parents, cycles, duplicate or empty names)
// are returned together as one error; rules that match nothing are warnings.
func Build(spec Spec) (*Result, error) {
	b := &builder{spec: spec, pendingSet: make(map[string]bool, len(spec.PendingSources))}
	for _, src := range spec.PendingSources {
		b.pendingSet[src] = true
	}
	b.checkNames()
	b.addDeclaredGroups()
	b.linkParents()
	if len(b.errs) > 0 {
		return nil, errors.Join(b.errs...)
	}
	b.assignMembers()
	b.dropExcludedAndWritable()
	cat := b.finish()
	return &Result{Catalog: cat, Warnings: b.warnings}, nil
}

type builder struct {
	spec     Spec
	errs     []error
	warnings []string

	groups    map[GroupID]*Group
	specOf    map[GroupID]*GroupSpec
	tools     map[ToolID]*Tool
	toolOrder []*Tool
	// toolNames are the tool IDs in order, made once for the suggestions
	// of warnings about names no tool has.
	toolNames []string
	// members are each group's direct members, keyed by the tool itself:
	// a pointer hashes without reading the ID's bytes.
	members    map[GroupID]map[*Tool]struct{}
	dropped    map[*Tool]bool
	exclusions []ExcludedGroup
	// pendingSet holds the spec's pending sources: groups ask about them
	// one source at a time, which a list would make groups × sources.
	pendingSet map[string]bool
}

// unknown reports a source whose tools are not known: pending or
// unavailable.
func (b *builder) unknown(src string) bool {
	_, failed := b.spec.UnavailableSources[src]
	return failed || b.pendingSet[src]
}

func (b *builder) errorf(format string, args ...any) {
	b.errs = append(b.errs, fmt.Errorf(format, args...))
}

func (b *builder) checkNames() {
	b.tools = make(map[ToolID]*Tool, len(b.spec.Tools))
	for i, t := range b.spec.Tools {
		switch {
		case t == nil || t.Def == nil:
			b.errorf("tool #%d has no definition", i+1)
			continue
		case t.ID == "":
			b.errorf("tool #%d (%q) has an empty ID: give every tool a name", i+1, t.Def.Name)
			continue
		case t.Handler == nil:
			b.errorf("tool %q has no handler", t.ID)
			continue
		}
		if prev, dup := b.tools[t.ID]; dup {
			b.errorf("tool %q is offered twice (by %q and %q): give one source a different prefix or exclude one of the tools", t.ID, prev.Source, t.Source)
			continue
		}
		if t.Name == "" {
			t.Name = t.Def.Name
		}
		b.tools[t.ID] = t
		b.toolOrder = append(b.toolOrder, t)
	}
	b.toolOrder = sortByID(b.toolOrder)
}

// sortByID sorts tools by ID. Sources list their tools grouped, so the
// order is often sorted already. Otherwise it sorts (ID, tool) pairs whose
// IDs are copied side by side first: the comparisons then read one compact
// block instead of strings scattered over the heap, which at tens of
// thousands of tools is most of a sort's cost.
func sortByID(tools []*Tool) []*Tool {
	if slices.IsSortedFunc(tools, func(a, c *Tool) int { return cmp.Compare(a.ID, c.ID) }) {
		return tools
	}
	size := 0
	for _, t := range tools {
		size += len(t.ID)
	}
	var sb strings.Builder
	sb.Grow(size)
	for _, t := range tools {
		sb.WriteString(string(t.ID))
	}
	ids := sb.String()
	type keyed struct {
		id string
		t  *Tool
	}
	pairs := make([]keyed, len(tools))
	at := 0
	for i, t := range tools {
		pairs[i] = keyed{ids[at : at+len(t.ID)], t}
		at += len(t.ID)
	}
	slices.SortFunc(pairs, func(a, c keyed) int { return strings.Compare(a.id, c.id) })
	for i, p := range pairs {
		tools[i] = p.t
	}
	return tools
}

func (b *builder) addDeclaredGroups() {
	b.groups = make(map[GroupID]*Group)
	b.specOf = make(map[GroupID]*GroupSpec)
	for i := range b.spec.Groups {
		gs := &b.spec.Groups[i]
		if gs.ID == "" {
			b.errorf("group #%d has an empty name: give every group a name", i+1)
			continue
		}
		if _, dup := b.groups[gs.ID]; dup {
			b.errorf("group %q is defined twice: merge the two definitions or rename one", gs.ID)
			continue
		}
		b.groups[gs.ID] = &Group{
			ID: gs.ID, Description: gs.Description, Instructions: gs.Instructions,
			Tags: gs.Tags, Default: gs.Default, Exposition: gs.Exposition, Derived: gs.Derived, DeclaredBy: gs.DeclaredBy,
		}
		b.specOf[gs.ID] = gs
	}
	// Groups a tool names in its own _meta exist even if no config mentions
	// them: the upstream server has already said what belongs together.
	for _, t := range b.toolOrder {
		for _, name := range metaStrings(t.Def.Meta, MetaGroupsKey) {
			id := t.metaGroup(name)
			if _, ok := b.groups[id]; !ok && id != "" {
				b.groups[id] = &Group{ID: id, Description: fmt.Sprintf("Tools that declare the group %q", name)}
			}
		}
	}
}

func (b *builder) linkParents() {
	for id, g := range b.groups {
		gs := b.specOf[id]
		if gs == nil || gs.Parent == "" {
			continue
		}
		p, ok := b.groups[gs.Parent]
		if !ok {
			b.errorf("group %q names parent %q, which does not exist%s: define the parent group or fix the name",
				id, gs.Parent, didYouMean(string(gs.Parent), mapKeys(b.groups)))
			continue
		}
		g.Parent = p
	}
	// A cycle would make "enable the parent first" unsatisfiable; report
	// each cycle once, naming its members in order.
	reported := map[GroupID]bool{}
	for _, id := range sortedKeys(b.groups) {
		seen := map[GroupID]int{}
		var chain []GroupID
		for g := b.groups[id]; g != nil; g = g.Parent {
			if at, loop := seen[g.ID]; loop {
				cycle := chain[at:]
				if !reported[minID(cycle)] {
					reported[minID(cycle)] = true
					names := make([]string, 0, len(cycle)+1)
					for _, c := range cycle {
						names = append(names, string(c))
					}
					names = append(names, string(cycle[0]))
					b.errorf("groups form a cycle through their parents (%s): a group cannot be its own ancestor; remove one of the parent links", strings.Join(names, " → "))
				}
				break
			}
			seen[g.ID] = len(chain)
			chain = append(chain, g.ID)
		}
	}
	if len(b.errs) > 0 {
		return
	}
	for _, g := range b.groups {
		if g.Parent != nil {
			g.Parent.Children = append(g.Parent.Children, g)
		}
	}
}

// excludedSpec reports whether a group, or a group it is inside, is
// excluded by its spec.
func (b *builder) excludedSpec(id GroupID) bool {
	for seen := 0; id != "" && seen <= len(b.specOf); seen++ {
		gs, ok := b.specOf[id]
		if !ok {
			return false
		}
		if gs.Default == Excluded {
			return true
		}
		id = gs.Parent
	}
	return false
}

func (b *builder) assignMembers() {
	b.members = make(map[GroupID]map[*Tool]struct{}, len(b.groups))
	add := func(g GroupID, t *Tool) {
		set := b.members[g]
		if set == nil {
			set = map[*Tool]struct{}{}
			b.members[g] = set
		}
		set[t] = struct{}{}
	}
	// Rules look tools up by source, tag or ID range instead of scanning
	// every tool per rule: a catalog of many servers has a group each.
	bySource := map[string][]*Tool{}
	for _, t := range b.toolOrder {
		bySource[t.Source] = append(bySource[t.Source], t)
	}
	var byTag map[string][]*Tool
	for _, id := range sortedKeys(b.specOf) {
		m := b.specOf[id].Members
		for _, tid := range m.Tools {
			t, ok := b.tools[tid]
			if !ok {
				b.warnings = append(b.warnings, fmt.Sprintf("group %q lists tool %q, which no source offers%s", id, tid, didYouMean(string(tid), b.names())))
				continue
			}
			add(id, t)
		}
		for _, glob := range m.Globs {
			if _, err := path.Match(glob, ""); err != nil {
				b.warnings = append(b.warnings, fmt.Sprintf("group %q: tool pattern %q is malformed (%v); it matches nothing", id, glob, err))
				continue
			}
			n := 0
			// Only IDs that start with the pattern's literal part can match.
			for _, t := range b.withPrefix(literalPrefix(glob)) {
				if ok, _ := path.Match(glob, string(t.ID)); ok {
					add(id, t)
					n++
				}
			}
			if n == 0 {
				b.warnings = append(b.warnings, fmt.Sprintf("group %q: tool pattern %q matches no tool", id, glob))
			}
		}
		for _, prefix := range m.Prefixes {
			matched := b.withPrefix(prefix)
			for _, t := range matched {
				add(id, t)
			}
			if len(matched) == 0 {
				b.warnings = append(b.warnings, fmt.Sprintf("group %q: prefix %q matches no tool", id, prefix))
			}
		}
		for _, src := range m.Sources {
			for _, t := range bySource[src] {
				add(id, t)
			}
			// An excluded group's servers are never started: that they
			// offer nothing is no news.
			if len(bySource[src]) == 0 && !b.unknown(src) && !b.excludedSpec(id) {
				b.warnings = append(b.warnings, fmt.Sprintf("group %q: server %q offers no tool", id, src))
			}
		}
		if len(m.Tags) > 0 && byTag == nil {
			byTag = map[string][]*Tool{}
			for _, t := range b.toolOrder {
				for _, tag := range toolTags(t) {
					byTag[tag] = append(byTag[tag], t) // a repeat is added once
				}
			}
		}
		for _, tag := range m.Tags {
			for _, t := range byTag[tag] {
				add(id, t)
			}
		}
	}
	for _, t := range b.toolOrder {
		for _, name := range metaStrings(t.Def.Meta, MetaGroupsKey) {
			if name != "" {
				add(t.metaGroup(name), t)
			}
		}
	}
	// A derived group's tools are reached through it, not directly
	// through the groups above it.
	for _, id := range sortedKeys(b.specOf) {
		if !b.specOf[id].Derived {
			continue
		}
		for t := range b.members[id] {
			for p := b.groups[id].Parent; p != nil; p = p.Parent {
				delete(b.members[p.ID], t)
			}
		}
	}
}

// withPrefix returns the tools whose IDs start with prefix, in ID order:
// a range of the sorted tools.
func (b *builder) withPrefix(prefix string) []*Tool {
	lo, _ := slices.BinarySearchFunc(b.toolOrder, prefix, func(t *Tool, p string) int { return cmp.Compare(string(t.ID), p) })
	hi := lo
	for hi < len(b.toolOrder) && strings.HasPrefix(string(b.toolOrder[hi].ID), prefix) {
		hi++
	}
	return b.toolOrder[lo:hi]
}

// names are the tool IDs in order, for suggestions.
func (b *builder) names() []string {
	if b.toolNames == nil {
		b.toolNames = make([]string, len(b.toolOrder))
		for i, t := range b.toolOrder {
			b.toolNames[i] = string(t.ID)
		}
	}
	return b.toolNames
}

// literalPrefix is the part of a path.Match pattern before its first
// special character: every name the pattern matches starts with it.
func literalPrefix(glob string) string {
	if i := strings.IndexAny(glob, `*?[\`); i >= 0 {
		return glob[:i]
	}
	return glob
}

// dropExcludedAndWritable removes excluded groups with their subtrees and
// tools, and in read-only mode every tool that may write. An excluded tool is
// dropped even where another group also holds it: exclusion is how operators
// make sure something cannot be reached.
func (b *builder) dropExcludedAndWritable() {
	drop := map[*Tool]bool{}
	var excludedRoots []*Group
	for _, id := range sortedKeys(b.groups) {
		g := b.groups[id]
		if g.Default == Excluded && (g.Parent == nil || g.Parent.Default != Excluded) {
			excludedRoots = append(excludedRoots, g)
		}
	}
	removed := map[GroupID]bool{}
	for _, root := range excludedRoots {
		if removed[root.ID] {
			continue
		}
		root.Walk(func(g *Group) {
			removed[g.ID] = true
			n := 0
			for t := range b.members[g.ID] {
				drop[t] = true
				n++
			}
			b.excluded(g, n)
		})
	}
	for id := range removed {
		delete(b.groups, id)
		delete(b.members, id)
	}
	for _, g := range b.groups {
		if g.Parent != nil && removed[g.Parent.ID] {
			g.Parent = nil // unreachable: a removed parent removes its subtree
		}
		g.Children = slices.DeleteFunc(g.Children, func(c *Group) bool { return removed[c.ID] })
	}
	if b.spec.ReadOnly {
		for _, t := range b.toolOrder {
			if !t.ReadOnly() {
				drop[t] = true
			}
		}
	}
	if len(drop) > 0 {
		b.toolOrder = slices.DeleteFunc(b.toolOrder, func(t *Tool) bool { return drop[t] })
		for t := range drop {
			delete(b.tools, t.ID)
		}
		b.dropped = drop
	}
}

// pending reports whether a group draws on a source whose tools are not
// known, so that its emptiness says nothing.
func (b *builder) pending(id GroupID) bool {
	return b.drawsOn(id, b.unknown)
}

// drawsOn reports whether a group's rules name a source that matches.
func (b *builder) drawsOn(id GroupID, match func(string) bool) bool {
	gs := b.specOf[id]
	if gs == nil {
		return false
	}
	return slices.ContainsFunc(gs.Members.Sources, match)
}

func (b *builder) excluded(g *Group, tools int) {
	b.exclusions = append(b.exclusions, ExcludedGroup{ID: g.ID, Description: g.Description, Tools: tools})
}

func (b *builder) finish() *Catalog {
	var roots []*Group
	for _, g := range b.groups {
		if g.Parent == nil {
			roots = append(roots, g)
		}
	}
	c := &Catalog{
		tools:     b.toolOrder,
		toolByID:  b.tools,
		groupByID: b.groups,
		excluded:  b.exclusions,
		pending:   slices.Sorted(slices.Values(b.spec.PendingSources)),
		waiting:   map[GroupID]bool{},
	}
	if len(b.spec.UnavailableSources) > 0 {
		c.unavailable = maps.Clone(b.spec.UnavailableSources)
		c.retry = maps.Clone(b.spec.UnavailableRetry)
	}
	c.sourcePrefixes = maps.Clone(b.spec.SourcePrefixes)
	c.held = maps.Clone(b.spec.Held)
	c.groups = sortTree(roots)
	c.roots = roots
	for i, g := range c.groups {
		g.Index = i
		if g.Parent != nil {
			g.Depth = g.Parent.Depth + 1
		}
	}
	for i, t := range c.tools {
		t.Index = i
		t.Groups = nil
	}
	// Each group's members in catalog order, and each tool's groups in
	// catalog order by visiting the groups in order: linear in memberships.
	for _, g := range c.groups {
		for t := range b.members[g.ID] {
			if !b.dropped[t] {
				g.Tools = append(g.Tools, t)
			}
		}
		slices.SortFunc(g.Tools, func(a, c *Tool) int { return cmp.Compare(a.Index, c.Index) })
		for _, t := range g.Tools {
			t.Groups = append(t.Groups, g)
		}
	}
	for _, t := range c.tools {
		if len(t.Groups) == 0 {
			c.ungrouped = append(c.ungrouped, t)
		}
	}
	pendingSource := func(src string) bool { return b.pendingSet[src] }
	takenWhole := map[string]bool{}
	for _, g := range c.groups {
		if gs := b.specOf[g.ID]; gs != nil {
			for _, src := range gs.Members.Sources {
				takenWhole[src] = true
				if b.unknown(src) && !slices.Contains(c.unknownFor[g.ID], src) {
					if c.unknownFor == nil {
						c.unknownFor = map[GroupID][]string{}
					}
					c.unknownFor[g.ID] = append(c.unknownFor[g.ID], src)
				}
			}
		}
		if gs := b.specOf[g.ID]; gs != nil {
			for _, src := range gs.Members.Sources {
				if _, failed := c.unavailable[src]; failed && !slices.Contains(c.failedFor[g.ID], src) {
					if c.failedFor == nil {
						c.failedFor = map[GroupID][]string{}
					}
					c.failedFor[g.ID] = append(c.failedFor[g.ID], src)
				}
			}
			slices.Sort(c.failedFor[g.ID])
		}
		if b.drawsOn(g.ID, pendingSource) {
			// The group and its ancestors wait for the source.
			for p := g; p != nil; p = p.Parent {
				c.waiting[p.ID] = true
			}
		}
	}
	for _, src := range c.pending {
		if !takenWhole[src] {
			c.ungroupedPending = append(c.ungroupedPending, src)
		}
	}
	c.pendingUngrouped = len(c.ungroupedPending) > 0
	for _, g := range c.groups {
		// A server's skill that names no tools is instructions only, not a
		// mistake the config could fix.
		skillOnly := g.DeclaredBy != "" && g.Instructions != ""
		if len(g.Tools) == 0 && len(g.Children) == 0 && !b.pending(g.ID) && !skillOnly {
			b.warnings = append(b.warnings, fmt.Sprintf("group %q has no tools", g.ID))
		}
	}
	slices.SortFunc(c.excluded, func(a, b ExcludedGroup) int { return cmp.Compare(a.ID, b.ID) })
	return c
}

// metaGroup is the group a name in the tool's _meta groups means.
func (t *Tool) metaGroup(name string) GroupID {
	if id, ok := t.MetaGroups[name]; ok {
		return id
	}
	return GroupID(name)
}

func toolTags(t *Tool) []string {
	var out []string
	for _, key := range metaTagsKeys {
		out = append(out, metaStrings(t.Def.Meta, key)...)
	}
	return out
}

// metaStrings reads a list of strings from a _meta value, tolerating the
// shapes JSON decoding produces.
func metaStrings(meta map[string]any, key string) []string {
	switch v := meta[key].(type) {
	case []string:
		return v
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	case string:
		return []string{v}
	}
	return nil
}

func sortedKeys[K ~string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func mapKeys[K ~string, V any](m map[K]V) []string {
	keys := sortedKeys(m)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = string(k)
	}
	return out
}

func minID(ids []GroupID) GroupID { return slices.Min(ids) }

func didYouMean(name string, candidates []string) string {
	near := Nearest(name, candidates, 1)
	if len(near) == 0 {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", near[0])
}
