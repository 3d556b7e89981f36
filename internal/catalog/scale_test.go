package catalog_test

import (
	"fmt"
	"runtime"
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
