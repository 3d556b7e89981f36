package demo

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold"
)

func addTextTools(g *toolfold.Group) {
	tool(g, &mcp.Tool{
		Name:        "change_case",
		Description: "Rewrite text in another letter case: upper, lower, title, sentence, or as an identifier in snake_case, kebab-case, camelCase, PascalCase or CONSTANT_CASE. Returns the rewritten text.",
		Annotations: readOnly("Change case"),
		InputSchema: schemaFor[changeCaseInput](func(p map[string]*jsonschema.Schema) { enum(p["to"], caseNames...) }),
	}, changeCase)

	tool(g, &mcp.Tool{
		Name:        "slugify",
		Description: "Turn text into a URL slug: lower case, accents folded to ASCII (é→e, ß→ss), every run of other characters replaced by one separator. Returns the slug.",
		Annotations: readOnly("Slugify"),
	}, slugify)

	tool(g, &mcp.Tool{
		Name:        "word_count",
		Description: "Count the characters, words, unique words, lines, sentences and paragraphs of a text, and estimate its reading time at 200 words a minute.",
		Annotations: readOnly("Word count"),
	}, wordCount)

	tool(g, &mcp.Tool{
		Name:        "regex_find",
		Description: "Find every match of a regular expression (Go RE2 syntax) in a text. Returns each match with its line, character positions and capture groups.",
		Annotations: readOnly("Regex find"),
	}, regexFind)

	tool(g, &mcp.Tool{
		Name:        "regex_replace",
		Description: "Replace matches of a regular expression (Go RE2 syntax) in a text; the replacement may refer to groups as $1 or ${name}. Returns the new text and how many replacements were made.",
		Annotations: readOnly("Regex replace"),
	}, regexReplace)

	tool(g, &mcp.Tool{
		Name:        "text_diff",
		Description: "Compare two texts line by line. Returns a unified diff (like diff -u) and the number of added and removed lines.",
		Annotations: readOnly("Diff two texts"),
	}, textDiff)
}

// ---- change_case

var caseNames = []string{"upper", "lower", "title", "sentence", "snake", "kebab", "camel", "pascal", "constant"}

type changeCaseInput struct {
	Text string `json:"text" jsonschema:"the text to rewrite"`
	To   string `json:"to" jsonschema:"the target case: upper, lower, title (Each Word Capitalised), sentence (First word only), snake (snake_case), kebab (kebab-case), camel (camelCase), pascal (PascalCase) or constant (CONSTANT_CASE)"`
}

type textOutput struct {
	Result string `json:"result" jsonschema:"the rewritten text"`
}

func changeCase(_ context.Context, in changeCaseInput) (textOutput, error) {
	var r string
	switch in.To {
	case "upper":
		r = strings.ToUpper(in.Text)
	case "lower":
		r = strings.ToLower(in.Text)
	case "title":
		r = titleCase(in.Text)
	case "sentence":
		r = sentenceCase(in.Text)
	case "snake":
		r = strings.ToLower(strings.Join(identWords(in.Text), "_"))
	case "kebab":
		r = strings.ToLower(strings.Join(identWords(in.Text), "-"))
	case "constant":
		r = strings.ToUpper(strings.Join(identWords(in.Text), "_"))
	case "camel", "pascal":
		words := identWords(in.Text)
		var b strings.Builder
		for i, w := range words {
			if i == 0 && in.To == "camel" {
				b.WriteString(strings.ToLower(w))
			} else {
				b.WriteString(capitalise(strings.ToLower(w)))
			}
		}
		r = b.String()
	default:
		return textOutput{}, fmt.Errorf("unknown case %q: set \"to\" to one of %s", in.To, oneOf(caseNames...))
	}
	return textOutput{Result: r}, nil
}

// titleCase capitalises the first letter of every word and lowers the rest,
// keeping the text's spacing and punctuation.
func titleCase(s string) string {
	var b strings.Builder
	inWord := false
	for _, r := range s {
		// An apostrophe inside a word ("don't") does not start a new one.
		if unicode.IsLetter(r) || unicode.IsDigit(r) || (inWord && r == '\'') {
			if inWord {
				b.WriteRune(unicode.ToLower(r))
			} else {
				b.WriteRune(unicode.ToTitle(r))
			}
			inWord = true
			continue
		}
		inWord = false
		b.WriteRune(r)
	}
	return b.String()
}

