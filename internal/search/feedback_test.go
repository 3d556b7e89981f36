package search

import (
	"slices"
	"testing"
)

func TestFeedbackReRanksSmallCatalog(t *testing.T) {
	tune := defaultTuning
	tune.feedbackDocs, tune.feedbackTerms, tune.feedbackWeight = 2, 3, 0.2
	on := newIndex(smallCatalog(), nil, tune)
	off := New(smallCatalog(), nil)
	tests := []struct {
		query string
		want  []string // prefix of the ranking with feedback
	}{
		{"create issue", []string{"github__create_issue"}},
		{"remove a file", []string{"fs__delete_file"}},
		// Feedback keeps the issue tools on top but drifts among them:
		// update_issue shares the most words (title, body, state) with
		// the first two, and rises above create_issue for "bug" — the
		// kind of reordering that cost recall on the dev set.
		{"bug", []string{"github__update_issue", "github__create_issue", "github__list_issues"}},
	}
	for _, tt := range tests {
		got := ids(on.Search(tt.query, &SearchOptions{Limit: len(tt.want)}))
		if !slices.Equal(got, tt.want) {
			t.Errorf("Search(%q) = %v, want %v (without feedback: %v)", tt.query, got, tt.want, ids(off.Search(tt.query, &SearchOptions{Limit: len(tt.want)})))
		}
		if again := ids(on.Search(tt.query, &SearchOptions{Limit: len(tt.want)})); !slices.Equal(got, again) {
			t.Errorf("Search(%q) is not deterministic: %v then %v", tt.query, got, again)
		}
	}
}
