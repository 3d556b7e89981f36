package expose

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// abbreviations end with a period that does not end a sentence. "etc." is
// not here: it ends one when a capital letter follows.
var abbreviations = map[string]bool{
	"e.g": true, "i.e": true, "eg": true, "ie": true, "vs": true, "cf": true,
	"approx": true, "incl": true, "esp": true, "resp": true, "fig": true,
	"no": true, "nos": true, "al": true, "mr": true, "mrs": true, "ms": true,
	"dr": true, "st": true, "jr": true, "sr": true, "min": true, "max": true,
}

// sentenceEnd returns the length of the first sentence of s (through its
// closing punctuation and any quotes or brackets that follow it), or -1 if
// s is one sentence. A period ends a sentence only where whitespace follows
// it, so decimals (3.5), versions (v1.2.3), file names and URLs never cut;
// nor do abbreviations (e.g., i.e., vs.), initials (J. R.), an ellipsis,
// a mark standing alone ("* and ? match") or "etc." before a lower-case word.
func sentenceEnd(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '.' && c != '!' && c != '?' {
			continue
		}
		if i == 0 || s[i-1] == ' ' || s[i-1] == '\t' {
			continue // a symbol on its own: "* and ? within a name"
		}
		end := i + 1
		for end < len(s) && strings.IndexByte(`"')]»`, s[end]) >= 0 {
			end++
		}
		if end < len(s) && s[end] != ' ' && s[end] != '\t' {
			continue // inside a word: 3.5, v1.2, example.com, "e.g.,"
		}
		if end == len(s) {
			return -1
		}
		if c == '.' && !endsSentence(s[:i], strings.TrimLeft(s[end:], " \t")) {
			continue
		}
		return end
	}
	return -1
}

// endsSentence reports whether a period after before, followed by after,
// ends a sentence.
func endsSentence(before, after string) bool {
	if strings.HasSuffix(before, "..") {
		return false // an ellipsis
	}
	word := before[strings.LastIndexAny(before, " \t(\"'[")+1:]
	lower := strings.ToLower(word)
	if abbreviations[lower] {
		return false
	}
	if r, n := utf8.DecodeRuneInString(word); n == len(word) && unicode.IsUpper(r) {
		return false // an initial
	}
	next, _ := utf8.DecodeRuneInString(after)
	if lower == "etc" || strings.Contains(lower, ".") {
		// "etc." and dotted abbreviations ("U.S.", "a.m.") end a sentence
		// only when a new one visibly starts.
		return unicode.IsUpper(next)
	}
	return true
}
