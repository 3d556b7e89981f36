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
// The fused score is reciprocal-rank fusion scaled to 0..1: a tool every
// phrasing ranks first scores 1. Same catalog and phrasings → same order.
func (ix *Index) FindPhrasings(phrasings []string, opts *SearchOptions) ([]Hit, []GroupHit) {
	phrasings = distinctPhrasings(phrasings)
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
	tools := make([][]string, len(parsed))
	groups := make([][]string, len(parsed))
	matches := map[string]int{} // per group, the most tools one phrasing matched
	for i := range parsed {
		hits, gs := ix.findParsed(&parsed[i], &deep, true)
		for _, h := range hits {
			tools[i] = append(tools[i], h.ID)
		}
		for _, g := range gs {
			groups[i] = append(groups[i], g.Name)
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

// distinctPhrasings trims the phrasings and drops blank and repeated ones,
// keeping the first MaxPhrasings in order.
func distinctPhrasings(phrasings []string) []string {
	var out []string
	for _, p := range phrasings {
		p = strings.TrimSpace(p)
		if p == "" || slices.ContainsFunc(out, func(o string) bool { return strings.EqualFold(o, p) }) {
			continue
		}
		out = append(out, p)
		if len(out) == MaxPhrasings {
			break
		}
	}
	return out
}

type fused struct {
	key   string
	score float64
}

// fuse combines rankings by reciprocal rank: each ranking gives the item
// at rank r (from 1) 1/(k+r), and the sum is scaled so that an item first
// in every ranking scores 1. Ties are broken by key.
func (ix *Index) fuse(rankings [][]string, limit int) []fused {
	k := ix.tune.fusionK
	scores := map[string]float64{}
	for _, ranking := range rankings {
		for r, key := range ranking {
			scores[key] += (k + 1) / (k + float64(r+1))
		}
	}
	out := make([]fused, 0, len(scores))
	for key, s := range scores {
		out = append(out, fused{key: key, score: s / float64(len(rankings))})
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
