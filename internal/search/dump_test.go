package search

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestRankingDump writes every evaluation request's rankings (tools,
// groups, scores and match counts) over the real catalogs and the
// 5,000- and 20,000-tool syntheses, at the option sets find_tools and
// Search use, into the file TOOLFOLD_RANKING_DUMP names. A change meant to
// keep the ranking byte for byte is checked by running it before and
// after the change and comparing the two files with cmp:
//
//	TOOLFOLD_RANKING_DUMP=/tmp/before.txt go test -run RankingDump ./internal/search/
func TestRankingDump(t *testing.T) {
	file := os.Getenv("TOOLFOLD_RANKING_DUMP")
	if file == "" {
		t.Skip("set TOOLFOLD_RANKING_DUMP=FILE to write the rankings into FILE")
	}
	queries := benchQueries(t)
	catalogs := []struct {
		name string
		docs []Doc
	}{
		{"real", loadCatalogs(t)},
		{"synthetic-5000", syntheticCatalog(t, 5000)},
		{"synthetic-20000", syntheticCatalog(t, 20000)},
	}
	var b strings.Builder
	for _, c := range catalogs {
		ix := New(c.docs, nil)
		for _, tc := range rankingCases {
			for _, q := range queries {
				fmt.Fprintf(&b, "== %s / %s / %q\n%s", c.name, tc.name, q, dumpRanking(ix, q, tc.opts, tc.wantGroups))
			}
		}
		for i := 0; i+1 < len(queries); i += 2 {
			tools, groups := ix.FindPhrasings([]string{queries[i], queries[i+1]}, &SearchOptions{Limit: 15})
			fmt.Fprintf(&b, "== %s / phrasings / %q + %q\n", c.name, queries[i], queries[i+1])
			for _, h := range tools {
				fmt.Fprintf(&b, "tool %s %v\n", h.ID, h.Score)
			}
			for _, g := range groups {
				fmt.Fprintf(&b, "group %s %v %d\n", g.Name, g.Score, g.Matches)
			}
		}
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
