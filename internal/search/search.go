package search

import (
	"math"
	"math/bits"
	"slices"
)

// SearchOptions narrow and size one search. nil means the defaults.
type SearchOptions struct {
	// Limit is the number of hits wanted; 0 or less means DefaultLimit.
	Limit int
	// Group keeps only tools in this group or in one of its descendants
	// (by Options.GroupParents or dotted names). Empty means all tools.
	Group string
	// Allow, when set, keeps only tools whose ID it accepts: the caller's
	// own visibility rules (excluded groups, read-only tokens, ...).
	Allow func(id string) bool
}

// DefaultLimit is the number of hits a search returns when no limit is given.
const DefaultLimit = 5

// Hit is one ranked tool.
type Hit struct {
	ID    string
	Score float64
}

// GroupHit is one ranked group.
type GroupHit struct {
	Name  string
	Score float64
	// Matches counts the group's tools that matched the query.
	Matches int
}

// tuning holds the constants that shape how evidence combines across
// query words; the field weights say where evidence counts most. The
// defaults were chosen on the dev half of the evaluation set only (see
// README.md); tests may vary them.
type tuning struct {
	// k1 is BM25's term-frequency saturation: how quickly more
	// occurrences (or heavier fields) stop adding evidence for a word.
	k1 float64
	// coordinationFloor is the share of its score a tool keeps when it
	// matches only one of many query words; matching all keeps it all.
	coordinationFloor float64
	// nameCoverageBonus multiplies a tool's score by up to 1+this when the
	// query names every distinctive word of the tool's name, so "list
	// directory" prefers list_directory to list_directory_with_sizes.
	nameCoverageBonus float64
	// adjacencyBonus adds this share per pair of query words that appear
	// next to each other, in order, in the tool's name.
	adjacencyBonus float64
	// coverageBoost scales what a synonym counts for in name coverage.
	coverageBoost float64
	// hintWeight weighs a term inferred from a token's shape: a URL or a
	// domain suggests a web page, "notes.md" a file, "~/src" a directory.
	hintWeight float64
	// pluralListWeight weighs the "list" intent of a plural noun ("show
	// open pull requests" wants the list, not one).
	pluralListWeight float64
	// questionReadWeight weighs the read intent of a question ("which
	// databases exist" wants list_databases, not create_database).
	questionReadWeight float64
	// stopWordWeight weighs a query's stop word that occurs in tool
	// names ("this" in ListUsageRecordThisMonth).
	stopWordWeight float64
	// groupToolShare is how much a group's best matching tool adds to the
	// group's own score (the second adds half, the third a quarter).
	groupToolShare float64
	// intentBoost raises a tool whose name performs an operation the
	// request asks for; intentPenalty lowers one whose operation
	// contradicts all of them (list_coupons for "make a discount code").
	intentBoost   float64
	intentPenalty float64
	// serverBoost raises the tools of a server the request names ("on
	// github", "in hubspot"), scaled by how surely the word names it.
	serverBoost float64
	// firstPhrasingWeight is how much more the first of several
	// phrasings counts than each of the others when they are fused.
	firstPhrasingWeight float64
}

var defaultTuning = tuning{
	k1:                  1.2,
	coordinationFloor:   0.35,
	nameCoverageBonus:   0.5,
	adjacencyBonus:      0.15,
	coverageBoost:       2,
	hintWeight:          0.4,
	pluralListWeight:    0.3,
	questionReadWeight:  0.3,
	stopWordWeight:      0.3,
	groupToolShare:      1.0,
	intentBoost:         0.1,
	intentPenalty:       0.25,
	serverBoost:         0.5,
	firstPhrasingWeight: 2.5,
}

