package search

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// explain describes how a doc scored for a query, term by term; a
// debugging aid for improving the method (TOOLFOLD_EXPLAIN='query|id,id').
func (ix *Index) explain(query, id string) string {
	var d int32 = -1
	for i := range int32(ix.Len()) {
		if ix.id(i) == id {
			d = i
		}
	}
	if d < 0 {
		return id + ": unknown"
	}
	q := ix.parseQuery(query)
	var b strings.Builder
	fmt.Fprintf(&b, "%s name=%v\n", id, ix.hot.names[ix.hot.namesAt[d]:ix.hot.namesAt[d+1]])
	for _, t := range q.terms {
		best := 0.0
		var parts []string
		for _, a := range t.alternatives {
			sc := 0.0
			for _, s := range a.stems {
				t, ok := ix.terms.lookup(s)
				if !ok {
					continue
				}
				for _, p := range ix.postings.of(t) {
					if p.doc == d {
						sc += float64(p.weight) / float64(len(a.stems))
					}
				}
			}
			parts = append(parts, fmt.Sprintf("%v×%.1f=%.2f", a.stems, a.weight, sc*a.weight))
			best = max(best, sc*a.weight)
		}
		fmt.Fprintf(&b, "  term opt=%v best=%.2f  %s\n", t.optional, best, strings.Join(parts, " "))
	}
	s := newScratch(ix.Len(), ix.postings.len(), ix.groupNames.len(), ix.servers, ix.hot.nameCount)
	fmt.Fprintf(&b, "  nameBonus=%.2f required=%d\n", ix.nameBonus(d, ix.prepareCoverage(&q, s), s), q.required)
	return b.String()
}

func TestExplain(t *testing.T) {
	spec := os.Getenv("TOOLFOLD_EXPLAIN")
	if spec == "" {
		t.Skip("set TOOLFOLD_EXPLAIN='query|id,id' to explain a ranking")
	}
	query, ids, _ := strings.Cut(spec, "|")
	ix := New(loadCatalogs(t), nil)
	for _, h := range ix.Search(query, &SearchOptions{Limit: 5}) {
		ids += "," + h.ID
	}
	seen := map[string]bool{}
	for _, id := range strings.Split(ids, ",") {
		if id != "" && !seen[id] {
			seen[id] = true
			t.Log(ix.explain(query, id))
		}
	}
}
