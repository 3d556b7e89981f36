package meta

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/search"
	"github.com/toolfold/toolfold/internal/view"
)

// evalQueries are the requests of internal/search's evaluation sets, the
// ones the bench's find_tools timing cycles through.
func evalQueries(tb testing.TB) []string {
	tb.Helper()
	var qs []string
	for _, name := range []string{"eval.json", "eval_holdout.json", "eval_holdout2.json", "eval_holdout3.json"} {
		data, err := os.ReadFile(filepath.Join("..", "search", "testdata", name))
		if err != nil {
			tb.Fatal(err)
		}
		var cases []struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(data, &cases); err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		for _, c := range cases {
			qs = append(qs, c.Query)
		}
	}
	return qs
}

// scaledDiscovery is the search mode's Discovery over n tools made of the
// shared catalogs repeated under new names, as the bench's scale run serves.
func scaledDiscovery(tb testing.TB, n int) (*Discovery, view.Snapshot) {
	tb.Helper()
	space, err := view.NewSpace(catalogtest.Build(tb, catalogtest.Scaled(tb, n)), nil)
	if err != nil {
		tb.Fatal(err)
	}
	e, err := expose.Build(space, &expose.Options{Mode: expose.Search})
	if err != nil {
		tb.Fatal(err)
	}
	return NewDiscovery(DefaultNames(), e, nil), space.New().Snapshot()
}

// BenchmarkFindTools splits one find_tools call at 20,000 tools into its
// parts, cycling through the evaluation requests: the index query alone
// (as Find asks it), Find (the query and the answer's values), and the
// whole call as the gateway makes it (Find, then the result's JSON and
// text, then the result encoded as the SDK encodes it for the wire), and
// the encoding alone (Result and the wire's JSON of one answer). The
// differences are what answering costs beyond ranking.
func BenchmarkFindTools(b *testing.B) {
	queries := evalQueries(b)
	d, snap := scaledDiscovery(b, 20000)
	opts := &search.SearchOptions{Limit: search.DefaultLimit + extraGroups}
	b.Run("part=index", func(b *testing.B) {
		measureCPU(b, func(i int) {
			d.index.FindPhrasings([]string{queries[i%len(queries)]}, opts)
		})
	})
	b.Run("part=find", func(b *testing.B) {
		measureCPU(b, func(i int) {
			if _, err := d.Find(FindArgs{Query: queries[i%len(queries)]}, snap); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("part=encode", func(b *testing.B) {
		res, err := d.Find(FindArgs{Query: "list the open pull requests on github"}, snap)
		if err != nil {
			b.Fatal(err)
		}
		measureCPU(b, func(int) {
			if _, err := json.Marshal(Result(res, false)); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("part=call", func(b *testing.B) {
		measureCPU(b, func(i int) {
			res, err := d.Find(FindArgs{Query: queries[i%len(queries)]}, snap)
			if err != nil {
				b.Fatal(err)
			}
			r := Result(res, false)
			if r.IsError {
				b.Fatal(r.Content)
			}
			// As the SDK encodes a result for the wire.
			if _, err := json.Marshal(r); err != nil {
				b.Fatal(err)
			}
		})
	})
}
