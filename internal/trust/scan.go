package trust

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Finding kinds.
const (
	// FindInvisible: invisible or bidirectional-control characters (always
	// removed from what the model reads, see [Sanitize]).
	FindInvisible = "invisible-characters"
	// FindEscape: terminal escape sequences (also removed).
	FindEscape = "terminal-escape"
	// FindInstruction: text addressed to the model rather than describing
	// the tool.
	FindInstruction = "addressed-to-model"
	// FindCredentials: a request to read credentials or put secrets in
	// arguments.
	FindCredentials = "credential-request"
	// FindShadowing: a description that names another server's tool.
	FindShadowing = "shadowing"
	// FindOutsized: text far longer than the catalog's norm.
	FindOutsized = "outsized"
)

// Finding is one thing the scan found in one item.
type Finding struct {
	Server string `json:"server"`
	Item   string `json:"item"`
	Kind   string `json:"kind"`
	// Detail quotes what matched, short and with control characters shown
	// as escapes, so a log line cannot itself smuggle them.
	Detail string `json:"detail"`
}

func (f Finding) String() string {
	return fmt.Sprintf("%s %s: %s: %s", f.Server, f.Item, f.Kind, f.Detail)
}

// rule is one text pattern and the kind of finding it makes.
type rule struct {
	kind string
	re   *regexp.Regexp
	// any lists words of which the lower-cased text must hold one for the
	// pattern to be tried: most texts hold none, and a plain search is a
	// hundred times cheaper than the pattern.
	any []string
}

// The patterns come from the published tool-poisoning write-ups (hidden
// <IMPORTANT> blocks, "do not tell the user", reading ~/.ssh or mcp.json into
// a "sidenote" argument). They are kept narrow: the recorded real catalogs
// in testdata/catalogs make no finding of these kinds (see scan_test.go).
// They are compiled on first use: every toolfold command starts the whole
// binary, and most never scan a definition.
var rules = sync.OnceValue(func() []rule {
	return []rule{
		{FindInstruction, regexp.MustCompile(`(?i)\b(ignore|disregard|forget)\s+(all\s+|any\s+)?(the\s+|your\s+)?(previous|prior|above|earlier|other|system)\s+(instructions|prompts?|rules|messages)`), []string{"ignore", "disregard", "forget"}},
		{FindInstruction, regexp.MustCompile(`(?i)\b(do\s+not|don'?t|never|must\s+not)\s+(tell|inform|mention|reveal|notify|alert|warn)\b[^.\n]{0,40}\buser`), []string{"user"}},
		{FindInstruction, regexp.MustCompile(`(?i)\bwithout\s+(telling|informing|notifying|alerting|asking)\s+the\s+user`), []string{"without"}},
		{FindInstruction, regexp.MustCompile(`(?i)\b(hide|conceal|keep)\s+(this|it|these)\s+(secret\s+|hidden\s+)?from\s+the\s+user`), []string{"from the user"}},
		{FindInstruction, regexp.MustCompile(`(?i)<\s*/?\s*(important|system|instructions?|secret|hidden|admin|critical|override)\b[^>]{0,40}>`), []string{"<"}},
		{FindInstruction, regexp.MustCompile(`(?i)\b(the\s+user|they)\s+(must|should)\s+not\s+(know|see|be\s+told)`), []string{" not "}},
		{FindCredentials, regexp.MustCompile(`(?i)\b(read|cat|open|send|include|upload|attach|pass|contents?\s+of)\b[^.\n]{0,40}((~|\$HOME|%USERPROFILE%)[/\\]\.(ssh|aws|gnupg|kube|docker|cursor|config/gcloud)\b|\bid_(rsa|ed25519|ecdsa)\b|\.aws/credentials|\.netrc\b|/etc/shadow|\bmcp\.json\b|\.env\b)`), []string{"ssh", "id_", ".aws", "netrc", "shadow", "mcp.json", ".env", "gnupg", ".kube", ".docker", ".cursor", "gcloud"}},
		{FindCredentials, regexp.MustCompile(`(?i)\b(read|cat|send|pass|include|put|append|add|copy|provide)\b[^.\n]{0,60}\b(private\s+keys?|ssh\s+keys?|api[ _-]?keys?|credentials|passwords?|secrets?|access\s+tokens?|conversation\s+history|system\s+prompt)\b[^.\n]{0,60}\b(sidenote|side\s+note|notes?\s+(argument|parameter|field))`), []string{"note"}},
	}
})

