package search

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
)

// smallCatalog is a fixed catalog of three servers whose expected rankings
// are written out below.
func smallCatalog() []Doc {
	gh := []GroupInfo{{Name: "github", Description: "GitHub repositories, issues and pull requests"}}
	ghIssues := []GroupInfo{{Name: "github.issues", Description: "Issue tracking"}}
	fs := []GroupInfo{{Name: "files", Description: "Local file system"}}
	sl := []GroupInfo{{Name: "chat", Description: "Team messaging"}}
	return []Doc{
		{ID: "github__create_issue", Name: "create_issue", Prefix: "github", Description: "Create a new issue in a GitHub repository",
			Params: []Param{{Name: "title", Description: "Issue title"}, {Name: "body"}}, Groups: ghIssues},
		{ID: "github__list_issues", Name: "list_issues", Prefix: "github", Description: "List issues in a GitHub repository with filtering options",
			Params: []Param{{Name: "state", Description: "open or closed", Values: []string{"open", "closed"}}}, Groups: ghIssues},
		{ID: "github__update_issue", Name: "update_issue", Prefix: "github", Description: "Update an existing issue (title, body, state)", Groups: ghIssues},
		{ID: "github__create_pull_request", Name: "create_pull_request", Prefix: "github", Description: "Create a new pull request", Groups: gh},
		{ID: "github__merge_pull_request", Name: "merge_pull_request", Prefix: "github", Description: "Merge a pull request", Groups: gh},
		{ID: "github__search_code", Name: "search_code", Prefix: "github", Description: "Search for code across GitHub repositories", Groups: gh},
		{ID: "fs__read_file", Name: "read_file", Prefix: "fs", Description: "Read the complete contents of a file", Groups: fs},
		{ID: "fs__write_file", Name: "write_file", Prefix: "fs", Description: "Create or overwrite a file with new content", Groups: fs},
		{ID: "fs__list_directory", Name: "list_directory", Prefix: "fs", Description: "List the files and directories in a path", Groups: fs},
		{ID: "fs__list_directory_with_sizes", Name: "list_directory_with_sizes", Prefix: "fs", Description: "List files and directories with their sizes", Groups: fs},
		{ID: "fs__delete_file", Name: "delete_file", Prefix: "fs", Description: "Delete a file", Groups: fs},
		{ID: "fs__move_file", Name: "move_file", Prefix: "fs", Description: "Move or rename a file", Groups: fs},
		{ID: "slack__post_message", Name: "slack_post_message", Prefix: "slack", Description: "Post a new message to a Slack channel", Groups: sl},
		{ID: "slack__list_channels", Name: "slack_list_channels", Prefix: "slack", Description: "List channels in the workspace", Groups: sl},
		{ID: "slack__get_users", Name: "slack_get_users", Prefix: "slack", Description: "Get all users in the workspace", Groups: sl},
		{ID: "slack__add_reaction", Name: "slack_add_reaction", Prefix: "slack", Description: "Add a reaction emoji to a message", Groups: sl},
	}
}

