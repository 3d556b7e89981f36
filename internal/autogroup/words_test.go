package autogroup

import (
	"slices"
	"strings"
	"testing"
	"unicode"
)

// TestEachWordIsFieldsFunc: eachWord finds the fields strings.FieldsFunc
// finds at non-letters and non-digits, without building the slice.
func TestEachWordIsFieldsFunc(t *testing.T) {
	for _, s := range []string{
		"", "   ", "one", "List GitHub issues, by repo (v2).", "  lead and trail  ",
		"naïve café — Straße", "x\xffy", "数据 analysis123 done", "K\u212aK",
	} {
		want := strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		var got []string
		eachWord(s, func(w string) { got = append(got, w) })
		if !slices.Equal(got, want) {
			t.Errorf("eachWord(%q) = %q, want %q", s, got, want)
		}
	}
}

// spellings spells every word as spelling does, over the shared catalogs'
// tools: each word of every description (in every case it is written)
// and the resource words of every name.
func TestSpellingsAgreeWithSpelling(t *testing.T) {
	for _, server := range loadShared(t) {
		items := make([]*item, len(server.tools))
		var words []string
		seen := map[string]bool{}
		add := func(w string) {
			if !seen[w] {
				seen[w] = true
				words = append(words, w)
			}
		}
		for i, tl := range server.tools {
			items[i] = prepare(tl, splitWords(tl.Name))
			for _, w := range items[i].name {
				add(w)
			}
			eachWord(tl.Description, func(w string) { add(w); add(strings.ToLower(w)) })
		}
		got := spellings(words, items)
		for _, w := range words {
			if want := spelling(w, items); got[w] != want {
				t.Errorf("%s: %q spelled %q, want %q as spelling spells it", server.name, w, got[w], want)
			}
		}
	}
}
