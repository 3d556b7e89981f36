package search

import (
	"math"
	"slices"
	"testing"
)

func TestFindPhrasingsWithOnePhrasingIsFind(t *testing.T) {
	ix := New(smallCatalog(), nil)
	tests := []struct {
		phrasings []string
		query     string // what Find is given for the same request
	}{
		{[]string{"create issue"}, "create issue"},
		{[]string{"  create issue ", "", "Create Issue", "   "}, "create issue"}, // blank and repeated phrasings are dropped
		{nil, ""},
		{[]string{"", " "}, ""},
	}
	for _, tt := range tests {
		for _, opts := range []*SearchOptions{nil, {Limit: 3}, {Group: "files", Limit: 10}} {
			gotTools, gotGroups := ix.FindPhrasings(tt.phrasings, opts)
			wantTools, wantGroups := ix.Find(tt.query, opts)
			if !slices.Equal(gotTools, wantTools) || !slices.Equal(gotGroups, wantGroups) {
				t.Errorf("FindPhrasings(%q, %+v) = %v, %v; Find(%q) = %v, %v", tt.phrasings, opts, gotTools, gotGroups, tt.query, wantTools, wantGroups)
			}
		}
	}
}

func TestFindPhrasingsFusesRankings(t *testing.T) {
	ix := New(smallCatalog(), nil)
	// Each phrasing alone puts a different tool first; fused, the first
	// phrasing's best leads and the second's is still found.
	for _, tt := range []struct{ phrasings, want []string }{
		{[]string{"merge pull request", "delete file"}, []string{"github__merge_pull_request", "fs__delete_file"}},
		{[]string{"delete file", "merge pull request"}, []string{"fs__delete_file", "github__merge_pull_request"}},
	} {
		got := ids(first(ix.FindPhrasings(tt.phrasings, &SearchOptions{Limit: 4})))
		if len(got) == 0 || got[0] != tt.want[0] || !slices.Contains(got, tt.want[1]) {
			t.Errorf("fused %q = %v, want %s first and %s among them", tt.phrasings, got, tt.want[0], tt.want[1])
		}
	}
	_, groups := ix.FindPhrasings([]string{"merge pull request", "delete file"}, &SearchOptions{Limit: 4})
	if len(groups) < 2 || !slices.ContainsFunc(groups[:2], func(g GroupHit) bool { return g.Name == "files" }) ||
		!slices.ContainsFunc(groups[:2], func(g GroupHit) bool { return g.Name == "github" }) {
		t.Errorf("fused groups = %v, want files and github first", groups)
	}
	for _, g := range groups {
		if g.Matches == 0 {
			t.Errorf("group %s carries no match count", g.Name)
		}
	}

	// A tool every phrasing ranks first is first, scored 1.
	tools, _ := ix.FindPhrasings([]string{"merge PR", "merge pull request", "land the pull request"}, nil)
	if len(tools) == 0 || tools[0].ID != "github__merge_pull_request" || math.Abs(tools[0].Score-1) > 1e-9 {
		t.Errorf("agreeing phrasings = %v, want merge_pull_request first with score 1", tools)
	}
	for i := 1; i < len(tools); i++ {
		if tools[i].Score > tools[i-1].Score || tools[i].Score <= 0 {
			t.Errorf("fused scores not descending and positive: %v", tools)
		}
	}
}

func TestFindPhrasingsIgnoresPhrasingsWithoutWords(t *testing.T) {
	ix := New(smallCatalog(), nil)
	got, _ := ix.FindPhrasings([]string{"the of and", "delete a file"}, &SearchOptions{Limit: 3})
	want, _ := ix.Find("delete a file", &SearchOptions{Limit: 3})
	if !slices.Equal(got, want) {
		t.Errorf("a phrasing of stop words changed the ranking: %v, want %v", got, want)
	}
}

