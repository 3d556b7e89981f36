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
