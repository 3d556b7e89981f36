package catalog

import (
	"cmp"
	"slices"
	"strings"
)

// Nearest returns up to n candidates that look like name, closest first: a
// candidate that contains name (or is contained in it) ranks by how much it
// adds, others by edit distance. Candidates too far off to be a plausible typo
// are left out, so an empty result means "nothing close".
func Nearest(name string, candidates []string, n int) []string {
	type scored struct {
		s string
		d int
	}
	lower := strings.ToLower(name)
	var out []scored
	for _, c := range candidates {
		lc := strings.ToLower(c)
		if lc == lower {
			out = append(out, scored{c, 0})
			continue
		}
		d := editDistance(lower, lc)
		limit := max(2, min(len(lower), len(lc))/3)
		if lower != "" && (strings.Contains(lc, lower) || strings.Contains(lower, lc)) {
			d = min(d, 1+abs(len(lc)-len(lower))/4)
		} else if d > limit {
			continue
		}
		out = append(out, scored{c, d})
	}
	slices.SortStableFunc(out, func(a, b scored) int {
		if c := cmp.Compare(a.d, b.d); c != 0 {
			return c
		}
		return cmp.Compare(a.s, b.s)
	})
	if len(out) > n {
		out = out[:n]
	}
	names := make([]string, len(out))
	for i, s := range out {
		names[i] = s.s
	}
	return names
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
