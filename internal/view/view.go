package view

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/toolfold/toolfold/internal/catalog"
)

// Options shape every view made from a Space.
type Options struct {
	// MaxTools caps how many distinct grouped tools a view may see at once;
	// a tool in two enabled groups counts once. Zero means no limit.
	MaxTools int
	// InitialGroups are enabled in every new view, with their ancestors.
	InitialGroups []catalog.GroupID
	// HideUngrouped hides the tools that are in no group.
	HideUngrouped bool
}

// Space is the part of every view that depends only on the catalog: built
// once, shared by all views of that catalog, never changed.
type Space struct {
	cat       *catalog.Catalog
	opts      Options
	ungrouped Set
	initial   Set // groups enabled in a new view

	// toolBytes is by tool index the size of its definition as JSON,
	// measured on first need (unfolding a group), not at every start.
	toolBytesOnce sync.Once
	toolBytes     []int32
}

// NewSpace prepares views over cat. It fails if an initial group does not
// exist.
func NewSpace(cat *catalog.Catalog, opts *Options) (*Space, error) {
	s := &Space{cat: cat}
	if opts != nil {
		s.opts = *opts
	}
	n := len(cat.Tools())
	s.ungrouped = NewSet(n)
	for _, t := range cat.Ungrouped() {
		s.ungrouped.Add(t.Index)
	}
	s.initial = NewSet(len(cat.Groups()))
	enableWithAncestors := func(g *catalog.Group) {
		for ; g != nil; g = g.Parent {
			s.initial.Add(g.Index)
		}
	}
	for _, g := range cat.Groups() {
		if g.Default == catalog.Enabled {
			enableWithAncestors(g)
		}
	}
	for _, id := range s.opts.InitialGroups {
		g, ok := cat.Group(id)
		if !ok {
			return nil, fmt.Errorf("initial group %q does not exist%s: fix disclosure.initialGroups", id, suggest(string(id), cat.GroupIDs()))
		}
		enableWithAncestors(g)
	}
	return s, nil
}

// Catalog returns the catalog the space was built on.
func (s *Space) Catalog() *catalog.Catalog { return s.cat }

// Options returns the options views of this space follow.
func (s *Space) Options() Options { return s.opts }

// toolSize is the size of a tool's definition as JSON.
func (s *Space) toolSize(i int) int {
	s.toolBytesOnce.Do(func() {
		s.toolBytes = make([]int32, len(s.cat.Tools()))
		for _, t := range s.cat.Tools() {
			if b, err := json.Marshal(t.Def); err == nil {
				s.toolBytes[t.Index] = int32(min(len(b), math.MaxInt32))
			}
		}
	})
	return int(s.toolBytes[i])
}

// New returns a view in its initial state.
func (s *Space) New() *View {
	v := &View{space: s, enabled: s.initial.Clone()}
	v.recompute()
	return v
}

// View is one client's enabled groups. It is safe for concurrent use.
type View struct {
	space *Space

	mu      sync.Mutex
	enabled Set // group indexes
	visible Set // tool indexes
	grouped int // distinct tools visible through groups
	version uint64
}

// Snapshot is a view's state at one moment. It is a value; later changes to
// the view do not affect it.
type Snapshot struct {
	// Enabled holds the indexes of the enabled groups.
	Enabled Set
	// Tools holds the indexes of the visible tools.
	Tools Set
	// Version increases with every change of the view.
	Version uint64
}

// Snapshot returns the current state.
func (v *View) Snapshot() Snapshot {
	v.mu.Lock()
	defer v.mu.Unlock()
	return Snapshot{Enabled: v.enabled.Clone(), Tools: v.visible.Clone(), Version: v.version}
}

// Space returns the space the view belongs to.
func (v *View) Space() *Space { return v.space }

// IsEnabled reports whether the group is enabled.
func (v *View) IsEnabled(g *catalog.Group) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.enabled.Has(g.Index)
}

// CanSee reports whether the tool is visible.
func (v *View) CanSee(t *catalog.Tool) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.visible.Has(t.Index)
}

// recompute derives the visible tools from the enabled groups. The caller
// holds v.mu (or owns v exclusively).
func (v *View) recompute() {
	v.visible, v.grouped = v.toolsFor(v.enabled)
}

func (v *View) toolsFor(enabled Set) (visible Set, grouped int) {
	s := v.space
	visible = NewSet(len(s.cat.Tools()))
	// A group's tools are read from the catalog: a set per group would
	// cost groups × tools bits, the most of any part of a large catalog.
	groups := s.cat.Groups()
	enabled.Each(func(g int) {
		for _, t := range groups[g].Tools {
			visible.Add(t.Index)
		}
	})
	grouped = visible.Len()
	if !s.opts.HideUngrouped {
		for i, w := range s.ungrouped.words {
			visible.words[i] |= w
		}
	}
	return visible, grouped
}

func suggest(name string, candidates []string) string {
	near := catalog.Nearest(name, candidates, 3)
	if len(near) == 0 {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", quoteList(near, "or"))
}

func quoteList(names []string, conj string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	switch len(q) {
	case 0:
		return ""
	case 1:
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " " + conj + " " + q[len(q)-1]
}