// scratch holds per-query dense arrays, reused through a pool so that a
// search allocates little and does no work in proportion to the catalog:
// every array is sized once, when the index is built, and only the entries
// a query touched are returned to zero after it.
type scratch struct {
	// total is, per doc, its summed term scores; best the best
	// alternative score so far of a term not yet added into total (see
	// offerTerm), and doc the rest of its evidence. They are apart
	// because a search touches half the catalog: most terms have one
	// alternative and never read best, and a doc's other evidence packs
	// into 3 bytes where 8-byte alignment would pad it to 24 with total.
	total  []float64
	best   []float64
	doc    []docScratch
	phrase []float64 // running sum for a multi-word alternative
	// touched marks, one bit per doc, the docs with some evidence: the
	// ranking reads them back in doc order, so that the per-doc arrays
	// stream and a group's docs come side by side (see findParsed).
	touched  []uint64
	termDocs []int32 // docs touched by the current term
	altDocs  []int32 // docs touched by the current alternative
	// coverage holds, by term ID, what each query stem counts for in the
	// name coverage bonus; coverageTerms lists the IDs set.
	coverage      []float64
	coverageTerms []int32
	// namedDocs lists the docs marked named: those with a name word the
	// query covers (the others' name bonus is zero).
	namedDocs []int32
	// nameFactor caches, by name ID, 1 + the name bonus (0: not yet
	// computed); nameFactorSet lists the IDs set.
	nameFactor    []float64
	nameFactorSet []int32
	exact         []int32 // the query's own stems by term ID, -1 if unknown
	// coordination is, by the number of required terms a doc matched,
	// the share of its score it keeps.
	coordination []float64
	top          []scored     // the best hits so far, a min-heap
	groupTop     [][3]float64 // per group, its three best tool scores
	groupMatches []int32
	// groupOwn is each group's score on its own words; groupBest the best
	// alternative of the current term per group, termGroups the groups it
	// touched.
	groupOwn   []float64
	groupBest  []float64
	termGroups []int32
	// groupSeen marks the groups with some evidence, listed in
	// groupTouched: only they are ranked.
	groupSeen    []bool
	groupTouched []int32
	groupHeap    []scoredGroup // the best groups so far, a min-heap
	// inGroup marks the groups a search is kept to (SearchOptions.Group).
	inGroup []bool
	// mentioned is, per server, how surely the request names it.
	mentioned       []float64
	mentionedServer []int32
}

func newScratch(docs, vocabulary, groups, servers, names int) *scratch {
	return &scratch{
		nameFactor:   make([]float64, names),
		total:        make([]float64, docs),
		best:         make([]float64, docs),
		doc:          make([]docScratch, docs),
		touched:      make([]uint64, (docs+63)/64),
		phrase:       make([]float64, docs),
		coverage:     make([]float64, vocabulary),
		groupTop:     make([][3]float64, groups),
		groupMatches: make([]int32, groups),
		groupOwn:     make([]float64, groups),
		groupBest:    make([]float64, groups),
		groupSeen:    make([]bool, groups),
		inGroup:      make([]bool, groups),
		mentioned:    make([]float64, servers),
	}
}

// touch marks d as touched by the query (scratch.touched).
func (s *scratch) touch(d int32) { s.touched[d>>6] |= 1 << (d & 63) }

// docScratch is one doc's evidence for the current query besides its
// scores (scratch.total, scratch.best).
type docScratch struct {
	matched uint8 // number of required query terms matched
	// term numbers the term (1 + its place in the query) whose best
	// alternative is pending in scratch.best: see offerTerm. 0: none.
	term  uint8
	named bool // a name word is covered: see prepareCoverage
}

type scored struct {
	doc   int32
	score float64
}

