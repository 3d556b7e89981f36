package oauth

import (
	"slices"

	"github.com/toolfold/toolfold/internal/config"
)

// Grant applies the rules to a caller: the groups of every matching rule
// add up ("*" grants all), one matching read-only rule makes the caller
// read-only, and one matching admin rule opens the operator's routes. A
// caller no rule matches reaches nothing.
func Grant(rules []config.OAuthRule, c *Caller) Reach {
	var r Reach
	for _, rule := range rules {
		if !matches(rule, c) {
			continue
		}
		if rule.ReadOnly {
			r.ReadOnly = true
		}
		if rule.Admin {
			r.Admin = true
		}
		for _, g := range rule.Groups {
			if g == "*" {
				r.All = true
			} else {
				r.Groups = append(r.Groups, g)
			}
		}
	}
	if r.All {
		r.Groups = nil
		return r
	}
	slices.Sort(r.Groups)
	r.Groups = slices.Compact(r.Groups)
	return r
}

// matches reports whether every condition the rule sets holds. A rule
// with no condition matches no one (the config refuses it anyway).
func matches(rule config.OAuthRule, c *Caller) bool {
	if rule.Group == "" && rule.Scope == "" && rule.Sub == "" {
		return false
	}
	return (rule.Group == "" || slices.Contains(c.Groups, rule.Group)) &&
		(rule.Scope == "" || slices.Contains(c.Scopes, rule.Scope)) &&
		(rule.Sub == "" || rule.Sub == c.Subject)
}
