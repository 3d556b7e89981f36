package cmdtool

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
)

// normalizeGlob maps the word form of a glob ("remote *", "remote  add")
// to the action-name form ("remote_*", "remote_add").
func normalizeGlob(glob string) string {
	return strings.Join(strings.Fields(glob), "_")
}

func checkGlob(glob string) error {
	if strings.TrimSpace(glob) == "" {
		return fmt.Errorf("empty glob in include/exclude; remove it")
	}
	if _, err := path.Match(normalizeGlob(glob), ""); err != nil {
		return fmt.Errorf("glob %q is malformed (path.Match syntax: *, ?, [a-z]): %w", glob, err)
	}
	return nil
}

// MatchGlob reports whether an action name matches an include/exclude
// glob, with path.Match semantics after mapping spaces to "_" ("remote *"
// matches "remote_add"). A malformed glob matches nothing.
func MatchGlob(glob, actionName string) bool {
	ok, err := path.Match(normalizeGlob(glob), actionName)
	return err == nil && ok
}

// FilterActions keeps the actions that match an include glob (all of them
// when include is empty) and match no exclude glob, in their order.
func FilterActions(actions []Action, include, exclude []string) []Action {
	var out []Action
	for _, a := range actions {
		if len(include) > 0 && !slices.ContainsFunc(include, func(g string) bool { return MatchGlob(g, a.Name) }) {
			continue
		}
		if slices.ContainsFunc(exclude, func(g string) bool { return MatchGlob(g, a.Name) }) {
			continue
		}
		out = append(out, a)
	}
	return out
}

// MergeActions lays declared actions over discovered ones, matched by name,
// and returns them sorted by name. A declared action that matches a
// discovered one keeps the discovered fields it leaves empty (description,
// argv, params); its params override discovered params of the same name in
// place and the new ones are appended; a non-empty Required replaces the
// discovered one. Its ReadOnly and Destructive marks always win: declared
// config is the authority on safety. A declared action with no discovered
// match is added as is.
func MergeActions(discovered, declared []Action) []Action {
	byName := make(map[string]int, len(discovered))
	out := make([]Action, 0, len(discovered)+len(declared))
	for _, a := range discovered {
		byName[a.Name] = len(out)
		out = append(out, cloneAction(a))
	}
	for _, d := range declared {
		i, ok := byName[d.Name]
		if !ok {
			byName[d.Name] = len(out)
			out = append(out, cloneAction(d))
			continue
		}
		merged := out[i]
		if d.Description != "" {
			merged.Description = d.Description
		}
		if len(d.Argv) > 0 {
			merged.Argv = slices.Clone(d.Argv)
		}
		for _, prm := range d.Params {
			if j := slices.IndexFunc(merged.Params, func(q Param) bool { return q.Name == prm.Name }); j >= 0 {
				merged.Params[j] = prm
			} else {
				merged.Params = append(merged.Params, prm)
			}
		}
		if len(d.Required) > 0 {
			merged.Required = slices.Clone(d.Required)
		}
		merged.ReadOnly = d.ReadOnly
		merged.Destructive = d.Destructive
		out[i] = merged
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func cloneAction(a Action) Action {
	a.Argv = slices.Clone(a.Argv)
	a.Params = slices.Clone(a.Params)
	a.Required = slices.Clone(a.Required)
	return a
}

// ReadOnlyActions returns the actions allowed in read-only mode: those
// marked ReadOnly and not Destructive.
//
// The design (docs/design.md#command-line-programs) only asks that destructive actions be hidden, but an action that
// is neither marked read-only nor destructive is an unknown (a discovered
// "git push", "docker run"), so read-only mode keeps only what is known to
// change nothing. Declare "readOnly": true to allow more.
func ReadOnlyActions(actions []Action) []Action {
	var out []Action
	for _, a := range actions {
		if a.ReadOnly && !a.Destructive {
			out = append(out, a)
		}
	}
	return out
}