// accumulate adds every term's best alternative per doc into its total
// (the last term's may still be pending in best: docScratch).
func (ix *Index) accumulate(q *parsedQuery, s *scratch) {
	for i, term := range q.terms {
		if !ix.exhaustive && len(term.alternatives) == 1 && len(term.alternatives[0].stems) == 1 {
			ix.addSingle(term.alternatives[0], !term.optional, s)
			continue
		}
		if !ix.exhaustive && i < math.MaxUint8 {
			// One pass: each doc's best is kept as it is found and
			// added into its total when a later term reaches the doc
			// (or at the end), not in a second pass over the docs.
			cur := termStamp{term: uint8(i + 1), required: !term.optional}
			for _, alt := range term.alternatives {
				ix.scoreAlternative(alt, cur, s)
			}
			continue
		}
		for _, alt := range term.alternatives {
			ix.scoreAlternative(alt, termStamp{}, s)
		}
		for _, d := range s.termDocs {
			s.touch(d)
			s.total[d] += s.best[d]
			if !term.optional {
				s.doc[d].matched++
			}
			s.best[d] = 0
		}
		s.termDocs = s.termDocs[:0]
	}
}

// addSingle adds a term of one one-word alternative straight into the
// docs' totals: its best alternative per doc is its only one, so the
// per-term pass over the docs it touched is not needed. The sums are the
// same, added in the same order.
func (ix *Index) addSingle(alt alternative, required bool, s *scratch) {
	t, ok := ix.terms.lookup(alt.stems[0])
	if !ok {
		return
	}
	var matched uint8
	if required {
		matched = 1
	}
	for _, p := range ix.postings.of(t) {
		score := alt.weight * float64(p.weight)
		if score <= 0 {
			continue
		}
		e := &s.doc[p.doc]
		if e.term != 0 {
			// An earlier term's best is pending: it comes first.
			s.total[p.doc] += s.best[p.doc]
			s.best[p.doc], e.term = 0, 0
		}
		s.touch(p.doc)
		s.total[p.doc] += score
		e.matched += matched
	}
}

// termStamp names the term being scored for offerTerm; the zero value
// means the plain two passes (offer).
type termStamp struct {
	term     uint8
	required bool
}

// scoreAlternative folds one alternative's score into the current term's
// best-per-doc. A multi-word alternative scores the mean of its words, so
// "pull request" weighs like one word, not two.
func (ix *Index) scoreAlternative(alt alternative, cur termStamp, s *scratch) {
	if len(alt.stems) == 1 {
		t, ok := ix.terms.lookup(alt.stems[0])
		if !ok {
			return
		}
		if cur.term != 0 {
			for _, p := range ix.postings.of(t) {
				ix.offerTerm(p.doc, alt.weight*float64(p.weight), cur, s)
			}
			return
		}
		for _, p := range ix.postings.of(t) {
			ix.offer(p.doc, alt.weight*float64(p.weight), s)
		}
		return
	}
	share := alt.weight / float64(len(alt.stems))
	for _, st := range alt.stems {
		t, ok := ix.terms.lookup(st)
		if !ok {
			continue
		}
		for _, p := range ix.postings.of(t) {
			if s.phrase[p.doc] == 0 {
				s.altDocs = append(s.altDocs, p.doc)
			}
			s.phrase[p.doc] += share * float64(p.weight)
		}
	}
	for _, d := range s.altDocs {
		if cur.term != 0 {
			ix.offerTerm(d, s.phrase[d], cur, s)
		} else {
			ix.offer(d, s.phrase[d], s)
		}
		s.phrase[d] = 0
	}
	s.altDocs = s.altDocs[:0]
}

// offerTerm is offer in one pass: the first time the term cur reaches a
// doc, the doc's pending best of an earlier term is added into its total
// and the doc counts the term as matched; then the best is kept. Each
// total is the same sum, added in the same order, as the two passes make.
func (ix *Index) offerTerm(d int32, score float64, cur termStamp, s *scratch) {
	if score <= 0 {
		return
	}
	e := &s.doc[d]
	if e.term != cur.term {
		if e.term != 0 {
			s.total[d] += s.best[d]
		} else {
			s.touch(d)
		}
		s.best[d], e.term = score, cur.term
		if cur.required {
			e.matched++
		}
		return
	}
	s.best[d] = max(s.best[d], score)
}

