package catalog

import (
	"bytes"
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"
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
	m, ok := newNearMatcher(name)
	if !ok {
		return nil
	}
	m.considerAll(candidates)
	return m.best(n)
}

// NearIndex holds names for Nearest lookups, lowercased once into one
// block: a misspelt name is compared with every tool's, and over 20,000
// tools in a gateway's heap, following a pointer to each name and
// lowercasing it cost milliseconds a lookup.
type NearIndex struct {
	names []string
	lower []byte
	at    []uint32 // names[i] lowercased is lower[at[i]:at[i+1]]
}

// NewNearIndex indexes names; it keeps the slice.
func NewNearIndex(names []string) *NearIndex {
	x := &NearIndex{names: names, at: make([]uint32, len(names)+1)}
	var b []byte
	for i, name := range names {
		b = appendLower(b, name)
		x.at[i+1] = uint32(len(b))
	}
	x.lower = slices.Clip(b)
	return x
}

// Nearest is Nearest over extra and the indexed names, in that order.
func (x *NearIndex) Nearest(name string, extra []string, n int) []string {
	m, ok := newNearMatcher(name)
	if !ok {
		return nil
	}
	m.considerAll(extra)
	for i, c := range x.names {
		m.consider(x.lower[x.at[i]:x.at[i+1]], c)
	}
	return m.best(n)
}

// nearMatcher scores candidates against one name, for Nearest.
type nearMatcher struct {
	lower []byte
	bag   *byteBag
	rows  distanceRows
	out   []nearScored
}

type nearScored struct {
	s string
	d int
}

func newNearMatcher(name string) (*nearMatcher, bool) {
	if len(name) > maxNearestName {
		return nil, false
	}
	lower := []byte(strings.ToLower(name))
	return &nearMatcher{lower: lower, bag: newByteBag(lower)}, true
}

// consider scores candidate c, lc being it lowercased.
func (m *nearMatcher) consider(lc []byte, c string) {
	lower := m.lower
	if bytes.Equal(lc, lower) {
		m.out = append(m.out, nearScored{c, 0})
		return
	}
	if len(lower) > 0 && (bytes.Contains(lc, lower) || bytes.Contains(lower, lc)) {
		// The distance of one string inside another is their
		// difference in length, never less than this.
		m.out = append(m.out, nearScored{c, 1 + abs(len(lc)-len(lower))/4})
		return
	}
	limit := max(2, min(len(lower), len(lc))/3)
	if abs(len(lc)-len(lower)) > limit || m.bag.distance(lc) > limit {
		return // the distance is at least either
	}
	if d := m.rows.within(lower, lc, limit); d <= limit {
		m.out = append(m.out, nearScored{c, d})
	}
}

// considerAll considers each candidate, lowercased into one reused
// buffer.
func (m *nearMatcher) considerAll(candidates []string) {
	var buf []byte
	for _, c := range candidates {
		buf = appendLower(buf[:0], c)
		m.consider(buf, c)
	}
}

// best returns the n closest candidates considered, closest first.
func (m *nearMatcher) best(n int) []string {
	slices.SortStableFunc(m.out, func(a, b nearScored) int {
		if c := cmp.Compare(a.d, b.d); c != 0 {
			return c
		}
		return cmp.Compare(a.s, b.s)
	})
	out := m.out[:min(len(m.out), n)]
	names := make([]string, len(out))
	for i, s := range out {
		names[i] = s.s
	}
	return names
}

// appendLower appends s lowercased as strings.ToLower does: byte by byte
// for ASCII, through strings.ToLower for the rest.
func appendLower(dst []byte, s string) []byte {
	n := len(dst)
	dst = slices.Grow(dst, len(s))[:n+len(s)]
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return append(dst[:n], strings.ToLower(s)...)
		}
		if c-'A' < 26 {
			c += 'a' - 'A'
		}
		dst[n+i] = c
	}
	return dst
}

// byteBag counts the bytes of the name Nearest looks for. Its distance to
// another string (the bytes one has and the other lacks, the larger side)
// is never more than their edit distance, and costs one pass.
type byteBag struct {
	counts [256]int32
	diff   [256]int32 // scratch, all zero between calls
	total  int
}

func newByteBag(s []byte) *byteBag {
	b := &byteBag{total: len(s)}
	for i := 0; i < len(s); i++ {
		b.counts[s[i]]++
	}
	return b
}

// distance is the bag distance between the name and s.
func (b *byteBag) distance(s []byte) int {
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
func (r *distanceRows) within(a, b []byte, limit int) int {
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
