package search

import (
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// queryTerm is one thing the query asks for, with what may stand for it:
// the query's own words (weight 1) and synonyms or hints (lower weights).
// A doc's score for the term is its best alternative.
type queryTerm struct {
	alternatives []alternative
	// optional terms add evidence but are not counted by the coordination
	// factor: a tool is not penalised for failing to match a hint.
	optional bool
}

type alternative struct {
	stems  []string
	weight float64
}

type parsedQuery struct {
	terms []queryTerm
	// required counts the non-optional terms.
	required int
	// exact holds the query's own meaningful stems in order, for the
	// adjacency bonus.
	exact []string
	// stemWeights maps every stem the query may match to the best weight
	// it carries, for the name coverage bonus.
	stemWeights map[string]float64
	// intents are the operations the request asks for.
	intents intentSet
}

// particles turn a synonym phrase into an idiom whose words mean nothing on
// their own ("look up", "hang up", "how many", "roll back").
var particles = map[string]bool{
	"up": true, "down": true, "off": true, "out": true, "over": true,
	"back": true, "many": true, "much": true,
}

type queryWord struct {
	raw, stem string
	stop      bool
}

// parseQuery analyses a query into terms:
//
//   - phrases the synonym table knows become one term; idioms ("go to",
//     "how many") stand only for their synonyms, compounds ("pull
//     request") also keep their words;
//   - two words that the catalog writes as one ("on call" → oncall) are
//     matched as that word or as the pair;
//   - a word the catalog never uses is split into two words it does
//     ("localhost" → local host);
//   - a word that is a synonym of an earlier query word merges with it, so
//     "make a new folder" does not count "create" twice;
//   - stop words are dropped unless the synonym table gives them meaning
//     ("which" asks for a list, "who" for users);
//   - tokens shaped like URLs, file names or paths add a hint; a plural
//     noun adds a weak "list" hint, a question a weak "read" hint.
func (ix *Index) parseQuery(query string) parsedQuery {
	query = truncateQuery(query)
	var words []queryWord
	splitWords(query, func(w string) {
		if len(words) < maxQueryWords && len(w) <= maxWordBytes {
			words = append(words, queryWord{raw: w, stem: stem(w), stop: isStopWord(w)})
		}
	})
	b := queryBuilder{ix: ix, q: parsedQuery{stemWeights: map[string]float64{}, intents: requestIntents(words)}}

	for i := 0; i < len(words); i++ {
		if n := b.phraseAt(words, i); n > 0 {
			i += n - 1
			continue
		}
		if i+1 < len(words) && b.joinedAt(words, i) {
			i++
			continue
		}
		w := words[i]
		if w.stop {
			if alts := ix.synonyms.alternatives[w.stem]; len(alts) > 0 {
				b.add(nil, alts, true)
			} else if ix.known(w.stem) && len(w.raw) > 1 {
				// Stop words are indexed only in names; there they
				// may tell two tools apart ("this month").
				b.addAlternatives(true, alternative{stems: []string{w.stem}, weight: ix.tune.stopWordWeight})
			}
			continue
		}
		if i == 0 && opensWithCreatingVerb(words) {
			// "file a bug", "log a call": the word is the verb create,
			// not the file or the log it would otherwise match.
			own := synonym{stems: []string{w.stem}}
			b.q.exact = append(b.q.exact, createStem)
			b.add([]string{createStem}, append(slices.Clone(ix.synonyms.alternatives[createStem]), own), false)
			continue
		}
		b.q.exact = append(b.q.exact, w.stem)
		if b.mergeSynonym(w.stem) {
			continue
		}
		if !ix.known(w.stem) {
			if left, right, ok := splitCompound(w.raw, ix.known, stem); ok {
				b.addAlternatives(false, alternative{stems: []string{w.stem}, weight: 1},
					alternative{stems: []string{left, right}, weight: 1})
				continue
			}
		}
		b.add([]string{w.stem}, ix.synonyms.alternatives[w.stem], false)
	}

	for _, hint := range tokenHints(query) {
		alts := make([]alternative, 0, len(hint))
		for _, h := range hint {
			alts = append(alts, alternative{stems: []string{stem(h)}, weight: ix.tune.hintWeight})
		}
		b.addAlternatives(true, alts...)
	}
	if hasPlural(words) {
		b.addAlternatives(true, alternative{stems: []string{"list"}, weight: ix.tune.pluralListWeight})
	}
	if isQuestion(words) {
		var alts []alternative
		for _, verb := range readVerbs {
			alts = append(alts, alternative{stems: []string{verb}, weight: ix.tune.questionReadWeight})
		}
		b.addAlternatives(true, alts...)
	}
	return b.q
}

// Limits on what a query may cost. A request to find a tool is a sentence;
// anything longer is cut, so a pasted document cannot make a search slow.
const (
	maxQueryBytes = 1024
	maxQueryWords = 48
	maxWordBytes  = 64
)

// A doc counts the required terms it matched in a byte (docScratch), and
// a query has at most two terms a word (a word the catalog never uses may
// be split in two): this fails to compile if maxQueryWords outgrows it.
var _ [math.MaxUint8 - 2*maxQueryWords]struct{}

// truncateQuery cuts a query to maxQueryBytes on a UTF-8 boundary.
func truncateQuery(q string) string {
	if len(q) <= maxQueryBytes {
		return q
	}
	cut := maxQueryBytes
	for cut > 0 && !utf8.RuneStart(q[cut]) {
		cut--
	}
	return q[:cut]
}

type queryBuilder struct {
	ix   *Index
	q    parsedQuery
	seen map[string]bool
	key  []byte // reused to look up phrases
}

// add appends a term matched by own (if any) at weight 1, by each
// equivalent at the equivalent weight and by each synonym at the synonym
// weight.
func (b *queryBuilder) add(own []string, synonyms []synonym, optional bool) {
	var alts []alternative
	if len(own) > 0 {
		alts = append(alts, alternative{stems: own, weight: 1})
	}
	for _, s := range synonyms {
		alts = append(alts, alternative{stems: s.stems, weight: b.ix.synonymWeightOf(s)})
	}
	b.addAlternatives(optional, alts...)
}

// synonymWeightOf is what a match on s counts for against the word itself.
func (ix *Index) synonymWeightOf(s synonym) float64 {
	if s.equivalent {
		return ix.equivalentWeight
	}
	return ix.synonymWeight
}

func (b *queryBuilder) addAlternatives(optional bool, alts ...alternative) {
	if len(alts) == 0 {
		return
	}
	key := b.key[:0]
	for i, a := range alts {
		if i > 0 {
			key = append(key, '|')
		}
		for j, st := range a.stems {
			if j > 0 {
				key = append(key, ' ')
			}
			key = append(key, st...)
		}
	}
	b.key = key
	if b.seen == nil {
		b.seen = map[string]bool{}
	}
	if b.seen[string(key)] {
		return
	}
	b.seen[string(key)] = true
	for _, a := range alts {
		for _, s := range a.stems {
			b.q.stemWeights[s] = max(b.q.stemWeights[s], a.weight)
		}
	}
	b.q.terms = append(b.q.terms, queryTerm{alternatives: alts, optional: optional})
	if !optional {
		b.q.required++
	}
}

// mergeSynonym folds a word into an earlier term that already stands for
// it as a synonym, raising that alternative to full weight.
func (b *queryBuilder) mergeSynonym(s string) bool {
	for ti := range b.q.terms {
		t := &b.q.terms[ti]
		for ai := range t.alternatives {
			a := &t.alternatives[ai]
			if len(a.stems) == 1 && a.stems[0] == s {
				if a.weight < 1 {
					a.weight = 1
					b.q.stemWeights[s] = 1
				}
				return true
			}
		}
	}
	return false
}

// phraseAt adds the longest synonym phrase starting at words[i] and returns
// how many words an idiom consumed (0 if none, or if the phrase is a
// compound whose words should also count one by one).
func (b *queryBuilder) phraseAt(words []queryWord, i int) int {
	for n := min(b.ix.synonyms.maxPhrase, len(words)-i); n >= 2; n-- {
		// The phrase is looked up from a reused buffer: most are not in
		// the table, and a string for each would be garbage.
		key := b.key[:0]
		for j := range n {
			if j > 0 {
				key = append(key, ' ')
			}
			key = append(key, words[i+j].stem...)
		}
		b.key = key
		alts, ok := b.ix.synonyms.alternatives[string(key)]
		if !ok {
			continue
		}
		stems := make([]string, n)
		idiom := false
		for j := range n {
			stems[j] = words[i+j].stem
			idiom = idiom || words[i+j].stop || particles[words[i+j].raw]
		}
		if idiom {
			// An idiom is more specific than a single word ("money back"
			// means refund), so its synonyms weigh more.
			var weighted []alternative
			for _, a := range alts {
				weighted = append(weighted, alternative{stems: a.stems, weight: (1 + b.ix.synonymWeightOf(a)) / 2})
			}
			b.addAlternatives(false, weighted...)
			return n
		}
		b.add(stems, alts, false)
		return 0
	}
	return 0
}

// joinedAt handles two query words the catalog writes as one ("on call" →
// oncall, "web page" → webpage): one term, matched by the joined word or by
// the pair.
func (b *queryBuilder) joinedAt(words []queryWord, i int) bool {
	a, c := words[i], words[i+1]
	if isNumber(a.raw) || isNumber(c.raw) {
		return false
	}
	joined := stem(a.raw + c.raw)
	if !b.ix.known(joined) {
		return false
	}
	pair := []string{}
	for _, w := range []queryWord{a, c} {
		if !w.stop {
			pair = append(pair, w.stem)
		}
	}
	b.q.exact = append(b.q.exact, pair...)
	alts := []alternative{{stems: []string{joined}, weight: 1}}
	if len(pair) > 0 {
		alts = append(alts, alternative{stems: pair, weight: 1})
	}
	b.addAlternatives(false, alts...)
	return true
}

// splitCompound splits a word into two words (of three letters or more) a
// vocabulary knows, preferring the most balanced split: "heapsnapshot" →
// heap snapshot, "localhost" → local host. It returns the parts' stems.
func splitCompound(word string, known func(stem string) bool, stem func(string) string) (left, right string, ok bool) {
	if len(word) < 6 || strings.IndexFunc(word, func(r rune) bool { return r > unicode.MaxASCII || !unicode.IsLetter(r) }) >= 0 {
		return "", "", false
	}
	bestBalance := 0
	for i := 3; i <= len(word)-3; i++ {
		l, r := stem(word[:i]), stem(word[i:])
		if known(l) && known(r) && min(i, len(word)-i) > bestBalance {
			left, right, ok, bestBalance = l, r, true, min(i, len(word)-i)
		}
	}
	return left, right, ok
}

// known reports whether a stem occurs in some tool.
func (ix *Index) known(stem string) bool {
	t, ok := ix.terms.lookup(stem)
	return ok && len(ix.postings.of(t)) > 0
}

func isNumber(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return !unicode.IsDigit(r) }) < 0
}

