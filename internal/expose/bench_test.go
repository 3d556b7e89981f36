package expose_test

import (
	"encoding/json"
	"runtime"
	"testing"

	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/view"
)

// BenchmarkRoute measures finding a wire tool by name (goal: under 100 ns).
func BenchmarkRoute(b *testing.B) {
	cat := catalogtest.Synthetic(b, 1000, 50)
	e, _ := build(b, cat, expose.Options{Mode: expose.Groups})
	names := make([]string, 0, 1000)
	for _, t := range cat.Tools() {
		names = append(names, e.FlatWire(t).Name)
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, ok := e.Route(names[i%len(names)]); !ok {
			b.Fatal("no route")
		}
	}
}

// BenchmarkEnableAndList measures enabling one group and rendering the
// resulting list over 1,000 tools in 50 groups (goal: under 1 ms).
func BenchmarkEnableAndList(b *testing.B) {
	cat := catalogtest.Synthetic(b, 1000, 50)
	space, _ := view.NewSpace(cat, nil)
	e, err := expose.Build(space, &expose.Options{Mode: expose.Groups})
	if err != nil {
		b.Fatal(err)
	}
	groups := []string{"server07"}
	for b.Loop() {
		v := space.New()
		v.Enable(groups)
		if len(e.Listed(v.Snapshot())) != 20 {
			b.Fatal("wrong list")
		}
	}
}

// BenchmarkParams reads every parameter of 5,000 recorded tools, as the
// search index does when it is built.
func BenchmarkParams(b *testing.B) {
	cat := catalogtest.Build(b, catalogtest.Scaled(b, 5000))
	e, _ := build(b, cat, expose.Options{Mode: expose.Search})
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for _, t := range cat.Tools() {
			n += len(e.FlatWire(t).Params())
		}
		if n == 0 {
			b.Fatal("no parameters read")
		}
	}
}

// BenchmarkParamTexts reads what the search index needs of every parameter
// of 5,000 recorded tools, into two slices reused across tools, as
// meta.NewDiscovery does.
func BenchmarkParamTexts(b *testing.B) {
	cat := catalogtest.Build(b, catalogtest.Scaled(b, 5000))
	e, _ := build(b, cat, expose.Options{Mode: expose.Search})
	b.ReportAllocs()
	var texts []expose.ParamText
	var vals []string
	for b.Loop() {
		n := 0
		for _, t := range cat.Tools() {
			texts, vals = e.FlatWire(t).AppendParamTexts(texts[:0], vals[:0])
			n += len(texts)
		}
		if n == 0 {
			b.Fatal("no parameters read")
		}
	}
}

// BenchmarkBuild20k builds the search mode's exposure of 20,000 recorded
// tools, as a gateway does on every start, and reports the heap it keeps
// (live-B/tool, after a collection, less the catalog's); schemas are JSON
// text, as upstreams' are.
func BenchmarkBuild20k(b *testing.B) {
	spec := catalogtest.Scaled(b, 20000)
	for _, t := range spec.Tools {
		// Schemas as the gateway holds them: the upstream's JSON text.
		raw, err := json.Marshal(t.Def.InputSchema)
		if err != nil {
			b.Fatal(err)
		}
		t.Def.InputSchema = json.RawMessage(raw)
	}
	cat := catalogtest.Build(b, spec)
	space := viewSpace(b, cat)
	b.ReportAllocs()
	var live uint64
	for b.Loop() {
		base := liveHeap()
		e, err := expose.Build(space, &expose.Options{Mode: expose.Search})
		if err != nil {
			b.Fatal(err)
		}
		live = liveHeap() - base
		runtime.KeepAlive(e)
	}
	b.ReportMetric(float64(live)/20000, "live-B/tool")
}

func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
