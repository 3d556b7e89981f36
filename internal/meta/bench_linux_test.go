//go:build linux

package meta

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

// threadCPU returns the CPU time the calling OS thread has used
// (RUSAGE_THREAD): on a shared machine the wall time per op counts the time
// other processes ran, the thread's CPU time does not.
func threadCPU(tb testing.TB) time.Duration {
	const rusageThread = 1
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		tb.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measureCPU runs op b.N times on one locked thread and reports that
// thread's CPU time per op (cpu-µs/op). The garbage collector's background
// work runs on other threads and is not counted; allocs/op tells of it.
func measureCPU(b *testing.B, op func(i int)) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	start := threadCPU(b)
	i := 0
	for b.Loop() {
		op(i)
		i++
	}
	b.ReportMetric(float64((threadCPU(b)-start).Microseconds())/float64(b.N), "cpu-µs/op")
}
