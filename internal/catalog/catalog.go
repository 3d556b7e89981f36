package catalog

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/rawcall"
)

// ToolID names a tool in the catalog: the namespaced name
// ("github__create_issue") for tools of upstream servers, the plain name for
// tools that have no namespace. It is unique in a catalog.
type ToolID string

// GroupID names a group. Nested groups written with the Go library use dotted
// paths ("repos.branches"); groups from a config file use their key.
type GroupID string

// State is a group's starting state in every new view.
type State int

const (
	// Available groups are hidden until a client enables them.
	Available State = iota
	// Enabled groups are on in every new view.
	Enabled
	// Excluded groups, and every tool in them, do not exist for clients.
	Excluded
)

func (s State) String() string {
	switch s {
	case Enabled:
		return "enabled"
	case Excluded:
		return "excluded"
	default:
		return "available"
	}
}

// ParseState reads "available", "enabled" or "excluded"; "" is Available.
func ParseState(s string) (State, error) {
	switch s {
	case "", "available":
		return Available, nil
	case "enabled":
		return Enabled, nil
	case "excluded":
		return Excluded, nil
	}
	return Available, fmt.Errorf("unknown group state %q: use available, enabled or excluded", s)
}

// Exposition says how a group's tools appear on the wire.
type Exposition int

const (
	// Inherit takes the catalog-wide default.
	Inherit Exposition = iota
	// Flat exposes one wire tool per tool.
	Flat
	// Grouped exposes the group as one wire tool with an "action" property.
	Grouped
)

func (e Exposition) String() string {
	switch e {
	case Flat:
		return "flat"
	case Grouped:
		return "grouped"
	default:
		return "inherit"
	}
}

// ParseExposition reads "flat" or "grouped"; "" is Inherit.
func ParseExposition(s string) (Exposition, error) {
	switch s {
	case "":
		return Inherit, nil
	case "flat":
		return Flat, nil
	case "grouped":
		return Grouped, nil
	}
	return Inherit, fmt.Errorf("unknown exposition %q: use flat or grouped", s)
}

// Tool is one tool of the catalog.
type Tool struct {
	// ID is the tool's unique catalog name.
	ID ToolID
	// Name is the tool's own name at its source, which it is called by.
	Name string
	// Source names where the tool comes from (a server key, a program, or
	// the Go library server's name).
	Source string
	// Def is the tool's definition as the source gave it. Its Name is the
	// source's own name; exposition renames copies, never this value.
	Def *mcp.Tool
	// Handler runs the tool. The request's Params.Name is the tool's own
	// Name and its Arguments are the arguments meant for the tool.
	Handler mcp.ToolHandler
	// MetaGroups resolves the group names of the tool's own
	// _meta["io.modelcontextprotocol/groups"]: a name found here is that
	// group (a server that declares its groups through the groups extension
	// too means those); any other name is a group of that name.
	MetaGroups map[string]GroupID
	// ChecksArguments says the source validates arguments against Def's
	// input schema itself, as an MCP server does: a call that names the
	// tool directly (flat exposition) is then forwarded without a second
	// check, and the source's own refusal reaches the client. Arguments
	// of a grouped action are always checked, against the action's schema.
	ChecksArguments bool
	// Forward, when set, forwards a call as bytes (the fast path; see
	// package rawcall). Handler stays the way for every call Forward
	// cannot take.
	Forward rawcall.Forwarder

	// Index is the tool's position in Catalog.Tools.
	Index int
	// Groups lists the groups the tool belongs to directly, in catalog order.
	Groups []*Group
}

// ReadOnly reports whether the tool declares itself free of side effects.
func (t *Tool) ReadOnly() bool {
	return t.Def.Annotations != nil && t.Def.Annotations.ReadOnlyHint
}

// Destructive reports whether the tool declares that it may destroy data.
// Only an explicit destructiveHint counts: the protocol's default of "maybe"
// would mark nearly every upstream tool.
func (t *Tool) Destructive() bool {
	a := t.Def.Annotations
	return a != nil && !a.ReadOnlyHint && a.DestructiveHint != nil && *a.DestructiveHint
}

