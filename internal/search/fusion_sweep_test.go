package search

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestFusionSweep compares ways of fusing the rankings of a request's
// phrasings, on the dev set's agent-phrased companion only; it is how
// FindPhrasings' method and constant were chosen
// (TOOLFOLD_EVAL_SWEEP=1 go test -run FusionSweep -v ./internal/search/).
func TestFusionSweep(t *testing.T) {
	if os.Getenv("TOOLFOLD_EVAL_SWEEP") == "" {
		t.Skip("set TOOLFOLD_EVAL_SWEEP=1 to compare fusion methods on the dev set")
	}
	docs := loadCatalogs(t)
	ix := New(docs, nil)
	dev := loadEvalWithAgent(t, "eval.json")
	// Each phrasing ranked once, deep enough for every method.
	rankings := make([][][]Hit, len(dev))
	for i, c := range dev {
		for _, p := range c.Phrasings {
			rankings[i] = append(rankings[i], ix.Search(p, &SearchOptions{Limit: fusionDepth}))
		}
	}
	type method struct {
		name string
		fuse func(lists [][]Hit) map[string]float64
	}
	rrf := func(k, firstWeight float64) func([][]Hit) map[string]float64 {
		return func(lists [][]Hit) map[string]float64 {
			out := map[string]float64{}
			for i, l := range lists {
				w := 1.0
				if i == 0 {
					w = firstWeight
				}
				for r, h := range l {
					out[h.ID] += w / (k + float64(r+1))
				}
			}
			return out
		}
	}
	// normalized: each phrasing's scores divided by its best score, then
	// combined per tool (sum, max, or sum times the number of phrasings
	// that found it).
	normalized := func(combine string, firstWeight float64) func([][]Hit) map[string]float64 {
		return func(lists [][]Hit) map[string]float64 {
			out, found := map[string]float64{}, map[string]float64{}
			for i, l := range lists {
				if len(l) == 0 {
					continue
				}
				w := 1.0
				if i == 0 {
					w = firstWeight
				}
				for _, h := range l {
					s := w * h.Score / l[0].Score
					found[h.ID]++
					switch combine {
					case "max":
						out[h.ID] = max(out[h.ID], s)
					default:
						out[h.ID] += s
					}
				}
			}
			if combine == "mnz" {
				for id := range out {
					out[id] *= found[id]
				}
			}
			return out
		}
	}
	raw := func(combine string, firstWeight float64) func([][]Hit) map[string]float64 {
		return func(lists [][]Hit) map[string]float64 {
			out := map[string]float64{}
			for i, l := range lists {
				w := 1.0
				if i == 0 {
					w = firstWeight
				}
				for _, h := range l {
					if combine == "max" {
						out[h.ID] = max(out[h.ID], w*h.Score)
					} else {
						out[h.ID] += w * h.Score
					}
				}
			}
			return out
		}
	}
	methods := []method{{"first phrasing only", func(l [][]Hit) map[string]float64 { return rrf(60, 1)(l[:1]) }}}
	for _, k := range []float64{0.5, 1, 2, 3, 5, 10, 20, 60} {
		for _, w := range []float64{1, 1.25, 1.5, 2, 3} {
			methods = append(methods, method{fmt.Sprintf("rrf k=%g first×%g", k, w), rrf(k, w)})
		}
	}
	for _, c := range []string{"sum", "max", "mnz"} {
		for _, w := range []float64{1, 1.25, 1.5, 2, 2.5, 3, 4} {
			methods = append(methods, method{fmt.Sprintf("normalized %s first×%g", c, w), normalized(c, w)})
		}
	}
	for _, c := range []string{"sum", "max"} {
		for _, w := range []float64{1, 1.25, 1.5, 2, 3} {
			methods = append(methods, method{fmt.Sprintf("raw %s first×%g", c, w), raw(c, w)})
		}
	}
	r := runEval(ix, knownIDs(docs), dev, agentFused)
	t.Logf("%-28s recall@1 %.3f (%3d)                   recall@5 %.3f (%3d)", "FindPhrasings (as built)", r.recall1(), r.at1, r.recall5(), r.at5)
	// A model may also pass the user's own words as another phrasing.
	for _, extra := range []struct {
		name string
		with func(c evalCase) []string
	}{
		{"as built, p1 + request", func(c evalCase) []string { return []string{c.Phrasings[0], c.Query} }},
		{"as built, p1 + p2 + request", func(c evalCase) []string { return append(slices.Clone(c.Phrasings), c.Query) }},
		{"as built, request + p1 + p2", func(c evalCase) []string { return append([]string{c.Query}, c.Phrasings...) }},
	} {
		withRequest := make([]evalCase, len(dev))
		for i, c := range dev {
			withRequest[i] = c
			withRequest[i].Phrasings = extra.with(c)
		}
		r := runEval(ix, knownIDs(docs), withRequest, agentFused)
		t.Logf("%-28s recall@1 %.3f (%3d)                   recall@5 %.3f (%3d)", extra.name, r.recall1(), r.at1, r.recall5(), r.at5)
	}
	for _, m := range methods {
		var found [5]int // found[r]: requests whose first right tool is at rank r+1
		for i, c := range dev {
			scores := m.fuse(rankings[i])
			ranked := make([]string, 0, len(scores))
			for id := range scores {
				ranked = append(ranked, id)
			}
			slices.SortFunc(ranked, func(a, b string) int {
				if c := cmp.Compare(scores[b], scores[a]); c != 0 {
					return c
				}
				return strings.Compare(a, b)
			})
			for r, id := range ranked[:min(5, len(ranked))] {
				if slices.Contains(c.Expect, id) {
					found[r]++
					break
				}
			}
		}
		at := func(k int) int {
			n := 0
			for _, f := range found[:k] {
				n += f
			}
			return n
		}
		n := float64(len(dev))
		t.Logf("%-28s recall@1 %.3f (%3d)  @2 %3d  @3 %3d  recall@5 %.3f (%3d)", m.name, float64(at(1))/n, at(1), at(2), at(3), float64(at(5))/n, at(5))
	}
}
