package search

import (
	"slices"
	"testing"
)

func TestParseWordNetLinksBothWays(t *testing.T) {
	table := parseWordNet("# comment\nsearch\thunt seek\tactivity\tgoogle\tsearcher\nmemory\t\trepresentation\t\tremember\n")
	tests := []struct {
		query string
		want  []wordNetLink
	}{
		// google is a hyponym of search: search is broader than it.
		{"googl", []wordNetLink{{"search", wnBroader}}},
		{"remember", []wordNetLink{{"memory", wnDerived}}},
		{"hunt", []wordNetLink{{"search", wnSynonym}}},
		{"search", []wordNetLink{{"hunt", wnSynonym}, {"seek", wnSynonym}, {"activity", wnBroader}, {"searcher", wnDerived}, {"googl", wnNarrower}}},
		{"activity", []wordNetLink{{"search", wnNarrower}}},
	}
	for _, tt := range tests {
		if got := table.links[tt.query]; !slices.Equal(got, tt.want) {
			t.Errorf("links[%q] = %v, want %v", tt.query, got, tt.want)
		}
	}
}

func TestWordNetTierRanksSmallCatalog(t *testing.T) {
	docs := smallCatalog()
	off := New(docs, nil)
	on := New(docs, &Options{WordNetWeight: 0.3})
	// Queries in the catalog's own words keep their first tool.
	for _, q := range []string{"create issue", "remove a file", "list directory", "merge PR"} {
		if a, b := ids(off.Search(q, nil))[0], ids(on.Search(q, nil))[0]; a != b {
			t.Errorf("%q: WordNet changed the first tool from %v to %v", q, a, b)
		}
	}
	// "google" is a kind of searching (WordNet: google → search).
	if got := ids(on.Search("google the code for NewServer", &SearchOptions{Limit: 1})); !slices.Equal(got, []string{"github__search_code"}) {
		t.Errorf("google the code = %v, want github__search_code first", got)
	}
}