func TestFindPhrasingsReadsAtMostThree(t *testing.T) {
	ix := New(smallCatalog(), nil)
	three := []string{"create issue", "list channels", "read file"}
	want, _ := ix.FindPhrasings(three, &SearchOptions{Limit: 10})
	got, _ := ix.FindPhrasings(append(three, "post message"), &SearchOptions{Limit: 10})
	if !slices.Equal(got, want) {
		t.Errorf("a fourth phrasing changed the ranking: %v, want %v", got, want)
	}
}

func TestFindPhrasingsKeepsFilters(t *testing.T) {
	ix := New(smallCatalog(), &Options{GroupParents: map[string]string{"files": "local"}})
	phrasings := []string{"remove file", "merge pull request", "post message"}
	tools, groups := ix.FindPhrasings(phrasings, &SearchOptions{Group: "local", Limit: 20})
	if len(tools) == 0 {
		t.Fatal("the group filter left nothing")
	}
	for _, h := range tools {
		if !slices.Contains([]string{"fs__read_file", "fs__write_file", "fs__list_directory", "fs__list_directory_with_sizes", "fs__delete_file", "fs__move_file"}, h.ID) {
			t.Errorf("group local let %s through", h.ID)
		}
	}
	if tools[0].ID != "fs__delete_file" {
		t.Errorf("in group local, %v; want delete_file first", ids(tools))
	}
	for _, g := range groups {
		if g.Name != "files" {
			t.Errorf("group local let group %s through", g.Name)
		}
	}

	onlySlack := func(id string) bool { return id == "slack__post_message" || id == "slack__list_channels" }
	tools, _ = ix.FindPhrasings(phrasings, &SearchOptions{Allow: onlySlack, Limit: 20})
	if len(tools) == 0 || tools[0].ID != "slack__post_message" {
		t.Errorf("Allow: %v, want slack__post_message first", ids(tools))
	}
	for _, h := range tools {
		if !onlySlack(h.ID) {
			t.Errorf("Allow let %s through", h.ID)
		}
	}
}

func TestFindPhrasingsIsDeterministic(t *testing.T) {
	ix := New(smallCatalog(), nil)
	phrasings := []string{"list", "files", "issues"}
	first, firstGroups := ix.FindPhrasings(phrasings, &SearchOptions{Limit: 20})
	for range 20 {
		got, groups := ix.FindPhrasings(phrasings, &SearchOptions{Limit: 20})
		if !slices.Equal(got, first) || !slices.Equal(groups, firstGroups) {
			t.Fatalf("FindPhrasings changed between calls: %v then %v", first, got)
		}
	}
	if !slices.IsSortedFunc(first, compareHitsForTest) {
		t.Errorf("not sorted by score, then ID: %v", first)
	}
}

func FuzzFindPhrasings(f *testing.F) {
	for _, seed := range [][3]string{
		{"create issue", "open bug", ""},
		{"", "", ""},
		{"the", "of", "and"},
		{"a/b/c.txt", "https://x.io", "ÄÖÜ 🙂"},
		{"merge PR", "MERGE pr", "\x00\xff"},
	} {
		f.Add(seed[0], seed[1], seed[2], 3)
	}
	ix := New(smallCatalog(), nil)
	f.Fuzz(func(t *testing.T, a, b, c string, limit int) {
		limit %= 50
		tools, groups := ix.FindPhrasings([]string{a, b, c}, &SearchOptions{Limit: limit})
		want := limit
		if limit <= 0 {
			want = DefaultLimit
		}
		if len(tools) > want || len(groups) > want {
			t.Fatalf("FindPhrasings(%q, %q, %q, %d) returned %d tools, %d groups", a, b, c, limit, len(tools), len(groups))
		}
		if !slices.IsSortedFunc(tools, compareHitsForTest) {
			t.Fatalf("not sorted: %v", tools)
		}
		seen := map[string]bool{}
		for _, h := range tools {
			if math.IsNaN(h.Score) || math.IsInf(h.Score, 0) || h.Score < 0 || seen[h.ID] {
				t.Fatalf("bad or repeated hit %s %v in %v", h.ID, h.Score, tools)
			}
			seen[h.ID] = true
		}
	})
}

func first[A, B any](a A, _ B) A { return a }
