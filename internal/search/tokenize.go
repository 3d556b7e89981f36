package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// splitWords breaks text into lowercase words the way people read
// identifiers: separators are anything that is not a letter or a digit
// (snake_case, kebab-case, dots, slashes, spaces), and camelCase and
// PascalCase humps start new words ("TwilioApiV2010--CreateMessage" →
// twilio api v2010 create message; "HTTPServer" → http server).
//
// A word mixing letters and digits is kept whole, because such words are
// usually names in their own right (r2, d1, k8s, oauth2, v2010); its letter
// and digit parts of two or more characters follow it, so "base64" also
// matches "base" and "v2010" also matches "2010".
func splitWords(text string, emit func(word string)) {
	start := -1 // byte offset where the current hump starts
	var prev rune
	flush := func(end int) {
		if start >= 0 && end > start {
			emitWord(strings.ToLower(text[start:end]), emit)
		}
		start = -1
	}
	for i, r := range text {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			prev = r
			continue
		}
		if start < 0 {
			start = i
			prev = r
			continue
		}
		switch {
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			// camelCase: "getUser" splits before "U".
			flush(i)
			start = i
		case unicode.IsLower(r) && unicode.IsUpper(prev) && i-start > utf8.RuneLen(prev):
			// Acronym followed by a word: "HTTPServer" splits before "S",
			// so the hump that started at "H" ends at the previous rune.
			prevStart := i - utf8.RuneLen(prev)
			flush(prevStart)
			start = prevStart
		case unicode.IsUpper(r) && unicode.IsDigit(prev):
			// "V2010Create" splits before "C"; "v2" stays one word.
			flush(i)
			start = i
		}
		prev = r
	}
	flush(len(text))
}

// emitWord emits w and, when it mixes letters and digits, its parts.
func emitWord(w string, emit func(string)) {
	emit(w)
	hasLetter, hasDigit := false, false
	for _, r := range w {
		if unicode.IsDigit(r) {
			hasDigit = true
		} else {
			hasLetter = true
		}
	}
	if !hasLetter || !hasDigit {
		return
	}
	partStart := 0
	runes := []rune(w)
	for i := 1; i <= len(runes); i++ {
		if i == len(runes) || unicode.IsDigit(runes[i]) != unicode.IsDigit(runes[i-1]) {
			if i-partStart >= 2 {
				emit(string(runes[partStart:i]))
			}
			partStart = i
		}
	}
}

// stopWords are function words and conversational filler ("please show me
// what I ...") that say nothing about which tool is wanted. Words that do
// carry meaning in a tool catalog stay searchable even though general
// English stop lists drop them: on/off (maintenance_on), up/down, all, new,
// not, out, over, back, first, last, more.
var stopWords = func() map[string]bool {
	words := strings.Fields(`
		a an the of to in into onto for with without by from at as and or nor but
		is are was were be been being am do does did doing done has have had having
		this that these those it its it's they them their there here then than so
		such some any each every if else when where why how what which who whom whose
		i me my mine we our ours us you your yours he him his she her hers
		can could would should will shall may might must
		please want wants wanted need needs like let lets just also about via
		very really quite eg ie etc e g i.e e.g called named
		under above below across within through among upon towards
	`)
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}()

// isStopWord reports whether a lowercase word carries no search meaning.
// Single letters are noise too ("page's" splits into "page" and "s");
// single digits are kept ("step 2").
func isStopWord(w string) bool {
	if stopWords[w] {
		return true
	}
	if utf8.RuneCountInString(w) == 1 {
		r, _ := utf8.DecodeRuneInString(w)
		return !unicode.IsDigit(r)
	}
	return false
}

// analyze turns text into the stems the index and queries compare: words
// split as identifiers, stop words dropped, each word stemmed.
func analyze(text string) []string {
	var out []string
	splitWords(text, func(w string) {
		if !isStopWord(w) {
			out = append(out, stem(w))
		}
	})
	return out
}
