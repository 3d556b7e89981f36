package search

import (
	"fmt"
	"slices"
	"testing"
)

func TestTermTable(t *testing.T) {
	tests := []struct {
		name  string
		stems []string
		miss  []string
	}{
		{"empty", nil, []string{"", "list"}},
		{"one", []string{"list"}, []string{"", "lis", "lists"}},
		{"empty stem", []string{"", "a"}, []string{"b"}},
		{"many", func() []string {
			var s []string
			for i := range 1000 {
				s = append(s, fmt.Sprintf("w%d", i))
			}
			return s
		}(), []string{"w1000", "w", "x1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table := newTermTable(tt.stems)
			if table.len() != len(tt.stems) {
				t.Fatalf("len = %d, want %d", table.len(), len(tt.stems))
			}
			for want, s := range tt.stems {
				got, ok := table.lookup(s)
				if !ok || got != int32(want) {
					t.Errorf("lookup(%q) = %d, %v; want %d, true", s, got, ok, want)
				}
				if table.stems.get(int32(want)) != s {
					t.Errorf("stem %d = %q, want %q", want, table.stems.get(int32(want)), s)
				}
			}
			for _, s := range tt.miss {
				if got, ok := table.lookup(s); ok {
					t.Errorf("lookup(%q) = %d, true; want a miss", s, got)
				}
			}
		})
	}
}

func TestFlatLists(t *testing.T) {
	lists, fill := newFlatLists[int32]([]int32{2, 0, 1})
	fill.put(2, 7)
	fill.put(0, 3)
	fill.put(0, 5)
	want := [][]int32{{3, 5}, nil, {7}}
	if lists.len() != len(want) {
		t.Fatalf("len = %d, want %d", lists.len(), len(want))
	}
	for k, w := range want {
		got := lists.of(int32(k))
		if !slices.Equal(got, w) {
			t.Errorf("list %d = %v, want %v", k, got, w)
		}
	}
}

// TestIndexHeapObjects requires the index to keep no heap object per doc
// or per term (layout.go): each one is work for every garbage collection
// of a gateway that holds the index. A 5,000-tool index kept about 17,000
// before its structures were made flat.
func TestIndexHeapObjects(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 5,000-tool index")
	}
	docs := syntheticCatalog(t, 5000)
	objects, _ := liveHeap(func() any { return New(docs, nil) })
	if limit := uint64(len(docs) / 4); objects > limit {
		t.Errorf("a %d-tool index keeps %d heap objects, want at most %d", len(docs), objects, limit)
	}
}