// readVerbs are the stems of the verbs read-only tools are named with; a
// question ("which databases exist?") asks for one of them.
var readVerbs = []string{"list", "get", "describ", "show", "search", "find", "read", "view"}

// isQuestion reports whether the query opens with a question word.
func isQuestion(words []queryWord) bool {
	if len(words) == 0 {
		return false
	}
	switch words[0].raw {
	case "what", "which", "who", "whose", "where", "when", "how", "is", "are", "does", "do", "did", "was", "were", "has", "have", "any":
		return true
	}
	return false
}

// hasPlural reports whether a meaningful query word is a regular plural.
func hasPlural(words []queryWord) bool {
	for _, w := range words {
		if !w.stop && len(w.raw) > 3 && strings.HasSuffix(w.raw, "s") && !strings.HasSuffix(w.raw, "ss") && w.stem != w.raw && stem(w.raw[:len(w.raw)-1]) == w.stem {
			return true
		}
	}
	return false
}

var (
	urlPattern    = regexp.MustCompile(`^(?i)([a-z][a-z0-9+.-]*://|www\.)\S+$`)
	domainPattern = regexp.MustCompile(`^(?i)[a-z0-9-]+(\.[a-z0-9-]+)*\.(com|org|net|io|dev|ai|co|app|edu|gov|info|me|so|sh|xyz|us|uk|de|fr|eu)(/\S*)?$`)
	emailPattern  = regexp.MustCompile(`^[^@\s]+@[^@\s]+\.[a-zA-Z]{2,}$`)
	filePattern   = regexp.MustCompile(`^[\w.~/-]*[\w-]\.[a-zA-Z][a-zA-Z0-9]{0,4}$`)
	pathPattern   = regexp.MustCompile(`^(~|\.{1,2})?/?[\w.-]+(/[\w.*-]*)+$|^~`)
	// coordinatePattern is a latitude, longitude pair in decimal degrees.
	coordinatePattern = regexp.MustCompile(`(^|[^\w.])-?\d{1,2}\.\d+\s*,\s*-?\d{1,3}\.\d+($|[^\w.])`)
)

