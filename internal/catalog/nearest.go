package catalog

import (
	"cmp"
	"slices"
	"strings"
)

// maxNearestName bounds the name Nearest looks for: a name this long is no
// typo of a tool's, and a client may send one of any size.
const maxNearestName = 512

// Nearest returns up to n candidates that look like name, closest first: a
// candidate that contains name (or is contained in it) ranks by how much it
// adds, others by edit distance. Candidates too far off to be a plausible typo
// are left out, so an empty result means "nothing close".
//
// Clients reach it with names they make up, over every tool of a catalog:
// a candidate whose length alone puts it out of reach costs no distance,
// and a distance stops counting once it is out of reach.
func Nearest(name string, candidates []string, n int) []string {
	if len(name) > maxNearestName {
		return nil
	}
	type scored struct {
		s string
		d int
	}
	lower := strings.ToLower(name)
	var out []scored
	var rows distanceRows
	bag := newByteBag(lower)
	for _, c := range candidates {
		lc := strings.ToLower(c)
		if lc == lower {
			out = append(out, scored{c, 0})
			continue
		}
		if lower != "" && (strings.Contains(lc, lower) || strings.Contains(lower, lc)) {
			// The distance of one string inside another is their
			// difference in length, never less than this.
			out = append(out, scored{c, 1 + abs(len(lc)-len(lower))/4})
			continue
		}
		limit := max(2, min(len(lower), len(lc))/3)
		if abs(len(lc)-len(lower)) > limit || bag.distance(lc) > limit {
			continue // the distance is at least either
		}
		if d := rows.within(lower, lc, limit); d <= limit {
			out = append(out, scored{c, d})
		}
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

// byteBag counts the bytes of the name Nearest looks for. Its distance to
// another string (the bytes one has and the other lacks, the larger side)
// is never more than their edit distance, and costs one pass.
type byteBag struct {
	counts [256]int32
	diff   [256]int32 // scratch, all zero between calls
	total  int
}

func newByteBag(s string) *byteBag {
	b := &byteBag{total: len(s)}
	for i := 0; i < len(s); i++ {
		b.counts[s[i]]++
	}
	return b
}

// distance is the bag distance between the name and s.
func (b *byteBag) distance(s string) int {
	// Each byte of s takes one of the name's, or is extra; the name's
	// bytes left untaken are missing. An edit fixes at most one of each.
	extra := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if b.diff[c] < b.counts[c] {
			b.diff[c]++
		} else {
			extra++
		}
	}
	taken := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		taken += int(b.diff[c])
		b.diff[c] = 0
	}
	return max(extra, b.total-taken)
}

// distanceRows are the two rows of a Levenshtein table, kept between
// candidates.
type distanceRows struct{ prev, cur []int }

// within is the Levenshtein distance between a and b, in bytes, when it is
// at most limit, and limit+1 otherwise: it stops as soon as a whole row of
// the table is past limit, since the distance is never less than a row's
// least value.
func (r *distanceRows) within(a, b string, limit int) int {
	if cap(r.prev) < len(b)+1 {
		r.prev, r.cur = make([]int, len(b)+1), make([]int, len(b)+1)
	}
	prev, cur := r.prev[:len(b)+1], r.cur[:len(b)+1]
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		least := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			least = min(least, cur[j])
		}
		if least > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], limit+1)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