func (ix *Index) offer(d int32, score float64, s *scratch) {
	if score <= 0 {
		return
	}
	if s.best[d] == 0 {
		s.termDocs = append(s.termDocs, d)
	}
	s.best[d] = max(s.best[d], score)
}

// prepareCoverage fills s.coverage for the query's stems: a stem the query
// typed counts fully, a synonym or hint counts coverageBoost times its
// weight, capped at one. It marks named the docs whose name holds a
// covered word, and returns the query's own stems by term ID.
func (ix *Index) prepareCoverage(q *parsedQuery, s *scratch) (exact []int32) {
	for stem, w := range q.stemWeights {
		if t, ok := ix.terms.lookup(stem); ok {
			s.coverage[t] = min(1, w*ix.tune.coverageBoost)
			s.coverageTerms = append(s.coverageTerms, t)
		}
	}
	for _, t := range s.coverageTerms {
		if s.coverage[t] == 0 {
			continue
		}
		for _, d := range ix.nameDocs.of(t) {
			if !s.doc[d].named {
				s.doc[d].named = true
				s.namedDocs = append(s.namedDocs, d)
			}
		}
	}
	exact = s.exact[:0]
	for _, st := range q.exact {
		t, ok := ix.terms.lookup(st)
		if !ok {
			t = -1
		}
		exact = append(exact, t)
	}
	s.exact = exact
	return exact
}

// nameBonus rewards tools whose own name the query spells out: the share
// of the name's distinctive words the query (or its synonyms) covers, and
// query words that sit next to each other in the name.
func (ix *Index) nameBonus(d int32, exact []int32, s *scratch) float64 {
	name := ix.hot.names[ix.hot.namesAt[d]:ix.hot.namesAt[d+1]]
	if len(name) == 0 {
		return 0
	}
	covered := 0.0
	for _, t := range name {
		covered += s.coverage[t]
	}
	bonus := ix.tune.nameCoverageBonus * covered / float64(len(name))
	for i := 0; i+1 < len(exact); i++ {
		if exact[i] < 0 || exact[i+1] < 0 {
			continue
		}
		for j := 0; j+1 < len(name); j++ {
			if name[j] == exact[i] && name[j+1] == exact[i+1] {
				bonus += ix.tune.adjacencyBonus
				break
			}
		}
	}
	return bonus
}

// ranksBefore orders hits: higher score first, then smaller ID.
func (ix *Index) ranksBefore(a, b scored) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return ix.idRank[a.doc] < ix.idRank[b.doc]
}

// scoredGroup is a ranked group before it is named.
type scoredGroup struct {
	group, matches int32
	score          float64
}

// groupRanksBefore orders groups: higher score first, then name (by its
// precomputed place in name order).
func (ix *Index) groupRanksBefore(a, b scoredGroup) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return ix.groupRank[a.group] < ix.groupRank[b.group]
}

// pushBest keeps the limit best items offered in top, a heap whose root is
// the worst of them, so that a search never sorts more than limit items
// whatever the number that matched. before must be a strict total order:
// the limit kept are then exactly the first limit of a full sort.
func pushBest[T any](top []T, h T, limit int, before func(a, b T) bool) []T {
	if len(top) < limit {
		top = append(top, h)
		for i := len(top) - 1; i > 0; {
			parent := (i - 1) / 2
			if !before(top[parent], top[i]) {
				break
			}
			top[parent], top[i] = top[i], top[parent]
			i = parent
		}
		return top
	}
	if !before(h, top[0]) {
		return top
	}
	top[0] = h
	for i := 0; ; {
		worst, l, r := i, 2*i+1, 2*i+2
		if l < len(top) && before(top[worst], top[l]) {
			worst = l
		}
		if r < len(top) && before(top[worst], top[r]) {
			worst = r
		}
		if worst == i {
			return top
		}
		top[i], top[worst] = top[worst], top[i]
		i = worst
	}
}

// sortBest orders what pushBest kept, best first.
func sortBest[T any](top []T, before func(a, b T) bool) {
	slices.SortFunc(top, func(a, b T) int {
		if before(a, b) {
			return -1
		}
		return 1
	})
}