// sentenceCase lowers everything and capitalises the first letter of each
// sentence.
func sentenceCase(s string) string {
	var b strings.Builder
	start := true
	for _, r := range strings.ToLower(s) {
		if start && unicode.IsLetter(r) {
			r = unicode.ToTitle(r)
			start = false
		} else if unicode.IsLetter(r) || unicode.IsDigit(r) {
			start = false
		}
		if r == '.' || r == '!' || r == '?' {
			start = true
		}
		b.WriteRune(r)
	}
	return b.String()
}

func capitalise(w string) string {
	r, size := utf8.DecodeRuneInString(w)
	if size == 0 {
		return w
	}
	return string(unicode.ToTitle(r)) + w[size:]
}

// identWords splits text into the words of an identifier: at every
// character that is neither letter nor digit, and at case changes, so that
// "parseHTTPResponse2xx" gives parse, HTTP, Response2xx.
func identWords(s string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, string(cur))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if unicode.IsUpper(r) && len(cur) > 0 {
			prev := cur[len(cur)-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			// aB starts a word at B; ABc starts one at B (the end of an
			// acronym); a digit before an upper case letter also ends a word.
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return words
}

// ---- slugify

type slugifyInput struct {
	Text      string `json:"text" jsonschema:"the text to turn into a slug, e.g. a title"`
	Separator string `json:"separator,omitempty" jsonschema:"the character(s) between words; default -"`
	MaxLength int    `json:"max_length,omitempty" jsonschema:"cut the slug to at most this many characters, at a word boundary when possible; 0 means no limit"`
}

type slugifyOutput struct {
	Slug string `json:"slug" jsonschema:"the slug"`
}

func slugify(_ context.Context, in slugifyInput) (slugifyOutput, error) {
	sep := in.Separator
	if sep == "" {
		sep = "-"
	}
	if in.MaxLength < 0 {
		return slugifyOutput{}, fmt.Errorf("max_length is %d: pass 0 for no limit or a positive number of characters", in.MaxLength)
	}
	var words []string
	var cur strings.Builder
	for _, r := range in.Text {
		if folded, ok := asciiFold[r]; ok {
			cur.WriteString(folded)
			continue
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			cur.WriteRune(unicode.ToLower(r))
			continue
		}
		// Apostrophes join ("don't" → "dont") rather than split a word.
		if r == '\'' || r == '’' {
			continue
		}
		if cur.Len() > 0 {
			words = append(words, cur.String())
			cur.Reset()
		}
	}
	if cur.Len() > 0 {
		words = append(words, cur.String())
	}
	slug := strings.Join(words, sep)
	if in.MaxLength > 0 && utf8.RuneCountInString(slug) > in.MaxLength {
		// Keep whole words when at least one fits; otherwise cut the first.
		var kept []string
		n := 0
		for _, w := range words {
			extra := utf8.RuneCountInString(w)
			if len(kept) > 0 {
				extra += utf8.RuneCountInString(sep)
			}
			if n+extra > in.MaxLength {
				break
			}
			kept = append(kept, w)
			n += extra
		}
		if len(kept) == 0 {
			slug = string([]rune(words[0])[:in.MaxLength])
		} else {
			slug = strings.Join(kept, sep)
		}
	}
	return slugifyOutput{Slug: slug}, nil
}

// asciiFold maps the accented and ligature letters of the Latin alphabets
// to ASCII, lower-cased, which is what slugs conventionally use.
var asciiFold = func() map[rune]string {
	m := map[rune]string{}
	groups := map[string]string{
		"a": "àáâãäåāăąǎ" + "ÀÁÂÃÄÅĀĂĄǍ", "c": "çćĉċč" + "ÇĆĈĊČ", "d": "ďđð" + "ĎĐÐ",
		"e": "èéêëēĕėęě" + "ÈÉÊËĒĔĖĘĚ", "g": "ĝğġģ" + "ĜĞĠĢ", "h": "ĥħ" + "ĤĦ",
		"i": "ìíîïĩīĭįı" + "ÌÍÎÏĨĪĬĮİ", "j": "ĵ" + "Ĵ", "k": "ķ" + "Ķ", "l": "ĺļľŀł" + "ĹĻĽĿŁ",
		"n": "ñńņňŉ" + "ÑŃŅŇ", "o": "òóôõöøōŏő" + "ÒÓÔÕÖØŌŎŐ", "r": "ŕŗř" + "ŔŖŘ",
		"s": "śŝşšș" + "ŚŜŞŠȘ", "t": "ţťŧț" + "ŢŤŦȚ", "u": "ùúûüũūŭůűų" + "ÙÚÛÜŨŪŬŮŰŲ",
		"w": "ŵ" + "Ŵ", "y": "ýÿŷ" + "ÝŸŶ", "z": "źżž" + "ŹŻŽ",
		"ss": "ß", "ae": "æÆ", "oe": "œŒ", "th": "þÞ",
	}
	for ascii, letters := range groups {
		for _, r := range letters {
			m[r] = ascii
		}
	}
	return m
}()

// ---- word_count

type wordCountInput struct {
	Text string `json:"text" jsonschema:"the text to count"`
}

type wordCountOutput struct {
	Characters         int             `json:"characters" jsonschema:"Unicode characters (code points), spaces included"`
	CharactersNoSpaces int             `json:"characters_no_spaces" jsonschema:"characters that are not white space"`
	Bytes              int             `json:"bytes" jsonschema:"length in UTF-8 bytes"`
	Words              int             `json:"words" jsonschema:"runs of characters separated by white space"`
	UniqueWords        int             `json:"unique_words" jsonschema:"distinct words, ignoring case and surrounding punctuation"`
	Lines              int             `json:"lines" jsonschema:"lines; a final line break does not start a new line"`
	Sentences          int             `json:"sentences" jsonschema:"sentences, ended by . ! or ? (or the end of the text)"`
	Paragraphs         int             `json:"paragraphs" jsonschema:"blocks of text separated by blank lines"`
	ReadingTimeMinutes float64         `json:"reading_time_minutes" jsonschema:"words divided by 200, rounded to a tenth"`
	AverageWordLength  float64         `json:"average_word_length" jsonschema:"mean letters and digits per word, rounded to a tenth"`
	MostCommonWords    []wordFrequency `json:"most_common_words" jsonschema:"up to 5 most frequent words of three letters or more, most frequent first"`
}

type wordFrequency struct {
	Word  string `json:"word" jsonschema:"the word, lower-cased"`
	Count int    `json:"count" jsonschema:"how often it occurs"`
}

func wordCount(_ context.Context, in wordCountInput) (wordCountOutput, error) {
	t := in.Text
	out := wordCountOutput{Bytes: len(t)}
	for _, r := range t {
		out.Characters++
		if !unicode.IsSpace(r) {
			out.CharactersNoSpaces++
		}
	}
	words := strings.Fields(t)
	out.Words = len(words)
	freq, letters := wordFrequencies(words)
	out.UniqueWords = len(freq)
	out.Lines = countLines(t)
	out.Sentences = countSentences(t)
	out.Paragraphs = countParagraphs(t)
	out.ReadingTimeMinutes = roundTo(float64(out.Words)/200, 1)
	if out.Words > 0 {
		out.AverageWordLength = roundTo(float64(letters)/float64(out.Words), 1)
	}
	out.MostCommonWords = mostCommonWords(freq, 5)
	return out, nil
}

func isLetterOrDigit(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// wordFrequencies counts each word, lower-cased and stripped of the
// punctuation around it, and the letters and digits in all of them.
func wordFrequencies(words []string) (freq map[string]int, letters int) {
	freq = map[string]int{}
	for _, w := range words {
		key := strings.ToLower(strings.TrimFunc(w, func(r rune) bool { return !isLetterOrDigit(r) }))
		for _, r := range key {
			if isLetterOrDigit(r) {
				letters++
			}
		}
		if key != "" {
			freq[key]++
		}
	}
	return freq, letters
}

// countLines counts lines the way editors do: a final newline does not
// start another line.
func countLines(t string) int {
	if t == "" {
		return 0
	}
	n := strings.Count(t, "\n") + 1
	if strings.HasSuffix(t, "\n") {
		n--
	}
	return n
}

// countSentences counts sentences. A sentence ends at a run of
// terminators; text after the last one that contains a word is a sentence
// too.
func countSentences(t string) int {
	n := 0
	inSentence := false
	for _, r := range t {
		switch {
		case r == '.' || r == '!' || r == '?':
			if inSentence {
				n++
			}
			inSentence = false
		case isLetterOrDigit(r):
			inSentence = true
		}
	}
	if inSentence {
		n++
	}
	return n
}

// countParagraphs counts the blocks of text between blank lines.
func countParagraphs(t string) int {
	n := 0
	for _, p := range strings.Split(strings.ReplaceAll(t, "\r\n", "\n"), "\n\n") {
		if strings.TrimSpace(p) != "" {
			n++
		}
	}
	return n
}

// mostCommonWords returns up to limit words of three letters or more, most
// frequent first and alphabetical among equals.
func mostCommonWords(freq map[string]int, limit int) []wordFrequency {
	top := []wordFrequency{}
	for w, c := range freq {
		if utf8.RuneCountInString(w) >= 3 {
			top = append(top, wordFrequency{w, c})
		}
	}
	slices.SortFunc(top, func(a, b wordFrequency) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return strings.Compare(a.Word, b.Word)
	})
	if len(top) > limit {
		top = top[:limit]
	}
	return top
}

// ---- regex_find / regex_replace

func compileRegex(pattern string, ignoreCase bool) (*regexp.Regexp, error) {
	if pattern == "" {
		return nil, errEmpty("pattern", `a regular expression such as "\\d+"`)
	}
	if ignoreCase {
		pattern = "(?i)" + pattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("pattern is not a valid Go (RE2) regular expression: %w; lookarounds (?=…) and backreferences \\1 are not supported", err)
	}
	return re, nil
}

type regexFindInput struct {
	Text       string `json:"text" jsonschema:"the text to search"`
	Pattern    string `json:"pattern" jsonschema:"a Go RE2 regular expression, e.g. \\b\\w+@\\w+\\.com\\b; (?m) makes ^ and $ match at line breaks"`
	IgnoreCase bool   `json:"ignore_case,omitempty" jsonschema:"match letters regardless of case"`
	Limit      int    `json:"limit,omitempty" jsonschema:"return at most this many matches; default 100, at most 10000"`
}

type regexMatch struct {
	Match  string            `json:"match" jsonschema:"the matched text"`
	Line   int               `json:"line" jsonschema:"the line the match starts on, from 1"`
	Start  int               `json:"start" jsonschema:"character offset of the match's start, from 0"`
	End    int               `json:"end" jsonschema:"character offset just past the match"`
	Groups []string          `json:"groups,omitempty" jsonschema:"the capture groups $1, $2, … in order (empty string when a group did not take part)"`
	Named  map[string]string `json:"named,omitempty" jsonschema:"named capture groups (?P<name>…) by name"`
}

type regexFindOutput struct {
	Count     int          `json:"count" jsonschema:"how many matches are returned"`
	Truncated bool         `json:"truncated" jsonschema:"true when there were more matches than the limit"`
	Matches   []regexMatch `json:"matches" jsonschema:"the matches in order"`
}

func regexFind(_ context.Context, in regexFindInput) (regexFindOutput, error) {
	re, err := compileRegex(in.Pattern, in.IgnoreCase)
	if err != nil {
		return regexFindOutput{}, err
	}
	limit, err := limitOr(in.Limit, 100, 10000, "limit")
	if err != nil {
		return regexFindOutput{}, err
	}
	// Ask for one more than the limit to know whether there are more.
	locs := re.FindAllStringSubmatchIndex(in.Text, limit+1)
	out := regexFindOutput{Matches: []regexMatch{}}
	if len(locs) > limit {
		locs, out.Truncated = locs[:limit], true
	}
	pos := newPositions(in.Text)
	names := re.SubexpNames()
	for _, loc := range locs {
		m := regexMatch{Match: in.Text[loc[0]:loc[1]], Line: pos.line(loc[0]), Start: pos.char(loc[0]), End: pos.char(loc[1])}
		for i := 1; i < len(names); i++ {
			g := ""
			if loc[2*i] >= 0 {
				g = in.Text[loc[2*i]:loc[2*i+1]]
			}
			m.Groups = append(m.Groups, g)
			if names[i] != "" {
				if m.Named == nil {
					m.Named = map[string]string{}
				}
				m.Named[names[i]] = g
			}
		}
		out.Matches = append(out.Matches, m)
	}
	out.Count = len(out.Matches)
	return out, nil
}

// positions turns byte offsets into character offsets and line numbers.
// Offsets are asked for in increasing order, so it walks the text once.
type positions struct {
	text             string
	at, chars, lines int
}

func newPositions(text string) *positions { return &positions{text: text, lines: 1} }

func (p *positions) advance(to int) {
	if to < p.at { // out of order: start again
		p.at, p.chars, p.lines = 0, 0, 1
	}
	for p.at < to {
		r, size := utf8.DecodeRuneInString(p.text[p.at:])
		if r == '\n' {
			p.lines++
		}
		p.at += size
		p.chars++
	}
}

func (p *positions) char(byteOffset int) int { p.advance(byteOffset); return p.chars }
func (p *positions) line(byteOffset int) int { p.advance(byteOffset); return p.lines }

type regexReplaceInput struct {
	Text        string `json:"text" jsonschema:"the text to change"`
	Pattern     string `json:"pattern" jsonschema:"a Go RE2 regular expression"`
	Replacement string `json:"replacement" jsonschema:"what each match becomes; $1 or ${name} insert capture groups, $$ is a literal $"`
	Literal     bool   `json:"literal,omitempty" jsonschema:"insert the replacement exactly as given, without expanding $1"`
	IgnoreCase  bool   `json:"ignore_case,omitempty" jsonschema:"match letters regardless of case"`
	Limit       int    `json:"limit,omitempty" jsonschema:"replace only the first this many matches; 0 replaces all"`
}

type regexReplaceOutput struct {
	Result       string `json:"result" jsonschema:"the text after replacement"`
	Replacements int    `json:"replacements" jsonschema:"how many matches were replaced"`
}

func regexReplace(_ context.Context, in regexReplaceInput) (regexReplaceOutput, error) {
	re, err := compileRegex(in.Pattern, in.IgnoreCase)
	if err != nil {
		return regexReplaceOutput{}, err
	}
	if in.Limit < 0 {
		return regexReplaceOutput{}, fmt.Errorf("limit is %d: pass 0 to replace every match or a positive count", in.Limit)
	}
	n := -1
	if in.Limit > 0 {
		n = in.Limit
	}
	locs := re.FindAllStringSubmatchIndex(in.Text, n)
	var b strings.Builder
	last := 0
	for _, loc := range locs {
		b.WriteString(in.Text[last:loc[0]])
		if in.Literal {
			b.WriteString(in.Replacement)
		} else {
			b.Write(re.ExpandString(nil, in.Replacement, in.Text, loc))
		}
		last = loc[1]
	}
	b.WriteString(in.Text[last:])
	return regexReplaceOutput{Result: b.String(), Replacements: len(locs)}, nil
}

// limitOr applies a default and a ceiling to an optional count.
func limitOr(v, def, max int, name string) (int, error) {
	switch {
	case v == 0:
		return def, nil
	case v < 0:
		return 0, fmt.Errorf("%s is %d: pass a positive number (default %d)", name, v, def)
	case v > max:
		return 0, fmt.Errorf("%s is %d, more than the maximum of %d: pass a smaller number", name, v, max)
	}
	return v, nil
}

func roundTo(x float64, decimals int) float64 {
	p := math.Pow(10, float64(decimals))
	return math.Round(x*p) / p
}
