package search

import (
	"hash/maphash"
	"slices"
	"strings"
)

// The index lives as long as its catalog and is read by every find call,
// while the gateway's heap is collected again and again around it. Its
// structures are therefore kept flat: a few large arrays of integers and
// one string per table, rather than a slice or a string per doc, per term
// and per group. The collector's mark phase skips arrays without pointers
// whole, so that an index costs each collection a few hundred objects to
// visit (its synonym table's) whatever the catalog's size, not tens of
// thousands.

// stringTable holds many strings as one: string i is text[at[i]:at[i+1]].
type stringTable struct {
	text string
	at   []uint32
}

func newStringTable(strs []string) stringTable {
	size := 0
	for _, s := range strs {
		size += len(s)
	}
	var b strings.Builder
	b.Grow(size)
	at := make([]uint32, len(strs)+1)
	for i, s := range strs {
		b.WriteString(s)
		at[i+1] = uint32(b.Len())
	}
	return stringTable{text: b.String(), at: at}
}

// len returns the number of strings.
func (st *stringTable) len() int { return len(st.at) - 1 }

// get returns string i.
func (st *stringTable) get(i int32) string { return st.text[st.at[i]:st.at[i+1]] }

// termTable maps stems to term IDs (the place of the stem in the table)
// by open addressing over a power-of-two array of slots, each a term ID
// plus one (0: empty).
type termTable struct {
	stems stringTable
	slots []int32
	seed  maphash.Seed
}

// newTermTable numbers stems: stems[t] gets term ID t. The stems must be
// distinct.
func newTermTable(stems []string) termTable {
	size := 8
	for size < 2*len(stems) {
		size *= 2
	}
	tt := termTable{stems: newStringTable(stems), slots: make([]int32, size), seed: maphash.MakeSeed()}
	mask := uint64(size - 1)
	for t, s := range stems {
		i := maphash.String(tt.seed, s) & mask
		for tt.slots[i] != 0 {
			i = (i + 1) & mask
		}
		tt.slots[i] = int32(t) + 1
	}
	return tt
}

// lookup returns the term ID of a stem.
func (tt *termTable) lookup(stem string) (int32, bool) {
	mask := uint64(len(tt.slots) - 1)
	for i := maphash.String(tt.seed, stem) & mask; tt.slots[i] != 0; i = (i + 1) & mask {
		if t := tt.slots[i] - 1; tt.stems.get(t) == stem {
			return t, true
		}
	}
	return 0, false
}

// len returns the number of terms.
func (tt *termTable) len() int { return tt.stems.len() }

// flatLists holds one list per key (a term's postings, the docs naming a
// term) in one array: list k is all[at[k]:at[k+1]].
type flatLists[T any] struct {
	all []T
	at  []uint32
}

// of returns list k.
func (fl *flatLists[T]) of(k int32) []T { return fl.all[fl.at[k]:fl.at[k+1]] }

// len returns the number of lists.
func (fl *flatLists[T]) len() int { return len(fl.at) - 1 }

// newFlatLists lays out lists of the given lengths; fill them with the
// filler's put, each list in the order its items are put.
func newFlatLists[T any](counts []int32) (flatLists[T], *flatFiller[T]) {
	at := make([]uint32, len(counts)+1)
	for k, c := range counts {
		at[k+1] = at[k] + uint32(c)
	}
	fl := flatLists[T]{all: make([]T, at[len(counts)]), at: at}
	return fl, &flatFiller[T]{all: fl.all, next: slices.Clone(at[:len(counts)])}
}

// flatFiller fills the lists newFlatLists laid out.
type flatFiller[T any] struct {
	all  []T
	next []uint32 // where list k's next item goes
}

// put appends v to list k.
func (f *flatFiller[T]) put(k int32, v T) {
	f.all[f.next[k]] = v
	f.next[k]++
}

// stemsByID lists a term dictionary's stems by term ID.
func stemsByID(terms map[string]int32) []string {
	out := make([]string, len(terms))
	for s, t := range terms {
		out[t] = s
	}
	return out
}
