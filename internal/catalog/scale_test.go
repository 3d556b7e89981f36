package catalog_test

import (
	"encoding/json"
	"fmt"
	"path"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
)

// scales are the catalog sizes the scale benchmarks build: the recorded
// servers repeated under new names (catalogtest.Scaled).
var scales = []int{1000, 5000, 20000}

// BenchmarkBuild times catalog.Build at each scale, a group per server. The
// tools are reused across iterations: Build resets what it fills in. Its
// per-tool metrics stay flat from 5k to 20k tools if the build is linear.
// cpu-ns/tool is the process's CPU time (GC included), which a shared
// machine's load disturbs less than the wall time of ns/op.
func BenchmarkBuild(b *testing.B) {
	for _, n := range scales {
		spec := catalogtest.Scaled(b, n)
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			runtime.GC() // the setup's garbage is not the build's
			cpu0 := cpuTime(b)
			for b.Loop() {
				if _, err := catalog.Build(spec); err != nil {
					b.Fatal(err)
				}
			}
			cpu := cpuTime(b) - cpu0
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/tool")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(n), "cpu-ns/tool")
		})
	}
}

// cpuTime is the process's user and system time so far.
func cpuTime(tb testing.TB) time.Duration {
	tb.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestRulesMatchAsAScanWould checks the indexed membership rules against a
// scan of every tool, on a catalog of many servers, with patterns that start
// with a wildcard, a class or an escape, and a tool in many groups.
func TestRulesMatchAsAScanWould(t *testing.T) {
	spec := catalogtest.Scaled(t, 2000)
	globs := []string{"*__get_*", "git[hl]*__*", "github-2__list_*", `sla\ck__*`, "s?ripe__*", "*", "zz*"}
	prefixes := []string{"github__", "g", "notion-2__", "", "qq"}
	for i, g := range globs {
		spec.Groups = append(spec.Groups, catalog.GroupSpec{ID: catalog.GroupID(fmt.Sprintf("glob%d", i)), Members: catalog.Members{Globs: []string{g}}})
	}
	for i, p := range prefixes {
		spec.Groups = append(spec.Groups, catalog.GroupSpec{ID: catalog.GroupID(fmt.Sprintf("prefix%d", i)), Members: catalog.Members{Prefixes: []string{p}}})
	}
	res, err := catalog.Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	cat := res.Catalog
	check := func(id string, match func(string) bool) {
		t.Helper()
		g, ok := cat.Group(catalog.GroupID(id))
		if !ok {
			t.Fatalf("group %q missing", id)
		}
		var want, got []string
		for _, tl := range cat.Tools() {
			if match(string(tl.ID)) {
				want = append(want, string(tl.ID))
			}
		}
		for _, tl := range g.Tools {
			got = append(got, string(tl.ID))
		}
		if !slices.Equal(got, want) {
			t.Errorf("group %q has %d tools, a scan finds %d (first difference near %v / %v)", id, len(got), len(want), head(got), head(want))
		}
	}
	for i, g := range globs {
		check(fmt.Sprintf("glob%d", i), func(id string) bool { ok, _ := path.Match(g, id); return ok })
	}
	for i, p := range prefixes {
		check(fmt.Sprintf("prefix%d", i), func(id string) bool { return strings.HasPrefix(id, p) })
	}
	for _, tl := range cat.Tools() {
		if !slices.IsSortedFunc(tl.Groups, func(a, b *catalog.Group) int { return a.Index - b.Index }) {
			t.Fatalf("tool %q lists its groups out of catalog order", tl.ID)
		}
		for _, g := range tl.Groups {
			if !slices.Contains(g.Tools, tl) {
				t.Fatalf("tool %q names group %q, which does not hold it", tl.ID, g.ID)
			}
		}
	}
	if !slices.IsSortedFunc(cat.Tools(), func(a, b *catalog.Tool) int { return strings.Compare(string(a.ID), string(b.ID)) }) {
		t.Error("the catalog's tools are not sorted by ID")
	}
}

func head(s []string) []string { return s[:min(3, len(s))] }

// BenchmarkMemory reports the live heap per tool at each scale, after a
// GC, in three parts: the tools' definitions as an MCP client decodes them
// (def-B/tool), of which their schemas decoded into generic maps
// (schema-B/tool), and what a built catalog adds (catalog-B/tool). For
// comparison, schema-json-B/tool is the size of the same schemas as JSON:
// what keeping them raw would hold. Each iteration decodes and builds
// afresh; the figures are the last one's.
//
// Where the heap goes, by allocation site:
//
//	go test -run '^$' -bench 'Memory/tools=20000' -benchtime 1x -memprofile /tmp/mem.pprof -memprofilerate 4096 ./internal/catalog/
//	go tool pprof -sample_index=inuse_space -top /tmp/mem.pprof
func BenchmarkMemory(b *testing.B) {
	for _, n := range scales {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			var def, schema, cat, raw uint64
			for b.Loop() {
				base := liveHeap()
				spec := catalogtest.Scaled(b, n)
				withDefs := liveHeap()
				res, err := catalog.Build(spec)
				if err != nil {
					b.Fatal(err)
				}
				built := liveHeap()
				raw = 0
				for _, t := range spec.Tools {
					for _, sch := range []any{t.Def.InputSchema, t.Def.OutputSchema} {
						if sch != nil {
							js, err := json.Marshal(sch)
							if err != nil {
								b.Fatal(err)
							}
							raw += uint64(len(js))
						}
					}
				}
				for _, t := range spec.Tools {
					t.Def.InputSchema, t.Def.OutputSchema = nil, nil
				}
				withoutSchemas := liveHeap()
				runtime.KeepAlive(res)
				def, cat, schema = withDefs-base, built-withDefs, built-withoutSchemas
			}
			b.ReportMetric(float64(def)/float64(n), "def-B/tool")
			b.ReportMetric(float64(schema)/float64(n), "schema-B/tool")
			b.ReportMetric(float64(cat)/float64(n), "catalog-B/tool")
			b.ReportMetric(float64(raw)/float64(n), "schema-json-B/tool")
		})
	}
}

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
