package search

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestNameCacheKeepsRanking requires find's shortcuts (the cache of name
// bonuses, one per distinct name; one-word terms added straight into the
// totals) to give byte for byte the rankings (tools, groups, scores and
// match counts) that scoring every doc in full gives, over
// every evaluation request, on the real catalogs and on a 5,000-tool
// synthesis of them, at the limits find_tools and Search use.
func TestNameCacheKeepsRanking(t *testing.T) {
	queries := benchQueries(t)
	catalogs := []struct {
		name string
		docs []Doc
	}{
		{"real", loadCatalogs(t)},
	}
	if !testing.Short() {
		// Servers mounted many times over: where the cache is used most.
		catalogs = append(catalogs, struct {
			name string
			docs []Doc
		}{"synthetic-5000", syntheticCatalog(t, 5000)})
	}
	for _, c := range catalogs {
		cached := New(c.docs, nil)
		full := New(c.docs, nil)
		full.exhaustive = true
		for _, tc := range rankingCases {
			t.Run(c.name+"/"+tc.name, func(t *testing.T) {
				for _, q := range queries {
					got := dumpRanking(cached, q, tc.opts, tc.wantGroups)
					want := dumpRanking(full, q, tc.opts, tc.wantGroups)
					if got != want {
						t.Fatalf("query %q: cached ranking differs from the one scored in full\ncached:\n%s\nin full:\n%s", q, got, want)
					}
				}
			})
		}
	}
}

// rankingCases are the limits and filters find_tools and Search use, at
// which tests compare rankings.
var rankingCases = []struct {
	name       string
	opts       SearchOptions
	wantGroups bool
}{
	{"find limit 15", SearchOptions{Limit: 15}, true},
	{"find limit 1", SearchOptions{Limit: 1}, true},
	{"search limit 5", SearchOptions{Limit: 5}, false},
	{"find in github", SearchOptions{Limit: 5, Group: "github"}, true},
	{"find allowing half", SearchOptions{Limit: 10, Allow: func(id string) bool { return len(id)%2 == 0 }}, true},
}

// dumpRanking writes one query's rankings as text, scores in full.
func dumpRanking(ix *Index, query string, opts SearchOptions, wantGroups bool) string {
	tools, groups := ix.find(query, &opts, wantGroups)
	var b strings.Builder
	for _, h := range tools {
		fmt.Fprintf(&b, "tool %s %s\n", h.ID, strconv.FormatFloat(h.Score, 'g', -1, 64))
	}
	for _, g := range groups {
		fmt.Fprintf(&b, "group %s %s %d\n", g.Name, strconv.FormatFloat(g.Score, 'g', -1, 64), g.Matches)
	}
	return b.String()
}
