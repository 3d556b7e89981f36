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
	const (
		other = iota
		lowerCase
		upperCase
		digit
	)
	start := -1 // byte offset where the current hump starts
	prev, prevSize := other, 0
	flush := func(end int) {
		if start >= 0 && end > start {
			emitWord(lower(text[start:end]), emit)
		}
		start = -1
	}
	for i := 0; i < len(text); {
		c, size, class := text[i], 1, other
		if c < utf8.RuneSelf {
			// Fast path: most catalog text is ASCII.
			switch {
			case 'a' <= c && c <= 'z':
				class = lowerCase
			case 'A' <= c && c <= 'Z':
				class = upperCase
			case '0' <= c && c <= '9':
				class = digit
			}
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(text[i:])
			switch {
			case unicode.IsUpper(r):
				class = upperCase
			case unicode.IsLetter(r):
				class = lowerCase // lowercase, or a script without case
			case unicode.IsDigit(r):
				class = digit
			}
		}
		switch {
		case class == other:
			flush(i)
		case start < 0:
			start = i
		case class == upperCase && prev == lowerCase:
			// camelCase: "getUser" splits before "U".
			flush(i)
			start = i
		case class == lowerCase && prev == upperCase && i-start > prevSize:
			// Acronym followed by a word: "HTTPServer" splits before
			// "S", so the hump that started at "H" ends before it.
			flush(i - prevSize)
			start = i - prevSize
		case class == upperCase && prev == digit:
			// "V2010Create" splits before "C"; "v2" stays one word.
			flush(i)
			start = i
		}
		prev, prevSize = class, size
		i += size
	}
	flush(len(text))
}

// lower lowercases a word, without allocating when it already is
// lowercase ASCII (most words of most descriptions).
func lower(w string) string {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c >= utf8.RuneSelf || ('A' <= c && c <= 'Z') {
			return strings.ToLower(w)
		}
	}
	return w
}

// emitWord emits w and, when it mixes letters and digits, its parts.
func emitWord(w string, emit func(string)) {
	emit(w)
	hasLetter, hasDigit := false, false
	for i := 0; i < len(w); i++ {
		if c := w[i]; '0' <= c && c <= '9' {
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
		everything anything something nothing everyone anyone someone
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

// analyzer is analyze with a memory, and the term dictionary of an index
// being built: a catalog repeats the same few thousand words, so a build
// stems each distinct word once and refers to stems by small integer IDs.
// It is used by one goroutine (one build).
type analyzer struct {
	words map[string]analyzedWord
	terms map[string]int32 // stem → term ID, for stems that were indexed
	// texts remembers whole analysed texts: parameter descriptions
	// ("Repository owner", "Page number") repeat across tools, and so does
	// every text of a server mounted under several prefixes.
	texts map[string][]int32
	// names remembers tool names split into words: servers mounted
	// under several prefixes repeat them, and a build reads each twice.
	names map[string][]nameWord
	block []int32 // concat's current block
}

// nameWord is one word of a tool's name, analysed.
type nameWord struct {
	stem string
	stop bool
	long bool  // more than one byte
	term int32 // -1 until the stem is indexed (nameTerm)
}

// nameWords splits a tool's name into its words, analysed. The result is
// shared by every tool of that name: only nameTerm may change it.
func (a *analyzer) nameWords(name string) []nameWord {
	if words, ok := a.names[name]; ok {
		return words
	}
	var words []nameWord
	splitWords(name, func(w string) {
		aw := a.word(w)
		words = append(words, nameWord{stem: aw.stem, stop: aw.stop, long: len(w) > 1, term: -1})
	})
	a.names[name] = words
	return words
}

// nameTerm returns w's term ID, interning its stem on first use, as
// termOf does for the word itself.
func (a *analyzer) nameTerm(w *nameWord) int32 {
	if w.term < 0 {
		w.term = a.intern(w.stem)
	}
	return w.term
}

type analyzedWord struct {
	stem string
	stop bool
	term int32 // -1 until the stem is indexed
}

func newAnalyzer() *analyzer {
	return &analyzer{words: map[string]analyzedWord{}, terms: map[string]int32{}, texts: map[string][]int32{}, names: map[string][]nameWord{}}
}

func (a *analyzer) word(w string) analyzedWord {
	if aw, ok := a.words[w]; ok {
		return aw
	}
	s := stem(w)
	aw := analyzedWord{stem: s, stop: isStopWord(w), term: -1}
	if t, ok := a.terms[s]; ok {
		aw.term = t
	}
	a.words[w] = aw
	return aw
}

func (a *analyzer) stem(w string) string { return a.word(w).stem }

// intern returns the term ID of a stem, assigning the next one if new.
func (a *analyzer) intern(stem string) int32 {
	t, ok := a.terms[stem]
	if !ok {
		t = int32(len(a.terms))
		a.terms[stem] = t
	}
	return t
}

// termOf returns w's term ID, interning its stem on first use.
func (a *analyzer) termOf(w string) (analyzedWord, int32) {
	aw := a.word(w)
	if aw.term < 0 {
		aw.term = a.intern(aw.stem)
		a.words[w] = aw
	}
	return aw, aw.term
}

// analyze appends the term IDs of text's meaningful words to out.
func (a *analyzer) analyze(text string, out []int32) []int32 {
	if terms, ok := a.texts[text]; ok {
		if len(out) == 0 {
			// Shared with every other use of the text: clipped, so
			// that a later append to either copies.
			return terms[:len(terms):len(terms)]
		}
		return append(out, terms...)
	}
	var terms []int32
	splitWords(text, func(w string) {
		if aw := a.word(w); !aw.stop {
			_, t := a.termOf(w)
			terms = append(terms, t)
		}
	})
	a.texts[text] = terms
	if len(out) == 0 {
		return terms[:len(terms):len(terms)]
	}
	return append(out, terms...)
}

// concat returns the terms of parts end to end, in one slice carved from
// a shared block: a build concatenates a few short lists per doc, and an
// allocation for each would be most of the cost.
func (a *analyzer) concat(parts [][]int32) []int32 {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	switch {
	case n == 0:
		return nil
	case len(parts) == 1:
		return parts[0]
	}
	if cap(a.block)-len(a.block) < n {
		a.block = make([]int32, 0, max(1<<14, n))
	}
	start := len(a.block)
	for _, p := range parts {
		a.block = append(a.block, p...)
	}
	return a.block[start:len(a.block):len(a.block)]
}
