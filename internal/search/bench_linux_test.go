//go:build linux

package search

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

// rusageThread is RUSAGE_THREAD of Linux's getrusage: the calling
// thread's own CPU time.
const rusageThread = 1

// threadCPU returns the CPU time the calling OS thread has used.
func threadCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		tb.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFindThreadCPU measures one find_tools ranking over 20,000
// tools, as BenchmarkFind does, and reports the CPU time its thread used
// per ranking (cpu-µs/op): on a shared machine the wall time per op
// counts the time other processes ran, the thread's CPU time does not.
// Compare builds by interleaving their runs and taking each one's best.
func BenchmarkFindThreadCPU(b *testing.B) {
	queries := benchQueries(b)
	ix := New(syntheticCatalog(b, 20000), nil)
	opts := &SearchOptions{Limit: 15}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	start := threadCPU(b)
	i := 0
	for b.Loop() {
		ix.Find(queries[i%len(queries)], opts)
		i++
	}
	used := threadCPU(b) - start
	b.ReportMetric(float64(used.Microseconds())/float64(b.N), "cpu-µs/op")
}
