package meta

import (
	"testing"

	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/view"
)

// BenchmarkNewDiscovery20k builds the search index and summaries over
// 20,000 recorded tools, as every gateway start and catalog update does.
func BenchmarkNewDiscovery20k(b *testing.B) {
	space, err := view.NewSpace(catalogtest.Build(b, catalogtest.Scaled(b, 20000)), nil)
	if err != nil {
		b.Fatal(err)
	}
	e, err := expose.Build(space, &expose.Options{Mode: expose.Search})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if d := NewDiscovery(DefaultNames(), e, nil); d.index == nil {
			b.Fatal("no index")
		}
	}
}
