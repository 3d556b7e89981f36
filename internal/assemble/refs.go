package assemble

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/config"
)

// groupRef is a group the config names where the group must exist: an
// initial group, a token's group. The config accepts names that only
// discovery can bring (a derived group, a group an upstream declares), so
// every name is checked against each catalog built.
type groupRef struct {
	// path is the key path in the config, "disclosure.initialGroups[0]".
	path string
	name catalog.GroupID
	// initial marks an initial group, which new views enable.
	initial bool
}

// groupRefs lists the config's references to groups that must exist.
func groupRefs(cfg *config.Config) []groupRef {
	var out []groupRef
	for i, g := range cfg.Disclosure.InitialGroups {
		out = append(out, groupRef{path: fmt.Sprintf("disclosure.initialGroups[%d]", i), name: catalog.GroupID(g), initial: true})
	}
	for i, t := range cfg.HTTP.Auth.Tokens {
		for j, g := range t.Groups {
			out = append(out, groupRef{path: fmt.Sprintf("http.auth.tokens[%d].groups[%d]", i, j), name: catalog.GroupID(g)})
		}
	}
	return out
}

// refProblems are the references a catalog cannot honour, located in
// the config (file, line, key path). A name that a source still starting
// may bring (catalog.Awaits) is no problem yet: it is checked again when
// the source's tools arrive.
func (p *Plan) refProblems(cat *catalog.Catalog, sev config.Severity) config.Diagnostics {
	var out config.Diagnostics
	for _, r := range p.refs {
		if _, ok := cat.Group(r.name); ok || cat.Awaits(r.name) {
			continue
		}
		out = append(out, p.cfg.Problemf(sev, r.path, "%s", missingRef(cat, r)))
	}
	return out
}

// missingRef says why a named group is not in the catalog and what it may
// have meant.
func missingRef(cat *catalog.Catalog, r groupRef) string {
	what := "a token limited to it would reach none of its tools"
	if r.initial {
		what = "new views cannot enable it"
	}
	for id := r.name; id != ""; id = parentName(id) {
		if slices.ContainsFunc(cat.Excluded(), func(e catalog.ExcludedGroup) bool { return e.ID == id }) {
			excluded := fmt.Sprintf("its group %q is", id)
			if id == r.name {
				excluded = "it is"
			}
			return fmt.Sprintf("group %q is not served: %s excluded (a --exclude-groups flag, MCP_GROUP_ switch or \"default\": \"excluded\"), so %s; remove it here or stop excluding it", r.name, excluded, what)
		}
	}
	msg := fmt.Sprintf("group %q does not exist", r.name)
	for id := parentName(r.name); id != ""; id = parentName(id) {
		if _, ok := cat.Group(id); ok {
			msg = fmt.Sprintf("group %q does not exist: no group of that name was derived from the tools of %q or declared by its servers", r.name, id)
			break
		}
	}
	fix := "fix the name ('toolfold groups' lists the groups, derived ones too, from the tools known now; 'toolfold tools' refreshes the cached lists)"
	// The groups the name sits under are named above, and contain it, so
	// they would always look near.
	candidates := slices.DeleteFunc(cat.GroupIDs(), func(id string) bool { return strings.HasPrefix(string(r.name), id+".") })
	if near := catalog.Nearest(string(r.name), candidates, 1); len(near) > 0 {
		return fmt.Sprintf("%s; did you mean %q? %s%s.", msg, near[0], strings.ToUpper(fix[:1]), fix[1:])
	}
	return msg + "; " + fix + "."
}

func parentName(id catalog.GroupID) catalog.GroupID {
	if i := strings.LastIndexByte(string(id), '.'); i > 0 {
		return id[:i]
	}
	return ""
}

// initialGroups are the plan's initial groups that the catalog has: those
// a source still starting may bring are left out until they come, and
// those that cannot come are reported by refProblems.
func (p *Plan) initialGroups(cat *catalog.Catalog) []catalog.GroupID {
	return slices.DeleteFunc(slices.Clone(p.View.InitialGroups), func(id catalog.GroupID) bool {
		_, ok := cat.Group(id)
		return !ok
	})
}