// invisible reports characters the model must never read, given the rune
// before: format characters (zero-width, bidirectional controls, tag
// characters, BOM), variation selectors and control characters other than tab
// and newline. Two uses are ordinary text and kept: an emoji presentation
// selector (U+FE0E, U+FE0F) and a zero-width joiner right after a symbol, as
// in "⚠️" or a family emoji. Data smuggled in selectors needs runs of them or
// the other 254 selectors, which are still removed.
func invisible(prev, r rune) bool {
	if r < 0x80 { // the common case, without the tables
		return (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0x7f
	}
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return false
	case (r == 0xFE0E || r == 0xFE0F || r == 0x200D) && prev > 0x7F && unicode.In(prev, unicode.So, unicode.Sk, unicode.Sm):
		return false
	case unicode.Is(unicode.Cf, r), unicode.Is(unicode.Cc, r):
		return true
	case r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0100 && r <= 0xE01EF:
		return true
	}
	return false
}

// firstInvisible is the index of the first invisible rune of s, or -1.
func firstInvisible(s string) int {
	prev := rune(0)
	for i, r := range s {
		if invisible(prev, r) {
			return i
		}
		prev = r
	}
	return -1
}

// firstInvisibleIn is [firstInvisible] of JSON text, read where it lies:
// a conversion to a string would copy every schema of a catalog.
func firstInvisibleIn(b []byte) int {
	prev := rune(0)
	for i := 0; i < len(b); {
		r, n := rune(b[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRune(b[i:])
		}
		if invisible(prev, r) {
			return i
		}
		prev = r
		i += n
	}
	return -1
}

// notToolChar splits text into words as tool names are spelled.
func notToolChar(r rune) bool {
	return !(r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
}

var escapeSeq = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile("\x1b(\\[[0-9;?]*[ -/]*[@-~]|\\][^\x07\x1b]*(\x07|\x1b\\\\)|[@-Z\\\\-_])")
})

// Sanitize removes terminal escape sequences and invisible characters
// (zero-width, bidirectional controls, tag characters…) from s. It is applied
// to every definition the model reads, whatever the policy.
func Sanitize(s string) string {
	if firstInvisible(s) < 0 {
		return s
	}
	s = escapeSeq().ReplaceAllString(s, "")
	var b strings.Builder
	prev := rune(0)
	for _, r := range s {
		if !invisible(prev, r) {
			b.WriteRune(r)
		}
		prev = r
	}
	return b.String()
}

// SanitizeValue applies [Sanitize] to every string (keys included) of a
// decoded JSON value and reports whether anything changed.
func SanitizeValue(v any) (any, bool) {
	switch x := v.(type) {
	case string:
		s := Sanitize(x)
		return s, s != x
	case []any:
		changed := false
		for i, e := range x {
			var c bool
			x[i], c = SanitizeValue(e)
			changed = changed || c
		}
		return x, changed
	case map[string]any:
		changed := false
		for k, e := range x {
			ne, c := SanitizeValue(e)
			nk := Sanitize(k)
			if nk != k {
				delete(x, k)
				c = true
			}
			x[nk] = ne
			changed = changed || c
		}
		return x, changed
	}
	return v, false
}

// SanitizeJSON applies [Sanitize] to every string of a JSON document. It
// returns raw itself when nothing needed removing.
func SanitizeJSON(raw json.RawMessage) json.RawMessage {
	if firstInvisibleIn(raw) < 0 && !bytes.Contains(raw, []byte(`\u`)) {
		return raw
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return raw
	}
	v, changed := SanitizeValue(v)
	if !changed {
		return raw
	}
	out, err := Canonical(v)
	if err != nil {
		return raw
	}
	return out
}

// Outsized bounds: an item's text is outsized when it is longer than
// outsizedFactor times the median of its kind across the scanned servers,
// and longer than outsizedFloor bytes (so a catalog of short texts does not
// flag an ordinary paragraph).
const (
	outsizedFactor = 20
	outsizedFloor  = 8 << 10
)

// Scanner scans catalogs, remembering what it found in each definition
// (by digest) so that a rescan after one server's change costs only the
// catalog-wide checks for the others. The zero value is ready to use; it is
// not safe for concurrent use.
type Scanner struct {
	seen map[string]*itemScan
	// learned are results a [Memo] taught, for items remembered without
	// their definitions.
	learned map[string]*itemScan
}

// known is what s found, or was taught, of the definition with digest d.
func (s *Scanner) known(d string) *itemScan {
	if sc := s.seen[d]; sc != nil {
		return sc
	}
	return s.learned[d]
}

// itemScan is what one definition's text says on its own.
type itemScan struct {
	size  int
	words []string  // distinct words shaped like tool names
	local []Finding // Kind and Detail only
}

