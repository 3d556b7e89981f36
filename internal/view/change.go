package view

import (
	"fmt"
	"slices"

	"github.com/toolfold/toolfold/internal/catalog"
)

// Reason says why a group could not be enabled or disabled.
type Reason string

const (
	Unknown          Reason = "unknown_group"      // no such group (Nearest has look-alikes)
	ParentNotEnabled Reason = "parent_not_enabled" // enable Parent first
	AlreadyEnabled   Reason = "already_enabled"    // nothing to do
	NotEnabled       Reason = "not_enabled"        // nothing to disable
	OverLimit        Reason = "over_limit"         // Count would exceed Limit
)

// GroupError is one group that a change could not apply. Its fields carry
// what an agent needs to fix the call.
type GroupError struct {
	Group  string `json:"group"`
	Reason Reason `json:"reason"`
	// Message is a sentence for the agent: what is wrong and what to do.
	Message string `json:"message"`
	// Nearest lists existing groups with a similar name (Unknown).
	Nearest []string `json:"nearest,omitempty"`
	// Parent is the group to enable first (ParentNotEnabled).
	Parent string `json:"parent,omitempty"`
	// Count is how many tools would be visible, Limit the cap (OverLimit).
	Count int `json:"count,omitempty"`
	Limit int `json:"limit,omitempty"`
}

func (e GroupError) Error() string { return e.Message }

// Change reports what an Enable, Disable or Reset did.
type Change struct {
	// Enabled are the groups this change enabled, in the order processed.
	Enabled []*catalog.Group
	// Disabled are the groups this change disabled, cascades included.
	Disabled []*catalog.Group
	// Errors are the groups that could not be changed; each failed alone.
	Errors []GroupError
	// Before and After are the view's state around the change.
	Before, After Snapshot
}

// Changed reports whether the set of visible tools differs.
func (c *Change) Changed() bool { return !c.Before.Tools.Equal(c.After.Tools) }

// Enable enables groups in order, so that a parent named before its child
// satisfies it. Each group succeeds or fails on its own.
func (v *View) Enable(groups []string) *Change {
	v.mu.Lock()
	defer v.mu.Unlock()
	ch := &Change{Before: v.snapshotLocked()}
	var unfolded []*catalog.Group
	for _, name := range groups {
		g, err := v.lookup(name)
		if err != nil {
			ch.Errors = append(ch.Errors, *err)
			continue
		}
		if err := v.enableOne(g); err != nil {
			// A child named after its parent that this call unfolded
			// is done, not an error.
			if err.Reason != AlreadyEnabled || !slices.Contains(unfolded, g) {
				ch.Errors = append(ch.Errors, *err)
			}
			continue
		}
		inside := v.unfold(g)
		unfolded = append(unfolded, inside...)
		ch.Enabled = append(ch.Enabled, g)
		ch.Enabled = append(ch.Enabled, inside...)
	}
	v.finish(ch)
	return ch
}

// UnfoldBytes is the most the definitions of a group's subtree may weigh
// (as JSON; about 4,000 tokens) for enabling the group, when it has no
// tools of its own, to enable the groups inside it too: a parent of a few
// small groups is then one call away from all its tools, while a big
// server still unfolds a level at a time rather than flood the list.
const UnfoldBytes = 16000

// unfold enables the groups inside g, parents first, when g holds no
// tools of its own (enabling it alone would add nothing) and the tools of
// its whole subtree weigh at most UnfoldBytes and fit the limit. The
// caller holds v.mu.
func (v *View) unfold(g *catalog.Group) []*catalog.Group {
	if len(g.Tools) > 0 || len(g.Children) == 0 {
		return nil
	}
	next := v.enabled.Clone()
	var inside []*catalog.Group
	g.Walk(func(d *catalog.Group) {
		if d != g && !next.Has(d.Index) {
			next.Add(d.Index)
			inside = append(inside, d)
		}
	})
	all := NewSet(len(v.space.cat.Tools()))
	g.Walk(func(d *catalog.Group) {
		for _, t := range d.Tools {
			all.Add(t.Index)
		}
	})
	weight := 0
	all.Each(func(i int) { weight += v.space.toolSize(i) })
	if weight > UnfoldBytes {
		return nil
	}
	visible, grouped := v.toolsFor(next)
	if limit := v.space.opts.MaxTools; limit > 0 && grouped > limit {
		return nil
	}
	v.enabled, v.visible, v.grouped = next, visible, grouped
	return inside
}

