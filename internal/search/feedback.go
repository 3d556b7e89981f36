package search

import (
	"cmp"
	"slices"
)

// Pseudo-relevance feedback (RM3-style): after a first ranking, the most
// distinctive words of the best few tools are added to the query as
// optional terms with a small weight, and the catalog is ranked again. A
// request that names a tool's neighbourhood but not its words ("what
// requests did the page make") may then reach tools that share vocabulary
// with the first hits.

// docTerm is one stem of a tool's forward list, with the tool's complete
// BM25F weight for it (the posting's weight).
type docTerm struct {
	term   int32
	weight float32
}

// buildForward inverts the postings into per-doc term lists, and records
// each term's stem, for feedback.
func (ix *Index) buildForward() {
	counts := make([]int32, len(ix.docs)+1)
	for _, list := range ix.postings {
		for _, p := range list {
			counts[p.doc+1]++
		}
	}
	for i := 1; i < len(counts); i++ {
		counts[i] += counts[i-1]
	}
	ix.forwardStart = counts
	ix.forward = make([]docTerm, counts[len(counts)-1])
	next := slices.Clone(counts[:len(ix.docs)])
	for t, list := range ix.postings {
		for _, p := range list {
			ix.forward[next[p.doc]] = docTerm{term: int32(t), weight: p.weight}
			next[p.doc]++
		}
	}
	ix.stems = make([]string, len(ix.postings))
	for st, t := range ix.terms {
		if int(t) < len(ix.stems) {
			ix.stems[t] = st
		}
	}
}

// feedbackTerms ranks the first pass's top docs (already in s.top, any
// order) and returns up to tune.feedbackTerms optional alternatives: the
// stems with the most weight across those docs, each doc counted by its
// share of their total score and each stem by its share of the doc's
// weight, excluding stems the query already asks for. Weights scale from
// tune.feedbackWeight for the best stem down.
func (ix *Index) feedbackTerms(q *parsedQuery, s *scratch) []alternative {
	top := s.top
	slices.SortFunc(top, func(a, b scored) int {
		if ix.ranksBefore(a, b) {
			return -1
		}
		return 1
	})
	total := 0.0
	for _, h := range top {
		total += h.score
	}
	if total <= 0 {
		return nil
	}
	relevance := map[int32]float64{}
	var order []int32
	for _, h := range top {
		start, end := ix.forwardStart[h.doc], ix.forwardStart[h.doc+1]
		norm := 0.0
		for _, dt := range ix.forward[start:end] {
			norm += float64(dt.weight)
		}
		if norm <= 0 {
			continue
		}
		for _, dt := range ix.forward[start:end] {
			if _, asked := q.stemWeights[ix.stems[dt.term]]; asked {
				continue
			}
			if _, ok := relevance[dt.term]; !ok {
				order = append(order, dt.term)
			}
			relevance[dt.term] += h.score / total * float64(dt.weight) / norm
		}
	}
	slices.SortStableFunc(order, func(a, b int32) int {
		if c := cmp.Compare(relevance[b], relevance[a]); c != 0 {
			return c
		}
		return cmp.Compare(ix.stems[a], ix.stems[b])
	})
	order = order[:min(len(order), ix.tune.feedbackTerms)]
	if len(order) == 0 {
		return nil
	}
	best := relevance[order[0]]
	out := make([]alternative, len(order))
	for i, t := range order {
		out[i] = alternative{stems: []string{ix.stems[t]}, weight: ix.tune.feedbackWeight * relevance[t] / best}
	}
	return out
}
