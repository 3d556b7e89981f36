package meta

import (
	"encoding/json"
	"testing"

	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/view"
)

// TestOverSharesOneIndex: a gateway serving search and groups over one
// catalog indexes it once; the shared index answers as one of its own
// would, and an exposure that does not share the flat wire tools gets
// its own index.
func TestOverSharesOneIndex(t *testing.T) {
	space, err := view.NewSpace(catalogtest.Tree(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	build := func(m expose.Mode, share *expose.Exposure) *expose.Exposure {
		e, err := expose.Build(space, &expose.Options{Mode: m, Share: share})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	groups := build(expose.Groups, nil)
	first := NewDiscovery(DefaultNames(), groups, nil)
	for _, tc := range []struct {
		name  string
		expo  *expose.Exposure
		share bool
	}{
		{"shares the flat tools", build(expose.Search, groups), true},
		{"its own flat tools", build(expose.Search, nil), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			over := first.Over(tc.expo, nil)
			if got := over.index == first.index; got != tc.share {
				t.Errorf("index shared = %v, want %v", got, tc.share)
			}
			if over.expo != tc.expo {
				t.Errorf("Over answers over another exposure")
			}
			own := NewDiscovery(DefaultNames(), tc.expo, nil)
			snap := space.New().Snapshot()
			found := 0
			for _, q := range []string{"branches", "repositories code", "documents"} {
				a, errA := over.Find(FindArgs{Query: q}, snap)
				b, errB := own.Find(FindArgs{Query: q}, snap)
				if errA != nil || errB != nil {
					t.Fatalf("%q: %v, %v", q, errA, errB)
				}
				ja, _ := json.Marshal(a)
				jb, _ := json.Marshal(b)
				if string(ja) != string(jb) {
					t.Errorf("%q: shared index found\n%s\nits own\n%s", q, ja, jb)
				}
				found += len(a.Tools)
			}
			if found == 0 {
				t.Fatal("no query found a tool: the comparison proves nothing")
			}
		})
	}
}
