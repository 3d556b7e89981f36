package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is Linux's USER_HZ, the unit of utime and stime in
// /proc/PID/stat: 100 on every architecture Go supports there.
const clockTicks = 100

// cpuTime is the user plus system CPU time a process has used, from
// /proc/PID/stat (its own threads only, not its children).
func cpuTime(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the CPU time of process %d (the figure needs Linux's /proc): %w", pid, err)
	}
	// The command name (field 2) may hold spaces; the fields after it do not.
	end := strings.LastIndexByte(string(raw), ')')
	if end < 0 {
		return 0, fmt.Errorf("/proc/%d/stat has no command name", pid)
	}
	fields := strings.Fields(string(raw[end+1:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat is too short", pid)
	}
	// fields[0] is field 3 (state); utime and stime are fields 14 and 15.
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}

// cpuTimeFine is the CPU time a process's threads have run, in
// nanoseconds, from each thread's /proc/PID/task/TID/schedstat: cpuTime
// counts in 10 ms ticks, too coarse for a turn of calls that lasts a few
// milliseconds. Threads that have ended are not counted; a Go process
// rarely ends one.
func cpuTimeFine(pid int) (time.Duration, error) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the threads of process %d (the figure needs Linux's /proc): %w", pid, err)
	}
	var total time.Duration
	for _, t := range tasks {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if errors.Is(err, os.ErrNotExist) {
			continue // the thread ended since the directory was read
		}
		if err != nil {
			return 0, fmt.Errorf("reading the CPU time of thread %s of process %d: %w", t.Name(), pid, err)
		}
		first, _, _ := strings.Cut(string(raw), " ")
		ns, err := strconv.ParseInt(first, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/task/%s/schedstat: %w", pid, t.Name(), err)
		}
		total += time.Duration(ns)
	}
	return total, nil
}

// memStats are a Go process's cumulative heap allocation counters and
// what its heap and goroutine stacks hold now.
type memStats struct {
	mallocs, totalAlloc   uint64
	heapInuse, stackInuse uint64
}

// readMemStats reads them from the runtime.MemStats comment lines of a
// process's /debug/pprof/heap?debug=1 (base is http://ADDR); with gc, the
// process collects its garbage first, so the heap in use is what is live.
func readMemStats(ctx context.Context, base string, gc bool) (memStats, error) {
	if base == "" {
		return memStats{}, errors.New("the process serves no profiler")
	}
	query := "?debug=1"
	if gc {
		query += "&gc=1"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/debug/pprof/heap"+query, nil)
	if err != nil {
		return memStats{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return memStats{}, fmt.Errorf("reading allocation counts: %w", err)
	}
	defer resp.Body.Close()
	var m memStats
	found := 0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		for _, f := range []struct {
			prefix string
			into   *uint64
		}{{"# Mallocs = ", &m.mallocs}, {"# TotalAlloc = ", &m.totalAlloc}, {"# HeapInuse = ", &m.heapInuse}, {"# Stack = ", &m.stackInuse}} {
			if rest, ok := strings.CutPrefix(line, f.prefix); ok {
				inuse, _, _ := strings.Cut(rest, "/") // "# Stack = inuse / sys"
				if v, err := strconv.ParseUint(strings.TrimSpace(inuse), 10, 64); err == nil {
					*f.into = v
					found++
				}
			}
		}
	}
	if found < 4 {
		return memStats{}, fmt.Errorf("%s/debug/pprof/heap?debug=1 lacks the Mallocs, TotalAlloc, HeapInuse or Stack line", base)
	}
	return m, sc.Err()
}

// readGoroutines reads how many goroutines a process runs, from the first
// line of its /debug/pprof/goroutine?debug=1 ("goroutine profile: total N").
func readGoroutines(ctx context.Context, base string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/debug/pprof/goroutine?debug=1", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("reading the goroutine count: %w", err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	if sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "goroutine profile: total "); ok {
			return strconv.Atoi(strings.TrimSpace(rest))
		}
	}
	return 0, fmt.Errorf("%s/debug/pprof/goroutine?debug=1 does not start with the goroutine count", base)
}

// profileUnderLoad keeps callers calls in flight on a side for d while its
// process records a CPU profile, and takes its allocation profile before and
// after, writing toolfold-NAME-{cpu,allocs-before,allocs}.pprof into dir.
// Read them with `go tool pprof -top FILE` and
// `go tool pprof -sample_index=alloc_space -top -base BEFORE AFTER`.
func profileUnderLoad(ctx context.Context, s *side, callers int, d time.Duration, dir, name string) ([]string, error) {
	if s.process.pprof == "" {
		return nil, fmt.Errorf("the %s side serves no profiler", s.name)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating the profile directory: %w", err)
	}
	prefix := filepath.Join(dir, "toolfold-"+name+"-")
	fetch := func(path, file string) error { return saveProfile(ctx, s.process.pprof+path, file) }
	files := []string{prefix + "allocs-before.pprof", prefix + "cpu.pprof", prefix + "allocs.pprof"}
	if err := fetch("/debug/pprof/allocs", files[0]); err != nil {
		return nil, err
	}
	cpu := make(chan error, 1)
	go func() {
		cpu <- fetch(fmt.Sprintf("/debug/pprof/profile?seconds=%d", int(d.Seconds())), files[1])
	}()
	var load throughputSide
	loadErr := load.run(ctx, s, callers, d+500*time.Millisecond)
	if err := errors.Join(<-cpu, loadErr); err != nil {
		return nil, err
	}
	if err := fetch("/debug/pprof/allocs", files[2]); err != nil {
		return nil, err
	}
	return files, nil
}

// saveProfile writes what a profiler URL answers into file.
func saveProfile(ctx context.Context, url, file string) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return fmt.Errorf("creating the profile directory: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("fetching %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fetching %s: %s", url, resp.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