// Scan looks for poisoned text in the items of every server with a fresh
// [Scanner].
func Scan(servers map[string][]Item) []Finding {
	var s Scanner
	return s.Scan(servers)
}

// Scan looks for poisoned text in the items of every server. servers maps a
// server's name to its items; all are scanned together because shadowing
// (naming another server's tool) and size norms are catalog-wide.
func (s *Scanner) Scan(servers map[string][]Item) []Finding {
	var out []Finding
	// Tool names distinctive enough to mean a tool when a description names
	// them: with "_" or "-" and six letters or more. Plain words ("search",
	// "fetch") are every server's vocabulary.
	owners := map[string][]string{}
	for _, srv := range slices.Sorted(maps.Keys(servers)) {
		for _, it := range servers[srv] {
			if it.Kind == KindTool && len(it.Name) >= 6 && strings.ContainsAny(it.Name, "_-") && !slices.Contains(owners[it.Name], srv) {
				owners[it.Name] = append(owners[it.Name], srv)
			}
		}
	}
	seen := map[string]*itemScan{}
	lengths := map[Kind][]int{}
	for _, items := range servers {
		for _, it := range items {
			d := it.Digest()
			sc := s.known(d)
			if sc == nil {
				sc = scanItem(it)
			}
			seen[d] = sc
			lengths[it.Kind] = append(lengths[it.Kind], sc.size)
		}
	}
	s.seen = seen
	medians := map[Kind]int{}
	for k, ls := range lengths {
		slices.Sort(ls)
		medians[k] = ls[len(ls)/2]
	}
	for _, srv := range slices.Sorted(maps.Keys(servers)) {
		own := map[string]bool{}
		for _, it := range servers[srv] {
			own[it.Name] = true
		}
		for _, it := range servers[srv] {
			sc := seen[it.Digest()]
			add := func(kind, detail string) {
				out = append(out, Finding{Server: srv, Item: it.Key(), Kind: kind, Detail: detail})
			}
			for _, f := range sc.local {
				add(f.Kind, f.Detail)
			}
			for _, word := range sc.words {
				if owners[word] != nil && !own[word] {
					add(FindShadowing, fmt.Sprintf("names %q, a tool of %s", word, strings.Join(owners[word], ", ")))
				}
			}
			if n, med := sc.size, medians[it.Kind]; n > outsizedFloor && n > outsizedFactor*med {
				add(FindOutsized, fmt.Sprintf("%d bytes of text, the catalog's median %s is %d", n, it.Kind, med))
			}
		}
	}
	return out
}

// scanItem is what one definition says on its own.
func scanItem(it Item) *itemScan {
	text := itemText(it.Def)
	sc := &itemScan{size: len(text)}
	add := func(kind, detail string) { sc.local = append(sc.local, Finding{Kind: kind, Detail: detail}) }
	raw := string(it.Def) + text
	if n, first := countInvisible(raw); n > 0 {
		add(FindInvisible, fmt.Sprintf("%d invisible or bidi-control characters, first %+q", n, first))
	}
	if strings.Contains(raw, "\x1b") && escapeSeq().MatchString(raw) {
		add(FindEscape, "terminal escape sequence "+quote(escapeSeq().FindString(raw)))
	}
	clean := Sanitize(text)
	lower := strings.ToLower(clean)
	for _, r := range rules() {
		if !slices.ContainsFunc(r.any, func(w string) bool { return strings.Contains(lower, w) }) {
			continue
		}
		if m := r.re.FindString(clean); m != "" {
			add(r.kind, quote(m))
		}
	}
	dup := map[string]bool{}
	for _, word := range strings.FieldsFunc(clean, notToolChar) {
		if len(word) >= 6 && strings.ContainsAny(word, "_-") && !dup[word] {
			dup[word] = true
			sc.words = append(sc.words, word)
		}
	}
	return sc
}

// countInvisible counts the invisible runes of s other than the escape
// character (reported as a terminal escape) and names the first.
func countInvisible(s string) (n int, first rune) {
	prev := rune(0)
	for _, r := range s {
		if invisible(prev, r) && r != 0x1b {
			if n == 0 {
				first = r
			}
			n++
		}
		prev = r
	}
	return n, first
}

func quote(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return fmt.Sprintf("%+q", s)
}

// itemText is every string of a definition joined by newlines: what the
// model reads of it.
func itemText(def json.RawMessage) string {
	var v any
	if json.Unmarshal(def, &v) != nil {
		return string(def)
	}
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			b.WriteString(x)
			b.WriteByte('\n')
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				walk(x[k])
			}
		}
	}
	walk(v)
	return b.String()
}
