package view

import "math/bits"

// Set is a set of small non-negative integers (catalog indexes), stored as a
// bitset. The zero value is empty. Sets are values: copy with Clone before
// changing a shared one.
type Set struct{ words []uint64 }

// NewSet returns an empty set sized for n elements.
func NewSet(n int) Set { return Set{words: make([]uint64, (n+63)/64)} }

// Has reports whether i is in the set.
func (s Set) Has(i int) bool {
	w := i / 64
	return w < len(s.words) && s.words[w]&(1<<(uint(i)%64)) != 0
}

// Add puts i in the set.
func (s *Set) Add(i int) {
	w := i / 64
	for w >= len(s.words) {
		s.words = append(s.words, 0)
	}
	s.words[w] |= 1 << (uint(i) % 64)
}

// Remove takes i out of the set.
func (s *Set) Remove(i int) {
	if w := i / 64; w < len(s.words) {
		s.words[w] &^= 1 << (uint(i) % 64)
	}
}

// Len counts the elements.
func (s Set) Len() int {
	n := 0
	for _, w := range s.words {
		n += bits.OnesCount64(w)
	}
	return n
}

// Clone returns an independent copy.
func (s Set) Clone() Set { return Set{words: append([]uint64(nil), s.words...)} }

// Equal reports whether both sets hold the same elements.
func (s Set) Equal(o Set) bool {
	n := max(len(s.words), len(o.words))
	for i := range n {
		var a, b uint64
		if i < len(s.words) {
			a = s.words[i]
		}
		if i < len(o.words) {
			b = o.words[i]
		}
		if a != b {
			return false
		}
	}
	return true
}

// Each calls fn for every element in ascending order.
func (s Set) Each(fn func(int)) {
	for wi, w := range s.words {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			fn(wi*64 + b)
			w &= w - 1
		}
	}
}

// Minus returns the elements of s that are not in o.
func (s Set) Minus(o Set) Set {
	out := s.Clone()
	for i := range min(len(out.words), len(o.words)) {
		out.words[i] &^= o.words[i]
	}
	return out
}
