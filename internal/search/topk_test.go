package search

import (
	"fmt"
	"slices"
	"testing"
)

// TestFindKeepsTheFirstOfTheFullRanking checks the partial selection: the
// tools and groups a search keeps for a small limit are the first of those
// it keeps for a limit above any count, in the same order and with the
// same scores, with and without a group filter, and a query asked again
// (its scratch reused from the pool) ranks the same.
func TestFindKeepsTheFirstOfTheFullRanking(t *testing.T) {
	docs := syntheticCatalog(t, 3000)
	for i := range docs {
		docs[i].Groups = append(docs[i].Groups, GroupInfo{Name: fmt.Sprintf("%s.part%d", docs[i].Prefix, i%3)})
	}
	ix := New(docs, nil)
	queries := benchQueries(t)
	queries = queries[:min(len(queries), 120)]
	for _, group := range []string{"", docs[0].Prefix, docs[0].Prefix + ".part1"} {
		for _, q := range queries {
			allTools, allGroups := ix.Find(q, &SearchOptions{Limit: len(docs) + 1, Group: group})
			for _, limit := range []int{1, 5, 15} {
				tools, groups := ix.Find(q, &SearchOptions{Limit: limit, Group: group})
				if want := allTools[:min(limit, len(allTools))]; !slices.Equal(tools, want) {
					t.Fatalf("group %q, %q, limit %d: tools %v, want the first of the full ranking %v", group, q, limit, tools, want)
				}
				if want := allGroups[:min(limit, len(allGroups))]; !slices.Equal(groups, want) {
					t.Fatalf("group %q, %q, limit %d: groups %v, want the first of the full ranking %v", group, q, limit, groups, want)
				}
			}
			for i, g := range allGroups {
				if prev := allGroups[max(i-1, 0)]; g.Score <= 0 || (i > 0 && !(prev.Score > g.Score || prev.Score == g.Score && prev.Name < g.Name)) {
					t.Fatalf("group %q, %q: groups not ranked by score then name at %d: %v", group, q, i, allGroups)
				}
				if group != "" && g.Name != group && !slices.Contains(ancestry(g.Name, nil), group) {
					t.Fatalf("group %q, %q: group %s is outside it", group, q, g.Name)
				}
			}
		}
	}
}

// TestGroupTiesBreakByName: groups of equal score come in name order,
// whatever order the catalog lists them in.
func TestGroupTiesBreakByName(t *testing.T) {
	var docs []Doc
	for _, g := range []string{"delta", "alpha", "charlie", "bravo"} {
		docs = append(docs, Doc{ID: g + "__send_fax", Name: "send_fax", Prefix: g, Description: "Send a fax", Groups: []GroupInfo{{Name: g}}})
	}
	ix := New(docs, nil)
	for limit, want := range map[int][]string{1: {"alpha"}, 3: {"alpha", "bravo", "charlie"}, 10: {"alpha", "bravo", "charlie", "delta"}} {
		_, groups := ix.Find("send fax", &SearchOptions{Limit: limit})
		var names []string
		for _, g := range groups {
			names = append(names, g.Name)
		}
		if !slices.Equal(names, want) {
			t.Errorf("limit %d: groups %v, want %v", limit, names, want)
		}
	}
}
