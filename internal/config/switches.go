package config

import (
	"fmt"
	"sort"
	"strings"
)

// Overrides are the command line's group switches, the strongest of the three
// sources of a group's default state.
type Overrides struct {
	// Enable lists the groups of --groups a,b: enabled in every view.
	Enable []string
	// Exclude lists the groups of --exclude-groups c: they do not exist for clients.
	Exclude []string
}

// Where deployment-switch problems say they come from, in place of a file name.
const (
	SourceCommandLine = "command line"
	SourceEnvironment = "environment"
)

// GroupEnvVar is the environment variable that switches a group:
// "MCP_GROUP_" + the name upper-cased, with "-" and "." (and anything else that
// cannot be in a variable name) as "_". "code.repos" → MCP_GROUP_CODE_REPOS.
func GroupEnvVar(group string) string {
	return "MCP_GROUP_" + strings.ToUpper(wireSafe(strings.ReplaceAll(group, "-", "_")))
}

// ParseGroupSwitch reads an MCP_GROUP_ value as parseSwitch does, for groups
// that exist only after discovery (derived groups).
func ParseGroupSwitch(value string) (GroupState, bool) { return parseSwitch(value) }

// parseSwitch reads an MCP_GROUP_ value: true, false or available (any case, and
// the state names enabled and excluded as synonyms).
func parseSwitch(value string) (GroupState, bool) {
	switch strings.ToLower(strings.TrimSpace(value)) {
	case "true", "enabled":
		return GroupEnabled, true
	case "false", "excluded":
		return GroupExcluded, true
	case "available":
		return GroupAvailable, true
	}
	return "", false
}

// ResolveGroupStates gives every group in groups its default state for new views.
// Strongest first: overrides (flags), then MCP_GROUP_<NAME> from lookup, then the
// config's groups.<name>.default, then available. Pass the full group list (the
// config's GroupNames plus groups met in tools' _meta); nil means GroupNames.
//
// Hierarchy is applied last: an excluded group excludes its descendants (an
// enabled descendant is then excluded too, with a warning), and an enabled group
// enables its ancestors, since a child is reachable only through its parent.
//
// A flag naming an unknown group, a group both enabled and excluded on the command
// line, and an environment value other than true/false/available are errors.
func (c *Config) ResolveGroupStates(groups []string, o Overrides, lookup LookupEnv) (map[string]GroupState, Diagnostics) {
	if groups == nil {
		groups = c.GroupNames()
	}
	groups = append([]string(nil), groups...)
	sort.Strings(groups)
	r := &stateResolver{cfg: c, groups: groups, states: map[string]GroupState{}, flagged: map[string]string{}}
	r.defaults(lookup)
	r.flag("--groups", o.Enable, GroupEnabled)
	r.flag("--exclude-groups", o.Exclude, GroupExcluded)
	r.hierarchy()
	return r.states, r.diags
}

// stateResolver holds the work of one ResolveGroupStates call.
type stateResolver struct {
	cfg     *Config
	groups  []string // sorted
	states  map[string]GroupState
	flagged map[string]string // group -> the flag that switched it
	diags   Diagnostics
}

func (r *stateResolver) problem(sev Severity, source, path, format string, args ...any) {
	r.diags = append(r.diags, Problem{Severity: sev, File: source, Path: path, Message: fmt.Sprintf(format, args...)})
}

// defaults sets each group's state from the config's default, then from
// its MCP_GROUP_<NAME> variable when lookup is set.
func (r *stateResolver) defaults(lookup LookupEnv) {
	for _, g := range r.groups {
		r.states[g] = GroupAvailable
		if gc, ok := r.cfg.Groups[g]; ok && gc.Default != "" {
			r.states[g] = gc.Default
		}
		if lookup == nil {
			continue
		}
		name := GroupEnvVar(g)
		raw, ok := lookup(name)
		if !ok {
			continue
		}
		if s, valid := parseSwitch(raw); valid {
			r.states[g] = s
		} else {
			r.problem(SeverityError, SourceEnvironment, name, "%q is not a group switch; use true (enabled in every view), false (excluded) or available", raw)
		}
	}
}

// flag applies a command-line flag that sets names to state. An unknown
// group, or one already given to the other flag, is an error.
func (r *stateResolver) flag(flag string, names []string, state GroupState) {
	for _, n := range names {
		if _, known := r.states[n]; !known {
			r.problem(SeverityError, SourceCommandLine, flag, "%s", withFix(fmt.Sprintf("group %q does not exist", n), n, r.groups, `run "toolfold groups" to list the groups`))
			continue
		}
		if other, dup := r.flagged[n]; dup && other != flag {
			r.problem(SeverityError, SourceCommandLine, flag, "group %q is given to both %s and %s; keep it in one", n, other, flag)
			continue
		}
		r.flagged[n] = flag
		r.states[n] = state
	}
}

// hierarchy lets exclusion flow down to descendants, then enabling flow up
// to ancestors.
func (r *stateResolver) hierarchy() {
	for _, g := range r.groups {
		for _, anc := range r.cfg.ancestors(g) {
			if r.states[anc] == GroupExcluded && r.states[g] != GroupExcluded {
				if r.states[g] == GroupEnabled {
					r.problem(SeverityWarning, "", g, "group %q is switched on but its ancestor %q is excluded, so it is excluded too; enable %q or stop excluding it", g, anc, anc)
				}
				r.states[g] = GroupExcluded
				break
			}
		}
	}
	for _, g := range r.groups {
		if r.states[g] != GroupEnabled {
			continue
		}
		for _, anc := range r.cfg.ancestors(g) {
			if _, ok := r.states[anc]; ok {
				r.states[anc] = GroupEnabled
			}
		}
	}
}

// ancestors lists a group's parent, grandparent and so on, stopping at a cycle
// (which Validate reports).
func (c *Config) ancestors(g string) []string {
	var out []string
	seen := map[string]bool{g: true}
	for p := c.ParentOf(g); p != "" && !seen[p]; p = c.ParentOf(p) {
		seen[p] = true
		out = append(out, p)
	}
	return out
}
