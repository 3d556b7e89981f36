package config

import (
	"fmt"
	"strings"
)

// Groups that exist only once the tools are known.
//
// Derived groups (disclosure.autoGroups) and the groups an upstream server
// declares through the groups extension are named under a group the config
// knows: "twilio.queue", "github.issues.labels". The config cannot list them
// before discovery, so a reference to such a name is accepted here and
// checked against the catalog once it is built (internal/assemble).

// Splits reports whether derived groups may split the group name, a group
// GroupNames lists: derivation is on, and neither the group nor a server
// whose tools join it says "autoGroups": false, and the group does not
// choose its tools by rules of its own (unless it says "autoGroups": true).
func (c *Config) Splits(name string) bool {
	return c.splits(name, c.staticGroups(), c.unsplit())
}

// SplitGroups are the names Splits is true of, worked out at once: asked
// group by group, a catalog of a thousand servers costs a million steps.
func (c *Config) SplitGroups() map[string]bool {
	out := map[string]bool{}
	static, unsplit := c.staticGroups(), c.unsplit()
	for name := range static {
		if c.splits(name, static, unsplit) {
			out[name] = true
		}
	}
	return out
}

// unsplit are the groups of servers that say "autoGroups": false.
func (c *Config) unsplit() map[string]bool {
	out := map[string]bool{}
	for _, sc := range c.MCPServers {
		if group, grouped := sc.EffectiveGroup(); grouped && sc.AutoGroups != nil && !*sc.AutoGroups {
			out[group] = true
		}
	}
	return out
}

func (c *Config) splits(name string, static, unsplit map[string]bool) bool {
	if !c.Disclosure.AutoGroups.Enabled || !static[name] {
		return false
	}
	gc, declared := c.Groups[name]
	if declared && gc.AutoGroups != nil {
		return *gc.AutoGroups
	}
	if unsplit[name] {
		return false
	}
	return !declared || len(gc.Tools)+len(gc.Prefixes)+len(gc.Servers)+len(gc.Tags) == 0
}

// MayDiscover reports whether a name the config does not know may still
// name a group once the tools are known: it sits under a group derivation
// may split, or under the group of an enabled MCP server, whose own
// groups land there. Such a name is checked against the catalog.
func (c *Config) MayDiscover(name string) bool {
	return c.discoveredUnder(name) != ""
}

// discoveredUnder is the nearest group the config knows that name sits
// under and that may gain child groups with discovery, or "".
func (c *Config) discoveredUnder(name string) string {
	if !groupNamePattern.MatchString(name) || strings.HasSuffix(name, ".") || strings.Contains(name, "..") || c.staticGroups()[name] {
		return ""
	}
	for p := impliedParent(name); p != ""; p = impliedParent(p) {
		if c.staticGroups()[p] {
			if c.onlyDisabled(p) {
				return "" // nothing will ever fill it
			}
			if c.Splits(p) || c.serverGroup(p) {
				return p
			}
			return ""
		}
	}
	return ""
}

// serverGroup reports whether an enabled MCP server's tools join the group.
func (c *Config) serverGroup(name string) bool {
	for _, sc := range c.MCPServers {
		if group, grouped := sc.EffectiveGroup(); grouped && group == name && !sc.Disabled {
			return true
		}
	}
	return false
}

// onlyDisabled reports whether a group is only the implied group of
// disabled servers: no tool will ever join it.
func (c *Config) onlyDisabled(name string) bool {
	if _, declared := c.Groups[name]; declared {
		return false
	}
	if _, command := c.Commands[name]; command {
		return false
	}
	for _, sc := range c.MCPServers {
		if group, grouped := sc.EffectiveGroup(); grouped && group == name && !sc.Disabled {
			return false
		}
	}
	return true
}

// missingGroupRef words a reference to a group that neither the config
// knows nor discovery can bring: why nothing comes under the known group it
// sits under, if it does; then the nearest known name if one is close, else,
// for a dotted name whose first part is a typo of a group that gains groups
// with discovery, the name under that group.
func (c *Config) missingGroupRef(name string) string {
	known := c.GroupNames()
	wrong := fmt.Sprintf("group %q does not exist", name)
	for p := impliedParent(name); p != ""; p = impliedParent(p) {
		if c.staticGroups()[p] {
			wrong += " (" + c.noChildren(p) + ")"
			break
		}
	}
	if nearest(name, known) == "" {
		if head, rest, dotted := strings.Cut(name, "."); dotted {
			if fixed := nearest(head, known); fixed != "" && fixed != head && c.MayDiscover(fixed+"."+rest) {
				return withFix(wrong, fixed+"."+rest, []string{fixed + "." + rest},
					`fix the name ('toolfold groups' lists the groups, derived ones too)`)
			}
		}
	}
	return missingGroup(wrong, name, known)
}

// noChildren says why no group comes under a known group with discovery.
func (c *Config) noChildren(group string) string {
	gc, declared := c.Groups[group]
	switch {
	case c.onlyDisabled(group):
		return fmt.Sprintf("nothing comes under %q: its servers are disabled", group)
	case !c.Disclosure.AutoGroups.Enabled:
		return fmt.Sprintf("no groups are derived under %q: disclosure.autoGroups.enabled is false", group)
	case declared && gc.AutoGroups != nil && !*gc.AutoGroups:
		return fmt.Sprintf("no groups are derived under %q: its \"autoGroups\" is false", group)
	case declared && gc.AutoGroups == nil && len(gc.Tools)+len(gc.Prefixes)+len(gc.Servers)+len(gc.Tags) > 0:
		return fmt.Sprintf("no groups are derived under %q, which chooses its tools by rules", group)
	}
	return fmt.Sprintf("no groups are derived under %q", group)
}
