package trust

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Diff is a line diff of two canonical definitions, indented for reading:
// "- " lines are the pinned text, "+ " the new, "  " both. old may be nil (a
// new item: every line is added).
func Diff(old, cur json.RawMessage) string {
	a, b := lines(old), lines(cur)
	// Longest common subsequence over lines: definitions are short (a
	// tool's is tens of lines), so the quadratic table is small.
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			out.WriteString("  " + a[i] + "\n")
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			out.WriteString("+ " + b[j] + "\n")
			j++
		default:
			out.WriteString("- " + a[i] + "\n")
			i++
		}
	}
	return out.String()
}

func lines(def json.RawMessage) []string {
	if len(def) == 0 {
		return nil
	}
	var buf bytes.Buffer
	if json.Indent(&buf, def, "", "  ") != nil {
		return []string{string(def)}
	}
	// Invisible characters show as "?": the diff is read in a terminal.
	return strings.Split(strings.Map(func(r rune) rune {
		if invisible(0, r) {
			return '?'
		}
		return r
	}, buf.String()), "\n")
}