func ids(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

func TestSearchRanksSmallCatalog(t *testing.T) {
	ix := New(smallCatalog(), nil)
	tests := []struct {
		query string
		// want is a prefix of the expected ranking.
		want []string
	}{
		{"create issue", []string{"github__create_issue"}},
		{"open a new bug", []string{"github__create_issue"}},
		{"show issues", []string{"github__list_issues"}},
		{"list directory", []string{"fs__list_directory", "fs__list_directory_with_sizes"}},
		{"how big are the files in this folder", []string{"fs__list_directory_with_sizes"}},
		{"remove a file", []string{"fs__delete_file"}},
		{"rename notes.txt", []string{"fs__move_file"}},
		{"merge PR", []string{"github__merge_pull_request"}},
		{"open a pull request", []string{"github__create_pull_request", "github__merge_pull_request"}},
		{"send a message to the team channel", []string{"slack__post_message"}},
		{"who is in the slack workspace", []string{"slack__get_users"}},
		{"grep the repos for a function", []string{"github__search_code"}},
		{"save text to a file", []string{"fs__write_file"}},
		{"what's in this folder", []string{"fs__list_directory"}},
		{"list the files in a dir", []string{"fs__list_directory"}},
	}
	for _, tt := range tests {
		got := ids(ix.Search(tt.query, &SearchOptions{Limit: len(tt.want)}))
		if !slices.Equal(got, tt.want) {
			t.Errorf("Search(%q) = %v, want %v", tt.query, got, tt.want)
		}
	}
}

func TestSearchResultsAreSortedAndLimited(t *testing.T) {
	ix := New(smallCatalog(), nil)
	for _, limit := range []int{0, 1, 3, 100} {
		hits := ix.Search("list files issues messages", &SearchOptions{Limit: limit})
		wantMax := limit
		if limit <= 0 {
			wantMax = DefaultLimit
		}
		if len(hits) > wantMax {
			t.Errorf("limit %d: got %d hits", limit, len(hits))
		}
		if !slices.IsSortedFunc(hits, compareHitsForTest) {
			t.Errorf("limit %d: hits not sorted: %v", limit, hits)
		}
	}
}

func compareHitsForTest(a, b Hit) int {
	switch {
	case a.Score > b.Score:
		return -1
	case a.Score < b.Score:
		return 1
	case a.ID < b.ID:
		return -1
	case a.ID > b.ID:
		return 1
	}
	return 0
}

func TestSearchIsDeterministic(t *testing.T) {
	docs := smallCatalog()
	first := New(docs, nil).Search("list the issues and files", &SearchOptions{Limit: 100})
	for i := range 20 {
		// A fresh build each time: map iteration order must not leak into
		// scores or ties.
		got := New(docs, nil).Search("list the issues and files", &SearchOptions{Limit: 100})
		if !slices.Equal(got, first) {
			t.Fatalf("build %d ranked differently:\n%v\nvs\n%v", i, got, first)
		}
	}
}

func TestSearchTiesBreakByID(t *testing.T) {
	docs := []Doc{
		{ID: "b__thing", Name: "thing", Prefix: "b"},
		{ID: "a__thing", Name: "thing", Prefix: "a"},
		{ID: "c__thing", Name: "thing", Prefix: "c"},
	}
	got := ids(New(docs, nil).Search("thing", nil))
	if want := []string{"a__thing", "b__thing", "c__thing"}; !slices.Equal(got, want) {
		t.Errorf("ties ranked %v, want %v", got, want)
	}
}

func TestSearchGroupFilter(t *testing.T) {
	ix := New(smallCatalog(), &Options{GroupParents: map[string]string{"files": "local"}})
	tests := []struct {
		group string
		query string
		want  []string // all hits, in any order
	}{
		{"github", "title", []string{"github__create_issue", "github__update_issue"}}, // github.issues is a child by its dotted name
		{"github", "merge", []string{"github__merge_pull_request"}},
		{"github.issues", "merge", nil},
		{"local", "delete", []string{"fs__delete_file"}}, // files is a child of local by GroupParents
		{"chat", "issue", nil},
		{"nosuchgroup", "file", nil},
	}
	for _, tt := range tests {
		got := ids(ix.Search(tt.query, &SearchOptions{Group: tt.group, Limit: 100}))
		slices.Sort(got)
		want := slices.Clone(tt.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("Search(%q, group %q) = %v, want %v", tt.query, tt.group, got, want)
		}
	}
}

func TestSearchAllowFilter(t *testing.T) {
	ix := New(smallCatalog(), nil)
	onlyRead := func(id string) bool { return id == "fs__read_file" || id == "fs__list_directory" }
	got := ids(ix.Search("file", &SearchOptions{Allow: onlyRead, Limit: 10}))
	for _, id := range got {
		if !onlyRead(id) {
			t.Errorf("Allow let %s through", id)
		}
	}
	if len(got) == 0 {
		t.Error("Allow filtered out every hit")
	}
}

func TestEmptyQuery(t *testing.T) {
	ix := New(smallCatalog(), nil)
	if hits := ix.Search("", nil); hits != nil {
		t.Errorf("empty query without filter = %v, want nil", hits)
	}
	if hits := ix.Search("the of and", nil); hits != nil {
		t.Errorf("stop-word query = %v, want nil", hits)
	}
	got := ids(ix.Search("", &SearchOptions{Group: "chat", Limit: 10}))
	want := []string{"slack__add_reaction", "slack__get_users", "slack__list_channels", "slack__post_message"}
	if !slices.Equal(got, want) {
		t.Errorf("empty query in group chat = %v, want %v (the group, by ID)", got, want)
	}
}

func TestSearchGroups(t *testing.T) {
	ix := New(smallCatalog(), nil)
	tests := []struct {
		query string
		first string
	}{
		{"issue tracking", "github.issues"},
		{"read a file", "files"},
		{"team messaging", "chat"},
		{"pull requests", "github"},
	}
	for _, tt := range tests {
		groups := ix.SearchGroups(tt.query, nil)
		if len(groups) == 0 || groups[0].Name != tt.first {
			t.Errorf("SearchGroups(%q) = %v, want %s first", tt.query, groups, tt.first)
		}
	}
	tools, groups := ix.Find("read a file", &SearchOptions{Limit: 2})
	if len(tools) != 2 || len(groups) == 0 || groups[0].Matches == 0 {
		t.Errorf("Find = %v, %v; want two tools and groups with matches", tools, groups)
	}
}

func TestDuplicateIDsKeepTheFirst(t *testing.T) {
	docs := []Doc{
		{ID: "x__a", Name: "alpha", Description: "first"},
		{ID: "x__a", Name: "beta", Description: "second"},
	}
	ix := New(docs, nil)
	if ix.Len() != 1 {
		t.Fatalf("Len = %d, want 1", ix.Len())
	}
	if hits := ix.Search("beta", nil); len(hits) != 0 {
		t.Errorf("the duplicate was indexed: %v", hits)
	}
}

func TestSearchIsSafeConcurrently(t *testing.T) {
	ix := New(smallCatalog(), nil)
	queries := []string{"create issue", "list files", "post a message", "delete", "pull request"}
	want := map[string][]Hit{}
	for _, q := range queries {
		want[q] = ix.Search(q, &SearchOptions{Limit: 10})
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				q := queries[(g+i)%len(queries)]
				if got := ix.Search(q, &SearchOptions{Limit: 10}); !slices.Equal(got, want[q]) {
					t.Errorf("concurrent Search(%q) = %v, want %v", q, got, want[q])
					return
				}
			}
		}()
	}
	wg.Wait()
}

