package search

import (
	"cmp"
	"slices"
	"strings"
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
}

var defaultTuning = tuning{
	k1:                 1.2,
	coordinationFloor:  0.35,
	nameCoverageBonus:  0.5,
	adjacencyBonus:     0.15,
	coverageBoost:      2,
	hintWeight:         0.4,
	pluralListWeight:   0.3,
	questionReadWeight: 0.3,
	stopWordWeight:     0.3,
	groupToolShare:     1.0,
}

// scratch holds per-query dense arrays, reused through a pool so that a
// search allocates little.
type scratch struct {
	total    []float64 // summed term scores per doc
	matched  []int32   // number of query terms that matched per doc
	best     []float64 // best alternative score of the current term
	phrase   []float64 // running sum for a multi-word alternative
	touched  []int32   // docs with total > 0
	termDocs []int32   // docs touched by the current term
	altDocs  []int32   // docs touched by the current alternative
}

func newScratch(n int) *scratch {
	return &scratch{
		total:   make([]float64, n),
		matched: make([]int32, n),
		best:    make([]float64, n),
		phrase:  make([]float64, n),
	}
}

// scoreDocs returns every doc matching the query that keep accepts, with
// its final score.
func (ix *Index) scoreDocs(q parsedQuery, s *scratch, keep func(int32) bool) []scored {
	for _, term := range q.terms {
		for _, alt := range term.alternatives {
			ix.scoreAlternative(alt, s)
		}
		for _, d := range s.termDocs {
			if s.total[d] == 0 && s.matched[d] == 0 {
				s.touched = append(s.touched, d)
			}
			s.total[d] += s.best[d]
			if !term.optional {
				s.matched[d]++
			}
			s.best[d] = 0
		}
		s.termDocs = s.termDocs[:0]
	}

	hits := make([]scored, 0, len(s.touched))
	nTerms := float64(max(q.required, 1))
	for _, d := range s.touched {
		score := s.total[d]
		coverage := min(float64(s.matched[d])/nTerms, 1)
		s.total[d] = 0
		s.matched[d] = 0
		if !keep(d) {
			continue
		}
		score *= ix.tune.coordinationFloor + (1-ix.tune.coordinationFloor)*coverage
		score *= 1 + ix.nameBonus(d, q)
		hits = append(hits, scored{doc: d, score: score})
	}
	s.touched = s.touched[:0]
	return hits
}

// scoreAlternative folds one alternative's score into the current term's
// best-per-doc. A multi-word alternative scores the mean of its words, so
// "pull request" weighs like one word, not two.
func (ix *Index) scoreAlternative(alt alternative, s *scratch) {
	if len(alt.stems) == 1 {
		for _, p := range ix.postings[alt.stems[0]] {
			ix.offer(p.doc, alt.weight*float64(p.weight), s)
		}
		return
	}
	share := alt.weight / float64(len(alt.stems))
	for _, st := range alt.stems {
		for _, p := range ix.postings[st] {
			if s.phrase[p.doc] == 0 {
				s.altDocs = append(s.altDocs, p.doc)
			}
			s.phrase[p.doc] += share * float64(p.weight)
		}
	}
	for _, d := range s.altDocs {
		ix.offer(d, s.phrase[d], s)
		s.phrase[d] = 0
	}
	s.altDocs = s.altDocs[:0]
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

// nameBonus rewards tools whose own name the query spells out: the share
// of the name's distinctive words the query (or its synonyms) covers, and
// query words that sit next to each other in the name.
func (ix *Index) nameBonus(d int32, q parsedQuery) float64 {
	name := ix.docs[d].nameStems
	if len(name) == 0 {
		return 0
	}
	covered := 0.0
	for _, s := range name {
		covered += min(1, q.stemWeights[s]*ix.tune.coverageBoost)
	}
	bonus := ix.tune.nameCoverageBonus * covered / float64(len(name))
	for i := 0; i+1 < len(q.exact); i++ {
		for j := 0; j+1 < len(name); j++ {
			if name[j] == q.exact[i] && name[j+1] == q.exact[i+1] {
				bonus += ix.tune.adjacencyBonus
				break
			}
		}
	}
	return bonus
}

// Search ranks the tools for a query, best first; equal scores are ordered
// by ID, so the same catalog and query always give the same list. A query
// with no searchable words returns the tools the filters allow, by ID, with
// score 0 (so an empty query with a group lists that group).
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
	if opts == nil {
		opts = &SearchOptions{}
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	keep := ix.filter(opts)
	q := ix.parseQuery(query)
	var all []scored
	if len(q.terms) == 0 {
		if opts.Group == "" && opts.Allow == nil {
			return nil, nil
		}
		for d := range ix.docs {
			if keep(int32(d)) {
				all = append(all, scored{doc: int32(d)})
			}
		}
	} else {
		s := ix.scratch.Get().(*scratch)
		all = ix.scoreDocs(q, s, keep)
		ix.scratch.Put(s)
	}
	slices.SortFunc(all, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return strings.Compare(ix.docs[a.doc].id, ix.docs[b.doc].id)
	})

	var groups []GroupHit
	if wantGroups && len(q.terms) > 0 {
		groups = ix.rankGroups(q, all, opts.Group)
		if len(groups) > limit {
			groups = groups[:limit]
		}
	}
	hits := make([]Hit, 0, min(limit, len(all)))
	for _, h := range all[:min(limit, len(all))] {
		hits = append(hits, Hit{ID: ix.docs[h.doc].id, Score: h.score})
	}
	return hits, groups
}

