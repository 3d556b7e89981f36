package gateway

import (
	"slices"
	"strconv"
	"testing"
)

// FuzzPaginate: any cursor is either refused or yields a page of the list
// in order; following nextCursor from the start visits every item once.
func FuzzPaginate(f *testing.F) {
	for _, seed := range []string{"", "YQ", "!!", "enp6", "AAAA"} {
		f.Add(seed, uint8(5), uint8(2))
	}
	f.Fuzz(func(t *testing.T, cursor string, n, size uint8) {
		pageSize := 1 + int(size)%8
		items := make([]string, int(n))
		for i := range items {
			items[i] = strconv.Itoa(1000 + i)
		}
		key := func(s string) string { return s }
		page, next, err := paginate(items, key, cursor, pageSize)
		if err == nil && (!slices.IsSorted(page) || len(page) > pageSize) {
			t.Fatalf("page %v is out of order", page)
		}
		if next != "" && len(page) == 0 {
			t.Fatalf("an empty page with a next cursor")
		}
		var seen []string
		for c, pages := "", 0; ; pages++ {
			p, nc, err := paginate(items, key, c, pageSize)
			if err != nil || pages > len(items)+1 {
				t.Fatalf("following the cursors: %v after %d pages", err, pages)
			}
			seen = append(seen, p...)
			if nc == "" {
				break
			}
			c = nc
		}
		if !slices.Equal(seen, items) {
			t.Fatalf("the pages hold %v, want %v", seen, items)
		}
	})
}