// Search ranks the tools for a query, best first; equal scores are ordered
// by ID, so the same catalog and query always give the same list. A query
// with no searchable words returns the tools the filters allow, by ID, with
// score 0 (so an empty query with a group lists that group). Only the
// first 1 KiB and 48 words of a query are read.
func (ix *Index) Search(query string, opts *SearchOptions) []Hit {
	hits, _ := ix.find(query, opts, false)
	return hits
}

// SearchGroups ranks groups for a query: a group scores on its own name and
// description and on its best-matching tools, so "issues" finds the group
// that holds the issue tools even if its description never says so.
// opts.Group keeps only that group and its descendants; opts.Allow filters
// the tools that count.
func (ix *Index) SearchGroups(query string, opts *SearchOptions) []GroupHit {
	_, groups := ix.find(query, opts, true)
	return groups
}

// Find returns both rankings of one query in one pass: tools as Search
// does and groups as SearchGroups does, each cut to opts.Limit.
func (ix *Index) Find(query string, opts *SearchOptions) (tools []Hit, groups []GroupHit) {
	return ix.find(query, opts, true)
}

func (ix *Index) find(query string, opts *SearchOptions, wantGroups bool) ([]Hit, []GroupHit) {
	q := ix.parseQuery(query)
	return ix.findParsed(&q, opts, wantGroups)
}

