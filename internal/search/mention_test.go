package search

import (
	"testing"
)

func TestServerMentions(t *testing.T) {
	ix := New(smallCatalog(), nil)
	tests := []struct {
		word   string
		server string // "" when the word names no server
	}{
		{"github", "github"},
		{"slack", "slack"},
		{"fs", ""}, // too short to be taken for a name
		{"issue", ""},
	}
	for _, tt := range tests {
		m, ok := ix.mentionOf(stem(tt.word))
		got := ""
		if ok {
			for i := range int32(ix.Len()) {
				if ix.hot.server[i] == m.server {
					got = ix.id(i)[:len(tt.server)]
					break
				}
			}
		}
		if got != tt.server {
			t.Errorf("%q names server %q, want %q", tt.word, got, tt.server)
		}
	}
}

// TestServerMentionOrders checks that naming a server prefers its tools
// on a small fixed catalog where two servers offer the same operation.
func TestServerMentionOrders(t *testing.T) {
	docs := []Doc{
		{ID: "github__create_issue", Name: "create_issue", Prefix: "github", Description: "Create a new issue in a repository"},
		{ID: "github__list_issues", Name: "list_issues", Prefix: "github", Description: "List issues in a repository"},
		{ID: "gitlab__create_issue", Name: "create_issue", Prefix: "gitlab", Description: "Create a new issue in a project"},
		{ID: "gitlab__list_issues", Name: "list_issues", Prefix: "gitlab", Description: "List issues in a project"},
	}
	ix := New(docs, nil)
	tests := []struct {
		query string
		want  string
	}{
		{"report a new bug on gitlab", "gitlab__create_issue"},
		{"add a bug on github", "github__create_issue"},
		{"which issues are open in gitlab", "gitlab__list_issues"},
	}
	for _, tt := range tests {
		got := ids(ix.Search(tt.query, &SearchOptions{Limit: 1}))
		if len(got) == 0 || got[0] != tt.want {
			t.Errorf("%q: got %v, want %s first", tt.query, got, tt.want)
		}
	}
}