type scored struct {
	doc   int32
	score float64
}

func compareHits(a, b Hit) int {
	if c := cmp.Compare(b.Score, a.Score); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// filter returns the predicate for opts.Group and opts.Allow over docs.
func (ix *Index) filter(opts *SearchOptions) func(doc int32) bool {
	var inGroup []bool // per group: is it opts.Group or below it
	if opts.Group != "" {
		inGroup = make([]bool, len(ix.groups))
		for gi, g := range ix.groups {
			inGroup[gi] = slices.Contains(g.ancestors, opts.Group)
		}
	}
	return func(d int32) bool {
		if inGroup != nil {
			found := false
			for _, g := range ix.docs[d].groups {
				if inGroup[g] {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		return opts.Allow == nil || opts.Allow(ix.docs[d].id)
	}
}

// rankGroups scores groups by their own words plus their best tools among
// the (already filtered, sorted) tool hits.
func (ix *Index) rankGroups(q parsedQuery, tools []scored, within string) []GroupHit {
	own := map[int32]float64{}
	for _, term := range q.terms {
		best := map[int32]float64{}
		for _, alt := range term.alternatives {
			if len(alt.stems) != 1 {
				continue
			}
			for _, p := range ix.groupPostings[alt.stems[0]] {
				best[p.doc] = max(best[p.doc], alt.weight*float64(p.weight))
			}
		}
		for g, v := range best {
			own[g] += v
		}
	}
	byGroup := map[int32]*GroupHit{}
	taken := map[int32]int{}
	get := func(g int32) *GroupHit {
		h := byGroup[g]
		if h == nil {
			h = &GroupHit{Name: ix.groups[g].name, Score: own[g]}
			byGroup[g] = h
		}
		return h
	}
	for g := range own {
		get(g)
	}
	// tools is sorted best first, so each group's first three are its best.
	share := ix.tune.groupToolShare
	toolShares := [3]float64{share, share / 2, share / 4}
	for _, t := range tools {
		for _, g := range ix.docs[t.doc].groups {
			h := get(g)
			h.Matches++
			if n := taken[g]; n < len(toolShares) {
				h.Score += toolShares[n] * t.score
				taken[g] = n + 1
			}
		}
	}
	out := make([]GroupHit, 0, len(byGroup))
	for g, h := range byGroup {
		if within != "" && !slices.Contains(ix.groups[g].ancestors, within) {
			continue
		}
		if h.Score > 0 {
			out = append(out, *h)
		}
	}
	slices.SortFunc(out, func(a, b GroupHit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}
