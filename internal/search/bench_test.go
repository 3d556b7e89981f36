package search

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"
)

// syntheticCatalog builds about n tools by repeating the real catalogs under
// varied prefixes ("github", "github-eu", "github-staging", ..., then
// "github-9", "github-10", ...), as a gateway in front of many similar
// servers would see them.
func syntheticCatalog(tb testing.TB, n int) []Doc {
	tb.Helper()
	base := loadCatalogs(tb)
	suffixes := []string{"", "-eu", "-staging", "-prod", "-dev", "-us", "-test", "-internal"}
	for copyNo := len(suffixes) + 1; len(suffixes)*len(base) < n; copyNo++ {
		suffixes = append(suffixes, fmt.Sprintf("-%d", copyNo))
	}
	var docs []Doc
	for _, suffix := range suffixes {
		for _, d := range base {
			if len(docs) == n {
				return docs
			}
			prefix := d.Prefix + suffix
			c := d
			c.ID = prefix + "__" + d.Name
			c.Prefix = prefix
			c.Groups = []GroupInfo{{Name: prefix}}
			docs = append(docs, c)
		}
	}
	return docs
}

// benchQueries are the requests of every evaluation set.
func benchQueries(tb testing.TB) []string {
	var qs []string
	for _, name := range evalSets {
		for _, c := range loadEval(tb, name) {
			qs = append(qs, c.Query)
		}
	}
	return qs
}

// BenchmarkSearch5000 measures one find_tools ranking over 5,000 tools and
// reports the 99th percentile latency over the evaluation requests.
func BenchmarkSearch5000(b *testing.B) {
	docs := syntheticCatalog(b, 5000)
	ix := New(docs, nil)
	queries := benchQueries(b)
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		ix.Search(queries[i%len(queries)], &SearchOptions{Limit: 5})
		i++
	}
	b.StopTimer()
	b.ReportMetric(float64(percentileLatency(ix, queries, 0.99).Microseconds()), "p99-µs")
	b.ReportMetric(float64(len(docs)), "tools")
}

// BenchmarkFind measures one find_tools ranking (tools and groups, as
// find_tools asks for them: 15 of each) at several catalog sizes, cycling
// through the evaluation requests, and reports the 99th percentile.
func BenchmarkFind(b *testing.B) {
	queries := benchQueries(b)
	for _, n := range []int{1000, 5000, 20000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			ix := New(syntheticCatalog(b, n), nil)
			opts := &SearchOptions{Limit: 15}
			b.ReportAllocs()
			b.ResetTimer()
			i := 0
			for b.Loop() {
				ix.Find(queries[i%len(queries)], opts)
				i++
			}
			b.StopTimer()
			var latencies []time.Duration
			for _, q := range queries {
				start := time.Now()
				ix.Find(q, opts)
				latencies = append(latencies, time.Since(start))
			}
			slices.Sort(latencies)
			b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// BenchmarkFindNameCache compares find over 20,000 tools with and without
// the name bonus cache in one run, so that a loaded machine slows both.
func BenchmarkFindNameCache(b *testing.B) {
	queries := benchQueries(b)
	ix := New(syntheticCatalog(b, 20000), nil)
	for _, exhaustive := range []bool{false, true} {
		b.Run(fmt.Sprintf("exhaustive=%v", exhaustive), func(b *testing.B) {
			ix.exhaustive = exhaustive
			opts := &SearchOptions{Limit: 15}
			i := 0
			for b.Loop() {
				ix.Find(queries[i%len(queries)], opts)
				i++
			}
		})
	}
}

// BenchmarkBuild measures building the index at the catalog sizes a
// gateway restarts with, and reports what the built index leaves live on
// the heap: its objects (what every garbage collection's mark phase walks)
// and bytes.
func BenchmarkBuild(b *testing.B) {
	for _, n := range []int{5000, 20000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			docs := syntheticCatalog(b, n)
			b.ReportAllocs()
			for b.Loop() {
				New(docs, nil)
			}
			b.StopTimer()
			objects, bytes := liveHeap(func() any { return New(docs, nil) })
			b.ReportMetric(float64(objects), "live-objects")
			b.ReportMetric(float64(bytes)/(1<<20), "live-MB")
		})
	}
}

// liveHeap returns the heap objects and bytes that what build returns
// keeps live: the heap after a collection with it, less the heap after
// one without it.
func liveHeap(build func() any) (objects, bytes uint64) {
	var with, without runtime.MemStats
	kept := build()
	runtime.GC()
	runtime.ReadMemStats(&with)
	runtime.KeepAlive(kept)
	kept = nil
	runtime.GC()
	runtime.ReadMemStats(&without)
	return with.HeapObjects - without.HeapObjects, with.HeapAlloc - without.HeapAlloc
}

// BenchmarkBuildRealCatalog measures building the index over the 903
// distinct real tools (no text repeats, unlike the 5,000-tool synthesis).
func BenchmarkBuildRealCatalog(b *testing.B) {
	docs := loadCatalogs(b)
	b.ReportAllocs()
	for b.Loop() {
		New(docs, nil)
	}
	b.ReportMetric(float64(len(docs)), "tools")
}

// percentileLatency runs every query several times and returns the given
// percentile of the single-query latencies.
func percentileLatency(ix *Index, queries []string, p float64) time.Duration {
	const rounds = 5
	var latencies []time.Duration
	for range rounds {
		for _, q := range queries {
			start := time.Now()
			ix.Search(q, &SearchOptions{Limit: 5})
			latencies = append(latencies, time.Since(start))
		}
	}
	slices.Sort(latencies)
	return latencies[int(p*float64(len(latencies)-1))]
}

// TestLatencyReport prints build time and search p50/p99 over 5,000 tools.
// It asserts nothing (timing tests are flaky on shared machines); the
// goals are p99 < 1 ms and build < 50 ms.
func TestLatencyReport(t *testing.T) {
	if testing.Short() {
		t.Skip("timing report")
	}
	docs := syntheticCatalog(t, 5000)
	start := time.Now()
	ix := New(docs, nil)
	build := time.Since(start)
	queries := benchQueries(t)
	percentileLatency(ix, queries, 0.5) // warm up
	t.Logf("%d tools: build %v, search p50 %v, p99 %v",
		len(docs), build.Round(time.Millisecond),
		percentileLatency(ix, queries, 0.5).Round(time.Microsecond),
		percentileLatency(ix, queries, 0.99).Round(time.Microsecond))
}

// BenchmarkFindPhrasings5000 measures one find_tools ranking (tools and
// groups) over 5,000 tools with an agent's first phrasing alone and with
// both phrasings fused (every agent-phrased companion's), and reports the
// 99th percentile latency.
func BenchmarkFindPhrasings5000(b *testing.B) {
	for _, p := range []phrasing{agentFirst, agentFused} {
		b.Run(p.String(), func(b *testing.B) { benchmarkFindPhrasings(b, p) })
	}
}

func benchmarkFindPhrasings(b *testing.B, p phrasing) {
	ix := New(syntheticCatalog(b, 5000), nil)
	var calls [][]string
	for _, name := range evalSets {
		for _, c := range loadEvalWithAgent(b, name) {
			calls = append(calls, c.queries(p))
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		ix.FindPhrasings(calls[i%len(calls)], &SearchOptions{Limit: 5})
		i++
	}
	b.StopTimer()
	var latencies []time.Duration
	for _, phrasings := range calls {
		start := time.Now()
		ix.FindPhrasings(phrasings, &SearchOptions{Limit: 5})
		latencies = append(latencies, time.Since(start))
	}
	slices.Sort(latencies)
	b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds()), "p99-µs")
}