// tokenHints reads the shape of each whitespace-separated token: what kind
// of thing a URL, a domain, an email address, a file name or a path refers
// to, as words the catalog's descriptions use; a pair of decimal numbers
// ("48.85, 2.29") is a position. (A phone number is left alone: it names
// the recipient, not the tool.)
func tokenHints(query string) [][]string {
	var hints [][]string
	seen := map[string]bool{}
	addHint := func(words ...string) {
		if key := strings.Join(words, " "); !seen[key] {
			seen[key] = true
			hints = append(hints, words)
		}
	}
	// Every pattern needs one of a few characters: most requests have
	// none, and skip the regular expressions.
	if strings.Contains(query, ",") && strings.Contains(query, ".") && coordinatePattern.MatchString(query) {
		addHint("coordinates", "latitude", "longitude")
	}
	for _, tok := range strings.Fields(query) {
		tok = strings.Trim(tok, `"'()[]{}<>,;:!?`)
		switch {
		case tok == "", !strings.ContainsAny(tok, "./@~"):
		case urlPattern.MatchString(tok), domainPattern.MatchString(tok):
			addHint("url", "website", "page")
		case emailPattern.MatchString(tok):
			addHint("email")
		case filePattern.MatchString(tok) && !slices.Contains([]string{"e.g", "i.e", "etc"}, strings.ToLower(tok)):
			addHint("file")
		case pathPattern.MatchString(tok):
			addHint("directory", "path", "file")
		}
	}
	return hints
}
