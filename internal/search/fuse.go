package search

import (
	"cmp"
	"slices"
	"strings"
)

// MaxPhrasings is how many phrasings of one request FindPhrasings ranks;
// later ones are ignored.
const MaxPhrasings = 3

// fusionDepth is how deep each phrasing's ranking is read when several
// are fused: a tool that one phrasing ranks 30th adds almost nothing.
const fusionDepth = 30

// FindPhrasings ranks several phrasings of one request ("merge pull
// request github", "land PR") and fuses their rankings, so that a tool
// one phrasing finds early ranks high even when another phrasing misses
// it. Blank and repeated phrasings (ignoring case and surrounding space)
// are dropped and at most MaxPhrasings are read. With one phrasing left
// it is Find; phrasings with no searchable words add nothing. Each
// phrasing is filtered by opts like Find; groups are fused the same way.
//
// The first phrasing counts most (README.md: Several phrasings). The fused
// score runs from 0 to 1: a tool every phrasing ranks first scores 1. Same
// catalog and phrasings → same order.
func (ix *Index) FindPhrasings(phrasings []string, opts *SearchOptions) ([]Hit, []GroupHit) {
	phrasings = DistinctPhrasings(phrasings)
	phrasings = phrasings[:min(len(phrasings), MaxPhrasings)]
	if len(phrasings) <= 1 {
		return ix.Find(strings.Join(phrasings, ""), opts)
	}
	var parsed []parsedQuery
	for _, p := range phrasings {
		if q := ix.parseQuery(p); len(q.terms) > 0 {
			parsed = append(parsed, q)
		}
	}
	if len(parsed) <= 1 {
		// One phrasing or none with searchable words: rank it alone (an
		// empty one lists what the filters allow, as Find does).
		if len(parsed) == 0 {
			return ix.Find("", opts)
		}
		return ix.findParsed(&parsed[0], opts, true)
	}
	limit := DefaultLimit
	if opts != nil && opts.Limit > 0 {
		limit = opts.Limit
	}
	deep := SearchOptions{Limit: max(limit, fusionDepth)}
	if opts != nil {
		deep.Group, deep.Allow = opts.Group, opts.Allow
	}
	tools := make([][]scoredKey, len(parsed))
	groups := make([][]scoredKey, len(parsed))
	matches := map[string]int{} // per group, the most tools one phrasing matched
	for i := range parsed {
		hits, gs := ix.findParsed(&parsed[i], &deep, true)
		for _, h := range hits {
			tools[i] = append(tools[i], scoredKey{h.ID, h.Score})
		}
		for _, g := range gs {
			groups[i] = append(groups[i], scoredKey{g.Name, g.Score})
			matches[g.Name] = max(matches[g.Name], g.Matches)
		}
	}
	fusedTools := ix.fuse(tools, limit)
	fusedGroups := ix.fuse(groups, limit)
	outTools := make([]Hit, len(fusedTools))
	for i, f := range fusedTools {
		outTools[i] = Hit{ID: f.key, Score: f.score}
	}
	var outGroups []GroupHit
	for _, f := range fusedGroups {
		outGroups = append(outGroups, GroupHit{Name: f.key, Score: f.score, Matches: matches[f.key]})
	}
	return outTools, outGroups
}

// DistinctPhrasings trims the phrasings and drops blank ones and ones
// repeated (ignoring case), keeping the order.
func DistinctPhrasings(phrasings []string) []string {
	var out []string
	for _, p := range phrasings {
		p = strings.TrimSpace(p)
		if p != "" && !slices.ContainsFunc(out, func(o string) bool { return strings.EqualFold(o, p) }) {
			out = append(out, p)
		}
	}
	return out
}

type fused struct {
	key   string
	score float64
}

// fuse combines the rankings of several phrasings: each phrasing's scores
// are divided by its best score (so a phrasing whose words the catalog
// uses often does not drown one with rarer words), weighted, and summed
// per item. The first phrasing weighs firstPhrasingWeight, the others 1:
// it is the caller's best wording, and the others are there to catch what
// it misses. The sum is divided by the total weight, so an item that every
// phrasing ranks first scores 1. Ties are broken by key.
func (ix *Index) fuse(rankings [][]scoredKey, limit int) []fused {
	scores := map[string]float64{}
	total := 0.0
	for i, ranking := range rankings {
		w := 1.0
		if i == 0 {
			w = ix.tune.firstPhrasingWeight
		}
		total += w
		if len(ranking) == 0 || ranking[0].score <= 0 {
			continue
		}
		for _, r := range ranking {
			scores[r.key] += w * r.score / ranking[0].score
		}
	}
	out := make([]fused, 0, len(scores))
	for key, s := range scores {
		out = append(out, fused{key: key, score: s / total})
	}
	slices.SortFunc(out, func(a, b fused) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// scoredKey is one item of one phrasing's ranking, best first.
type scoredKey struct {
	key   string
	score float64
}