// Group is a named bundle of tools.
type Group struct {
	ID           GroupID
	Description  string
	Instructions string
	Tags         []string
	Default      State
	Exposition   Exposition
	// DeclaredBy names the upstream server that declared the group through
	// the groups extension ("declared by upstream"): the strongest statement
	// of structure there is. Empty for groups of the config or the code.
	DeclaredBy string

	// Index is the group's position in Catalog.Groups.
	Index int
	// Parent is nil for a top-level group.
	Parent *Group
	// Children are the direct child groups, in catalog order.
	Children []*Group
	// Tools are the group's direct members, in catalog order.
	Tools []*Tool
	// Depth is 0 for a top-level group.
	Depth int
	// Derived is true for a group toolfold derived from the tools of a
	// big group (internal/autogroup) rather than one that was declared.
	Derived bool
}

// LocalName is the group's name relative to its parent: "branches" for
// "repos.branches" under "repos", the whole ID otherwise.
func (g *Group) LocalName() string {
	if g.Parent != nil {
		if rest, ok := strings.CutPrefix(string(g.ID), string(g.Parent.ID)+"."); ok && rest != "" {
			return rest
		}
	}
	return string(g.ID)
}

// Ancestors lists the group's parent, grandparent and so on, nearest first.
func (g *Group) Ancestors() []*Group {
	var out []*Group
	for p := g.Parent; p != nil; p = p.Parent {
		out = append(out, p)
	}
	return out
}

// Walk calls fn for the group and every descendant, depth first, parents
// before children.
func (g *Group) Walk(fn func(*Group)) {
	fn(g)
	for _, c := range g.Children {
		c.Walk(fn)
	}
}

// Catalog is an immutable inventory of tools and groups.
type Catalog struct {
	tools     []*Tool
	groups    []*Group
	roots     []*Group
	ungrouped []*Tool
	excluded  []ExcludedGroup
	toolByID  map[ToolID]*Tool
	groupByID map[GroupID]*Group
	// pending are the sources whose tools are not known yet, sorted;
	// waiting the groups that draw on one of them (with their ancestors);
	// unavailable the sources that failed to start, with why.
	pending          []string
	pendingUngrouped bool
	// ungroupedPending are the pending sources no group takes whole;
	// unknownFor the pending or unavailable sources each group's own
	// rules name: what a part of the catalog (subtree.go) still waits for.
	ungroupedPending []string
	unknownFor       map[GroupID][]string
	waiting          map[GroupID]bool
	unavailable      map[string]string
	held             map[ToolID]string    // see Spec.Held
	retry            map[string]time.Time // next start of an unavailable source
	failedFor        map[GroupID][]string
	sourcePrefixes   map[string]string
}

// Pending lists the sources whose tools are not known yet because they are
// still starting, sorted. A catalog with pending sources is incomplete: a
// later one will hold their tools (or list them as unavailable).
func (c *Catalog) Pending() []string { return c.pending }

// GroupPending reports whether a group (or one of its descendants) takes
// the tools of a pending source, so its tools are not all known yet.
func (c *Catalog) GroupPending(id GroupID) bool { return c.waiting[id] }

// PendingUngrouped reports whether a pending source may bring ungrouped
// tools: one that no group takes whole (a server whose tools join its own
// group does not).
func (c *Catalog) PendingUngrouped() bool { return c.pendingUngrouped }

// HeldNote is the refusal for a call to a held tool (see Spec.Held), or ""
// when id is not held.
func (c *Catalog) HeldNote(id ToolID) string { return c.held[id] }