func (ix *Index) findParsed(q *parsedQuery, opts *SearchOptions, wantGroups bool) ([]Hit, []GroupHit) {
	if opts == nil {
		opts = &SearchOptions{}
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	if len(q.terms) == 0 && opts.Group == "" && opts.Allow == nil {
		return nil, nil
	}
	s := ix.scratch.Get().(*scratch)
	defer ix.scratch.Put(s)
	keep := ix.filter(opts, s)
	defer ix.clearFilter(opts, s)
	if len(q.terms) == 0 {
		var hits []Hit
		for _, d := range ix.byID {
			if len(hits) == limit {
				break
			}
			if keep(d) {
				hits = append(hits, Hit{ID: ix.id(d)})
			}
		}
		return hits, nil
	}

	ix.accumulate(q, s)
	exact := ix.prepareCoverage(q, s)
	ix.markMentionedServers(q, s)
	var intentFactor [intentStop + 1]float64
	for i := range intentFactor {
		intentFactor[i] = ix.intentFactor(intent(i), q.intents)
	}
	// The coordination factor depends on the count of terms a doc
	// matched alone: computed once per count, not once per doc.
	required := float64(max(q.required, 1))
	coordination := s.coordination[:0]
	for matched := range len(q.terms) + 1 {
		coverage := min(float64(matched)/required, 1)
		coordination = append(coordination, ix.tune.coordinationFloor+(1-ix.tune.coordinationFloor)*coverage)
	}
	s.coordination = coordination
	// Most requests name no server: their docs' servers are not read.
	mentions := len(s.mentionedServer) > 0
	run := groupRun{set: -1}
	for w, word := range s.touched {
		if word == 0 {
			continue
		}
		s.touched[w] = 0
		for ; word != 0; word &= word - 1 {
			d := int32(w<<6 + bits.TrailingZeros64(word))
			e := &s.doc[d]
			score := s.total[d]
			if e.term != 0 {
				score += s.best[d]
				s.best[d] = 0
			}
			matched := e.matched
			named := e.named
			s.total[d] = 0
			e.matched, e.term = 0, 0
			if keep != nil && !keep(d) {
				continue
			}
			score *= coordination[matched]
			if named {
				// Any other doc's bonus is zero: no name word covered,
				// and so no pair of the query's words next to each other.
				// The bonus depends on the name alone: computed once per
				// distinct name, it costs little where servers are mounted
				// many times over.
				f := s.nameFactor[ix.hot.nameID[d]]
				if f == 0 || ix.exhaustive {
					f = 1 + ix.nameBonus(d, exact, s)
					s.nameFactor[ix.hot.nameID[d]] = f
					s.nameFactorSet = append(s.nameFactorSet, ix.hot.nameID[d])
				}
				score *= f
			}
			score *= intentFactor[ix.hot.intent[d]]
			if mentions {
				if m := s.mentioned[ix.hot.server[d]]; m > 0 {
					score *= 1 + ix.tune.serverBoost*m
				}
			}
			if h := (scored{doc: d, score: score}); len(s.top) < limit || ix.ranksBefore(h, s.top[0]) {
				s.top = pushBest(s.top, h, limit, ix.ranksBefore)
			}
			if wantGroups {
				// Docs come mostly in doc order, a group's docs side by
				// side: a run of docs of one set of groups is summed here
				// and added to the groups once (addRun).
				if set := ix.hot.groupSet[d]; set != run.set {
					ix.addRun(&run, s)
					run = groupRun{set: set}
				}
				run.matches++
				addGroupScore(&run.top, score)
			}
		}
	}
	ix.addRun(&run, s)
	for _, t := range s.coverageTerms {
		s.coverage[t] = 0
	}
	s.coverageTerms = s.coverageTerms[:0]
	for _, d := range s.namedDocs {
		s.doc[d].named = false
	}
	for _, n := range s.nameFactorSet {
		s.nameFactor[n] = 0
	}
	s.nameFactorSet = s.nameFactorSet[:0]
	s.namedDocs = s.namedDocs[:0]
	for _, sv := range s.mentionedServer {
		s.mentioned[sv] = 0
	}
	s.mentionedServer = s.mentionedServer[:0]

	sortBest(s.top, ix.ranksBefore)
	hits := make([]Hit, len(s.top))
	for i, h := range s.top {
		hits[i] = Hit{ID: ix.id(h.doc), Score: h.score}
	}
	s.top = s.top[:0]

	var groups []GroupHit
	if wantGroups {
		groups = ix.rankGroups(q, s, opts.Group != "", limit)
	}
	return hits, groups
}

// groupRun is what a run of docs of one set of groups adds to each of
// them: their count, and their three best scores.
type groupRun struct {
	set     int32 // -1: none
	matches int32
	top     [3]float64
}

// addRun adds a run's evidence to each group of its set. A group's three
// best scores are the same whether its docs are offered one by one or a
// run's best three at once.
func (ix *Index) addRun(run *groupRun, s *scratch) {
	if run.set < 0 || run.matches == 0 {
		return
	}
	for _, g := range ix.hot.setGroups.of(run.set) {
		if !s.groupSeen[g] {
			s.groupSeen[g] = true
			s.groupTouched = append(s.groupTouched, g)
		}
		s.groupMatches[g] += run.matches
		top := &s.groupTop[g]
		for _, score := range run.top[:min(run.matches, 3)] {
			addGroupScore(top, score)
		}
	}
}

// addGroupScore keeps a tool's score if it is among its group's three
// best so far: the three kept are the three largest offered, whatever the
// order they come in.
func addGroupScore(top *[3]float64, score float64) {
	switch {
	case score > top[0]:
		top[0], top[1], top[2] = score, top[0], top[1]
	case score > top[1]:
		top[1], top[2] = score, top[1]
	case score > top[2]:
		top[2] = score
	}
}

// markMentionedServers sets s.mentioned, per server, to how surely the
// request names it: by a word of the request or a close synonym ("k8s" for
// kubernetes).
func (ix *Index) markMentionedServers(q *parsedQuery, s *scratch) {
	for stem, w := range q.stemWeights {
		m, ok := ix.mentionOf(stem)
		if !ok || w < ix.synonymWeight {
			continue
		}
		if s.mentioned[m.server] == 0 {
			s.mentionedServer = append(s.mentionedServer, m.server)
		}
		s.mentioned[m.server] = max(s.mentioned[m.server], m.purity)
	}
}

// mentionOf returns the server a stem names, if it names one.
func (ix *Index) mentionOf(stem string) (serverMention, bool) {
	t, ok := ix.terms.lookup(stem)
	if !ok {
		return serverMention{}, false
	}
	m, ok := ix.serverMentions[t]
	return m, ok
}

// filter returns the predicate for opts.Group and opts.Allow over docs,
// or nil when every doc passes. It marks opts.Group's groups in
// s.inGroup; clearFilter unmarks them.
func (ix *Index) filter(opts *SearchOptions, s *scratch) func(doc int32) bool {
	if opts.Group == "" && opts.Allow == nil {
		return nil
	}
	if opts.Group != "" {
		for _, g := range ix.groupsWithin(opts.Group) {
			s.inGroup[g] = true
		}
	}
	return func(d int32) bool {
		if opts.Group != "" {
			found := false
			for _, g := range ix.hot.setGroups.of(ix.hot.groupSet[d]) {
				if s.inGroup[g] {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		return opts.Allow == nil || opts.Allow(ix.id(d))
	}
}

func (ix *Index) clearFilter(opts *SearchOptions, s *scratch) {
	if opts.Group != "" {
		for _, g := range ix.groupsWithin(opts.Group) {
			s.inGroup[g] = false
		}
	}
}

// rankGroups scores groups by their own words plus their best tools (the
// best adds groupToolShare of its score, the second half that, the third
// a quarter), keeps the limit best (those in s.inGroup if within), and
// resets the per-group scratch. Only groups with some evidence are read.
func (ix *Index) rankGroups(q *parsedQuery, s *scratch, within bool, limit int) []GroupHit {
	for _, term := range q.terms {
		for _, alt := range term.alternatives {
			if len(alt.stems) != 1 {
				continue
			}
			t, ok := ix.groupTerms.lookup(alt.stems[0])
			if !ok {
				continue
			}
			for _, p := range ix.groupPostings.of(t) {
				v := alt.weight * float64(p.weight)
				if v <= s.groupBest[p.doc] {
					continue
				}
				if s.groupBest[p.doc] == 0 {
					s.termGroups = append(s.termGroups, p.doc)
				}
				s.groupBest[p.doc] = v
			}
		}
		for _, g := range s.termGroups {
			s.groupOwn[g] += s.groupBest[g]
			s.groupBest[g] = 0
			if !s.groupSeen[g] {
				s.groupSeen[g] = true
				s.groupTouched = append(s.groupTouched, g)
			}
		}
		s.termGroups = s.termGroups[:0]
	}
	share := ix.tune.groupToolShare
	for _, g := range s.groupTouched {
		top := s.groupTop[g]
		h := scoredGroup{
			group:   g,
			score:   s.groupOwn[g] + share*(top[0]+top[1]/2+top[2]/4),
			matches: s.groupMatches[g],
		}
		s.groupTop[g], s.groupMatches[g], s.groupOwn[g], s.groupSeen[g] = [3]float64{}, 0, 0, false
		if !(h.score > 0) || within && !s.inGroup[g] {
			continue
		}
		// Most groups score below the limit-th kept: a lower score
		// cannot rank before it, whatever the tie-break, and is
		// skipped without a call.
		if len(s.groupHeap) == limit && h.score < s.groupHeap[0].score {
			continue
		}
		s.groupHeap = pushBest(s.groupHeap, h, limit, ix.groupRanksBefore)
	}
	s.groupTouched = s.groupTouched[:0]
	if len(s.groupHeap) == 0 {
		return nil
	}
	sortBest(s.groupHeap, ix.groupRanksBefore)
	out := make([]GroupHit, len(s.groupHeap))
	for i, h := range s.groupHeap {
		out[i] = GroupHit{Name: ix.groupNames.get(h.group), Score: h.score, Matches: int(h.matches)}
	}
	s.groupHeap = s.groupHeap[:0]
	return out
}
