package config

import (
	"fmt"
	"sort"
	"strings"
)

// Severity says whether a Problem stops toolfold from starting.
type Severity int

const (
	// SeverityError marks a problem that refuses the config: nothing starts.
	SeverityError Severity = iota
	// SeverityWarning marks a problem worth telling the user about that does not
	// stop toolfold (an ignored key from another client's format, for example).
	SeverityWarning
)

// String returns "error" or "warning".
func (s Severity) String() string {
	if s == SeverityWarning {
		return "warning"
	}
	return "error"
}

// Problem is one thing wrong with a config, located precisely enough for a user to
// fix it without reading toolfold's source.
type Problem struct {
	// Severity is SeverityError or SeverityWarning.
	Severity Severity
	// File is the config file name as the user gave it, or a pseudo-source such as
	// "environment" or "command line" for deployment switches. Empty when unknown.
	File string
	// Line is the 1-based line of the offending key or value in File, 0 when unknown.
	Line int
	// Path is the key path inside the config, such as "mcpServers.github.args[2]"
	// or "groups.issues.parent"; for switches it is the flag or variable name.
	Path string
	// Message says what is wrong and how to fix it, as one or two sentences.
	Message string
}

// String formats the problem the way compilers do, so editors can jump to it:
//
//	toolfold.json:14: groups.issues.parent: group "gihub" does not exist; did you mean "github"? ...
//
// Warnings carry a "warning: " marker after the location; errors carry none.
func (p Problem) String() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		if p.Line > 0 {
			fmt.Fprintf(&b, ":%d", p.Line)
		}
		b.WriteString(": ")
	}
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	if p.Severity == SeverityWarning {
		b.WriteString("warning: ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Diagnostics is every problem found in one load, in file order.
type Diagnostics []Problem

// HasErrors reports whether any problem is an error (not just a warning).
func (d Diagnostics) HasErrors() bool {
	for _, p := range d {
		if p.Severity == SeverityError {
			return true
		}
	}
	return false
}

// Errors returns only the problems of severity error.
func (d Diagnostics) Errors() Diagnostics { return d.filter(SeverityError) }

// Warnings returns only the problems of severity warning.
func (d Diagnostics) Warnings() Diagnostics { return d.filter(SeverityWarning) }

func (d Diagnostics) filter(s Severity) Diagnostics {
	var out Diagnostics
	for _, p := range d {
		if p.Severity == s {
			out = append(out, p)
		}
	}
	return out
}

// String renders one problem per line.
func (d Diagnostics) String() string {
	lines := make([]string, len(d))
	for i, p := range d {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Err returns nil when there are no errors, and otherwise an *Error listing them,
// so a caller that only wants "did it work" can use ordinary Go error handling.
func (d Diagnostics) Err() error {
	errs := d.Errors()
	if len(errs) == 0 {
		return nil
	}
	return &Error{Problems: errs}
}

// sortByLocation orders problems by file, then line, keeping discovery order for
// ties, so a user reads them top to bottom as they appear in the file.
func (d Diagnostics) sortByLocation() {
	sort.SliceStable(d, func(i, j int) bool {
		if d[i].File != d[j].File {
			return d[i].File < d[j].File
		}
		return d[i].Line < d[j].Line
	})
}

// Error is the error form of a refused config: every error-severity problem.
type Error struct {
	Problems Diagnostics
}

// Error lists the problems, one per line, after a count.
func (e *Error) Error() string {
	if len(e.Problems) == 1 {
		return e.Problems[0].String()
	}
	return fmt.Sprintf("%d problems in the config:\n%s", len(e.Problems), e.Problems.String())
}

// nearest returns the candidate closest to word by edit distance, when it is close
// enough to be a plausible typo, or "" when none is. A case-insensitive match always
// counts, since "mcpservers" for "mcpServers" is the commonest slip.
func nearest(word string, candidates []string) string {
	best, bestDist := "", -1
	lw := strings.ToLower(word)
	for _, c := range candidates {
		if strings.ToLower(c) == lw {
			return c
		}
		d := editDistance(lw, strings.ToLower(c))
		if bestDist < 0 || d < bestDist || (d == bestDist && c < best) {
			best, bestDist = c, d
		}
	}
	if bestDist < 0 {
		return ""
	}
	// Allow roughly one edit per three characters, at least one, at most three:
	// "inlcude" → "include" (2) yes, "foo" → "env" no.
	limit := len([]rune(word)) / 3
	limit = max(limit, 1)
	limit = min(limit, 3)
	if bestDist > limit {
		return ""
	}
	return best
}

// editDistance is the optimal-string-alignment distance: Levenshtein plus
// transposition of adjacent characters counted as one edit ("inlcude").
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// didYouMean returns "; did you mean "x"?" for the nearest candidate, or "".
func didYouMean(word string, candidates []string) string {
	if n := nearest(word, candidates); n != "" {
		return fmt.Sprintf("; did you mean %q?", n)
	}
	return ""
}

// quoteList renders items as `"a", "b" and "c"` for messages.
func quoteList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = fmt.Sprintf("%q", s)
	}
	switch len(q) {
	case 0:
		return ""
	case 1:
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}
