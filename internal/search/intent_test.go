package search

import (
	"testing"
)

func TestToolIntent(t *testing.T) {
	tests := []struct {
		name string
		want intent
	}{
		{"create_issue", intentCreate},
		{"list_issues", intentRead},
		{"TwilioApiV2010--UpdateCall", intentUpdate},
		{"hubspot-batch-create-associations", intentCreate},
		{"API-post-page", intentCreate},   // an HTTP method alone names the operation
		{"API-post-search", intentSearch}, // but yields to the verb after it
		{"API-patch-block-children", intentUpdate},
		{"kubectl_delete", intentDelete},
		{"cancel_subscription", intentStop},
		{"exec_in_pod", intentRun},
		{"maps_geocode", intentNone},
		{"take_screenshot", intentNone},
	}
	for _, tt := range tests {
		var stems []string
		splitWords(tt.name, func(w string) { stems = append(stems, stem(w)) })
		if got := toolIntent(stems); got != tt.want {
			t.Errorf("toolIntent(%q) = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestRequestIntents(t *testing.T) {
	tests := []struct {
		query string
		want  intentSet
	}{
		{"make a 20% discount code", setOf(intentCreate)},
		{"which databases exist", setOf(intentRead, intentSearch)},
		{"forget everything about Bob", setOf(intentDelete)},
		{"hang up the call", setOf(intentStop)},
		{"set up a new project", setOf(intentCreate)},
		{"how many documents are there", setOf(intentRead, intentSearch)},
		{"rename the app", setOf(intentUpdate)},
		{"show the logs", setOf(intentRead)}, // "logs" is a noun, not a verb
		{"coffee shops near me", 0},
		{"what processes are running", setOf(intentRead, intentSearch)},
		{"open a ticket for the outage", setOf(intentCreate)},
		{"open the file", 0},
		{"file a bug", setOf(intentCreate)},
	}
	for _, tt := range tests {
		ix := New(nil, nil)
		if got := ix.parseQuery(tt.query).intents; got != tt.want {
			t.Errorf("intents of %q = %b, want %b", tt.query, got, tt.want)
		}
	}
}

func TestIntentFactor(t *testing.T) {
	ix := New(nil, nil)
	tests := []struct {
		tool intent
		want intentSet
		cmp  int // -1 penalised, 0 neutral, 1 boosted
	}{
		{intentCreate, setOf(intentCreate), 1},
		{intentRead, setOf(intentCreate), -1},  // list_coupons for "make a coupon"
		{intentUpdate, setOf(intentCreate), 0}, // create_or_update, kv_put
		{intentDelete, setOf(intentStop), 0},   // remove a participant to stop it
		{intentRead, setOf(intentRead, intentSearch), 1},
		{intentRun, setOf(intentRead, intentSearch), -1}, // start_process for "what is running"
		{intentNone, setOf(intentDelete), 0},
		{intentDelete, 0, 0},
	}
	for _, tt := range tests {
		f := ix.intentFactor(tt.tool, tt.want)
		got := 0
		if f > 1 {
			got = 1
		} else if f < 1 {
			got = -1
		}
		if got != tt.cmp {
			t.Errorf("intentFactor(%d, %b) = %.2f, want sign %d", tt.tool, tt.want, f, tt.cmp)
		}
	}
}

// TestIntentOrdersSiblings checks the effect on a small fixed catalog:
// siblings acting on the same object are ordered by the operation asked.
func TestIntentOrdersSiblings(t *testing.T) {
	ix := New(smallCatalog(), nil)
	tests := []struct {
		query string
		want  []string
	}{
		{"file a bug about the login page", []string{"github__create_issue"}},
		{"which issues are still open", []string{"github__list_issues"}},
		{"get rid of old.txt", []string{"fs__delete_file"}},
		{"edit the issue title", []string{"github__update_issue"}},
	}
	for _, tt := range tests {
		got := ids(ix.Search(tt.query, &SearchOptions{Limit: len(tt.want)}))
		if len(got) < len(tt.want) || got[0] != tt.want[0] {
			t.Errorf("%q: got %v, want %v first", tt.query, got, tt.want)
		}
	}
}