func FuzzSearch(f *testing.F) {
	for _, seed := range []string{"", "create issue", "HTTPServer", "a/b/c.txt", "https://x.io", "how many", "ÄÖÜ 🙂", "\x00\xff", "pull request pr", "   ", "on call who"} {
		f.Add(seed, 3)
	}
	ix := New(smallCatalog(), nil)
	f.Fuzz(func(t *testing.T, query string, limit int) {
		limit = limit % 50
		hits := ix.Search(query, &SearchOptions{Limit: limit})
		max := limit
		if limit <= 0 {
			max = DefaultLimit
		}
		if len(hits) > max {
			t.Fatalf("Search(%q, %d) returned %d hits", query, limit, len(hits))
		}
		if !slices.IsSortedFunc(hits, compareHitsForTest) {
			t.Fatalf("Search(%q) not sorted: %v", query, hits)
		}
		for _, h := range hits {
			if math.IsNaN(h.Score) || math.IsInf(h.Score, 0) || h.Score < 0 {
				t.Fatalf("Search(%q) scored %s %v", query, h.ID, h.Score)
			}
		}
		_ = ix.SearchGroups(query, &SearchOptions{Limit: limit})
	})
}

func ExampleIndex_Search() {
	ix := New([]Doc{
		{ID: "github__create_issue", Name: "create_issue", Prefix: "github", Description: "Create a new issue in a GitHub repository"},
		{ID: "github__list_issues", Name: "list_issues", Prefix: "github", Description: "List issues in a GitHub repository"},
		{ID: "fs__delete_file", Name: "delete_file", Prefix: "fs", Description: "Delete a file"},
	}, nil)
	for _, h := range ix.Search("open a bug report on github", &SearchOptions{Limit: 1}) {
		fmt.Println(h.ID)
	}
	// Output: github__create_issue
}