// HeldIDs lists the held tools (see Spec.Held), sorted. A part of the
// catalog (a limited view) holds none: what it may not reach, it does not
// hear of.
func (c *Catalog) HeldIDs() []ToolID {
	out := make([]ToolID, 0, len(c.held))
	for id := range c.held {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// Unavailable maps the sources whose tools are not known because they
// failed to start to why, for a person. The map must not be modified.
func (c *Catalog) Unavailable() map[string]string { return c.unavailable }

// UnavailableNote says, for a person, that an unavailable source failed
// to start, why, and when toolfold tries again if it does ("…; toolfold
// tries to start it again in 12s"), as of now. It is "" for a source that
// is not unavailable.
func (c *Catalog) UnavailableNote(src string, now time.Time) string {
	why, ok := c.unavailable[src]
	if !ok {
		return ""
	}
	note := fmt.Sprintf("the MCP server %q failed to start: %s", src, strings.TrimSuffix(why, "."))
	if at, ok := c.retry[src]; ok && !at.IsZero() {
		if wait := at.Sub(now); wait >= time.Second {
			note += fmt.Sprintf("; toolfold tries to start it again in %s", wait.Round(time.Second))
		} else {
			note += "; toolfold is trying to start it again now"
		}
	}
	return note
}

// GroupUnavailable lists the unavailable sources (see Unavailable) whose
// tools a group's own rules take, sorted: why the group may have no tools.
func (c *Catalog) GroupUnavailable(id GroupID) []string { return c.failedFor[id] }

// SourceOf tells whose a tool name is: the source of the tool with that
// ID, else the source whose prefix (Spec.SourcePrefixes) starts the name,
// the longest if several do. A prefix ends with its separator, so "git__"
// never claims "github__x". It reports false when no source claims the
// name (a source without a prefix claims none it does not have).
func (c *Catalog) SourceOf(name string) (string, bool) {
	if t, ok := c.toolByID[ToolID(name)]; ok && t.Source != "" {
		return t.Source, true
	}
	best, bestPrefix := "", ""
	for src, prefix := range c.sourcePrefixes {
		if prefix == "" || !strings.HasPrefix(name, prefix) {
			continue
		}
		if len(prefix) > len(bestPrefix) || len(prefix) == len(bestPrefix) && src < best {
			best, bestPrefix = src, prefix
		}
	}
	return best, bestPrefix != ""
}

// ExcludedGroup records a group that was left out, for reports; clients never
// see it.
type ExcludedGroup struct {
	ID          GroupID
	Description string
	// Tools counts the tools that were dropped with the group.
	Tools int
}

// Tools returns every tool, sorted by ID. The slice must not be modified.
func (c *Catalog) Tools() []*Tool { return c.tools }

// Groups returns every group in tree order: top-level groups sorted by ID,
// each followed by its descendants. The slice must not be modified.
func (c *Catalog) Groups() []*Group { return c.groups }

// Roots returns the top-level groups, sorted by ID.
func (c *Catalog) Roots() []*Group { return c.roots }

// Ungrouped returns the tools in no group: the always-on core.
func (c *Catalog) Ungrouped() []*Tool { return c.ungrouped }

// Excluded returns the groups that were excluded, for reports.
func (c *Catalog) Excluded() []ExcludedGroup { return c.excluded }

// Tool looks a tool up by ID.
func (c *Catalog) Tool(id ToolID) (*Tool, bool) {
	t, ok := c.toolByID[id]
	return t, ok
}

// Group looks a group up by ID.
func (c *Catalog) Group(id GroupID) (*Group, bool) {
	g, ok := c.groupByID[id]
	return g, ok
}

// GroupIDs returns every group's ID in catalog order.
func (c *Catalog) GroupIDs() []string {
	out := make([]string, len(c.groups))
	for i, g := range c.groups {
		out[i] = string(g.ID)
	}
	return out
}

// ToolIDs returns every tool's ID in catalog order.
func (c *Catalog) ToolIDs() []string {
	out := make([]string, len(c.tools))
	for i, t := range c.tools {
		out[i] = string(t.ID)
	}
	return out
}

// sortTree orders groups as the catalog presents them: roots by ID, each
// followed by its subtree, children by ID.
func sortTree(roots []*Group) []*Group {
	byID := func(a, b *Group) int { return cmp.Compare(a.ID, b.ID) }
	slices.SortFunc(roots, byID)
	var out []*Group
	var visit func(g *Group)
	visit = func(g *Group) {
		out = append(out, g)
		slices.SortFunc(g.Children, byID)
		for _, c := range g.Children {
			visit(c)
		}
	}
	for _, r := range roots {
		visit(r)
	}
	return out
}

// Awaits reports whether a group the catalog does not have may still come
// with the tools of a source that is not known yet: the nearest group its
// dotted name sits under waits for a pending source, or draws on one that
// failed to start (it may start later). The groups derived from a
// server's tools and the groups a server declares are named under the
// group of its tools, so they come with them.
func (c *Catalog) Awaits(id GroupID) bool {
	if _, ok := c.groupByID[id]; ok {
		return false
	}
	for p := id; ; {
		i := strings.LastIndexByte(string(p), '.')
		if i <= 0 {
			return false
		}
		p = p[:i]
		if _, ok := c.groupByID[p]; ok {
			return c.waiting[p] || len(c.failedFor[p]) > 0
		}
	}
}
