package config

import (
	"fmt"
	"strings"
)

// LookupEnv is how the loader reads environment variables; os.LookupEnv in
// production, a map in tests. A nil LookupEnv sees no variables at all.
type LookupEnv func(name string) (value string, ok bool)

// MapEnv adapts a map to LookupEnv, for tests and embedding.
func MapEnv(vars map[string]string) LookupEnv {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

// expansionError is one failed ${...} reference in a string value.
type expansionError struct {
	unset bool // the variable is unset and has no default (vs. bad syntax)
	msg   string
}

// maxExpansionDepth bounds ${A:-${B:-${C...}}} nesting, which only a hostile
// or broken file reaches.
const maxExpansionDepth = 10

// expand replaces ${VAR} and ${VAR:-default} in s. The default may itself hold
// references. "$${" is a literal "${"; any other "$" is kept as written, so
// configs copied from other clients with "$HOME" or "$1" in args do not change.
// Variables are looked up, never re-expanded: a value holding "${X}" stays literal.
func expand(s string, lookup LookupEnv) (string, []expansionError) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var errs []expansionError
	out := expandDepth(s, lookup, 0, &errs)
	return out, errs
}

func expandDepth(s string, lookup LookupEnv, depth int, errs *[]expansionError) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c != '$' || i+1 >= len(s) {
			b.WriteByte(c)
			i++
			continue
		}
		switch {
		case strings.HasPrefix(s[i:], "$${"):
			b.WriteString("${")
			i += 3
		case s[i+1] == '{':
			end := matchingBrace(s, i+2)
			if end < 0 {
				*errs = append(*errs, expansionError{msg: fmt.Sprintf("%q opens ${ without a closing }; close it, or write $${ for a literal ${", s)})
				b.WriteString(s[i:])
				return b.String()
			}
			b.WriteString(resolveReference(s[i+2:end], lookup, depth, errs))
			i = end + 1
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// matchingBrace finds the } closing a ${ whose body starts at from, allowing
// nested ${...} in a default.
func matchingBrace(s string, from int) int {
	depth := 0
	for i := from; i < len(s); i++ {
		switch {
		case s[i] == '$' && i+1 < len(s) && s[i+1] == '{':
			depth++
			i++
		case s[i] == '}':
			if depth == 0 {
				return i
			}
			depth--
		}
	}
	return -1
}

// resolveReference expands one reference body: "VAR" or "VAR:-default". Cursor's
// and VS Code's spellings "env:VAR" and "userHome" (the HOME variable) are read
// too, so their mcp.json files load unchanged.
func resolveReference(body string, lookup LookupEnv, depth int, errs *[]expansionError) string {
	name, def, hasDefault := strings.Cut(body, ":-")
	name = strings.TrimPrefix(name, "env:")
	if name == "userHome" {
		name = "HOME"
	}
	if !envNamePattern.MatchString(name) {
		*errs = append(*errs, expansionError{msg: fmt.Sprintf("${%s} is not a variable reference; write ${NAME} or ${NAME:-default}, with NAME made of letters, digits and _ (or $${ for a literal ${)", body)})
		return ""
	}
	var value string
	var ok bool
	if lookup != nil {
		value, ok = lookup(name)
	}
	if ok && (value != "" || !hasDefault) {
		return value
	}
	if hasDefault {
		if depth >= maxExpansionDepth {
			*errs = append(*errs, expansionError{msg: fmt.Sprintf("${%s} nests defaults more than %d deep; simplify it", name, maxExpansionDepth)})
			return ""
		}
		return expandDepth(def, lookup, depth+1, errs)
	}
	*errs = append(*errs, expansionError{unset: true, msg: fmt.Sprintf("environment variable %s is not set; set it, or give a default with ${%s:-value}", name, name)})
	return ""
}