// Disable disables groups and, with each, its enabled descendants.
func (v *View) Disable(groups []string) *Change {
	v.mu.Lock()
	defer v.mu.Unlock()
	ch := &Change{Before: v.snapshotLocked()}
	for _, name := range groups {
		g, err := v.lookup(name)
		if err != nil {
			ch.Errors = append(ch.Errors, *err)
			continue
		}
		if !v.enabled.Has(g.Index) {
			ch.Errors = append(ch.Errors, GroupError{Group: name, Reason: NotEnabled,
				Message: fmt.Sprintf("group %q is not enabled, so there is nothing to disable", name)})
			continue
		}
		g.Walk(func(d *catalog.Group) {
			if v.enabled.Has(d.Index) {
				v.enabled.Remove(d.Index)
				ch.Disabled = append(ch.Disabled, d)
			}
		})
	}
	v.recompute()
	v.finish(ch)
	return ch
}

// Reset sets the final state: the groups mapped to true are enabled (parents
// before children), every other group is disabled. Groups that cannot be
// enabled are reported and left disabled.
func (v *View) Reset(want map[string]bool) *Change {
	v.mu.Lock()
	defer v.mu.Unlock()
	ch := &Change{Before: v.snapshotLocked()}
	names := make([]string, 0, len(want))
	for name := range want {
		names = append(names, name)
	}
	slices.Sort(names)
	var targets []*catalog.Group
	for _, name := range names {
		g, err := v.lookup(name)
		if err != nil {
			ch.Errors = append(ch.Errors, *err)
			continue
		}
		if want[name] {
			targets = append(targets, g)
		}
	}
	// Tree order puts every parent before its children.
	slices.SortFunc(targets, func(a, b *catalog.Group) int { return a.Index - b.Index })
	was := v.enabled.Clone()
	v.enabled = NewSet(len(v.space.cat.Groups()))
	v.recompute()
	for _, g := range targets {
		if err := v.enableOne(g); err != nil && err.Reason != AlreadyEnabled {
			ch.Errors = append(ch.Errors, *err)
		}
	}
	for _, g := range v.space.cat.Groups() {
		switch on, before := v.enabled.Has(g.Index), was.Has(g.Index); {
		case on && !before:
			ch.Enabled = append(ch.Enabled, g)
		case !on && before:
			ch.Disabled = append(ch.Disabled, g)
		}
	}
	v.finish(ch)
	return ch
}

// enableOne enables g if the rules allow it. The caller holds v.mu.
func (v *View) enableOne(g *catalog.Group) *GroupError {
	name := string(g.ID)
	if v.enabled.Has(g.Index) {
		return &GroupError{Group: name, Reason: AlreadyEnabled,
			Message: fmt.Sprintf("group %q is already enabled; its tools are available", name)}
	}
	if g.Parent != nil && !v.enabled.Has(g.Parent.Index) {
		return &GroupError{Group: name, Reason: ParentNotEnabled, Parent: string(g.Parent.ID),
			Message: fmt.Sprintf("group %q is inside %q, which is not enabled: enable %q first, or both in one call: {\"groups\": [%q, %q]}",
				name, g.Parent.ID, g.Parent.ID, g.Parent.ID, name)}
	}
	next := v.enabled.Clone()
	next.Add(g.Index)
	visible, grouped := v.toolsFor(next)
	if limit := v.space.opts.MaxTools; limit > 0 && grouped > limit {
		return &GroupError{Group: name, Reason: OverLimit, Count: grouped, Limit: limit,
			Message: fmt.Sprintf("enabling %q would make %d tools visible, over the limit of %d: disable a group you no longer need first", name, grouped, limit)}
	}
	v.enabled, v.visible, v.grouped = next, visible, grouped
	return nil
}

func (v *View) lookup(name string) (*catalog.Group, *GroupError) {
	if g, ok := v.space.cat.Group(catalog.GroupID(name)); ok {
		return g, nil
	}
	near := catalog.Nearest(name, v.space.cat.GroupIDs(), 3)
	msg := fmt.Sprintf("there is no group %q", name)
	if len(near) > 0 {
		msg += fmt.Sprintf("; did you mean %s?", quoteList(near, "or"))
	} else {
		msg += "; the enable_tools description lists the groups"
	}
	return nil, &GroupError{Group: name, Reason: Unknown, Nearest: near, Message: msg}
}

func (v *View) finish(ch *Change) {
	if len(ch.Enabled) > 0 || len(ch.Disabled) > 0 {
		v.version++
	}
	ch.After = v.snapshotLocked()
}

func (v *View) snapshotLocked() Snapshot {
	return Snapshot{Enabled: v.enabled.Clone(), Tools: v.visible.Clone(), Version: v.version}
}

// GroupedCount is how many distinct tools the enabled groups hold.
func (v *View) GroupedCount() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.grouped
}

// Enableable lists the groups that can be enabled now: top-level groups and
// children of enabled groups, that are not enabled themselves.
func (v *View) Enableable() []*catalog.Group {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []*catalog.Group
	for _, g := range v.space.cat.Groups() {
		if v.enabled.Has(g.Index) {
			continue
		}
		if g.Parent == nil || v.enabled.Has(g.Parent.Index) {
			out = append(out, g)
		}
	}
	return out
}
