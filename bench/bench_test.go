package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestBenchmarkHarness runs every measurement in a tiny configuration and
// checks that the harness produces sane numbers: positive times, finite
// ratios, the expected tool counts, a cached start that spawned nothing and
// an uncached one that spawned every server, and no process left behind.
// It never checks a speed goal: those are measured, not asserted.
func TestBenchmarkHarness(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping in -short mode: builds toolfold and starts servers")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	h, err := newHarness(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.cleanup)

	const servers = 3
	params := Params{
		Calls: CallsParams{Transports: transports, Calls: 20, Warmup: 5, Block: 7,
			Callers: []int{2, 4}, Duration: 400 * time.Millisecond, Rounds: 2,
			// This checkout stands in for another: a side of its own over stdio.
			Baseline: h.root},
		Startup:     StartupParams{Servers: servers, Runs: 2, Settle: 100 * time.Millisecond},
		Memory:      MemoryParams{Sessions: 10, Concurrency: 4, Servers: servers, Modes: []string{"groups", "search"}, Protocol: "2025-11-25", Settle: 100 * time.Millisecond},
		Scale:       ScaleParams{Tools: []int{30, 90}, Batch: 2, Mode: "search", ProfileTime: time.Second, FindCalls: 60, OneServer: 1200},
		Reload:      ReloadParams{Tools: []int{30}, Batch: 2, Runs: 2},
		Profile:     t.TempDir(),
		ProfileTime: time.Second,
	}
	r, err := run(ctx, h, params, nil)
	if err != nil {
		t.Fatal(err)
	}

	if len(r.Calls) != len(transports) {
		t.Fatalf("calls were measured over %d transports, want %d", len(r.Calls), len(transports))
	}
	for _, c := range r.Calls {
		names := []string{}
		for _, sd := range c.Sides {
			names = append(names, sd.Name)
			p := sd.Latency
			if !(p.P50 > 0 && p.P50 <= p.P90 && p.P90 <= p.P99 && p.P99 <= p.Max && p.Mean > 0) {
				t.Errorf("%s, %s side: latency percentiles are not positive and ordered: %+v", c.Transport, sd.Name, p)
			}
			if sd.RSS <= 0 {
				t.Errorf("%s, %s side: RSS %d: not sane", c.Transport, sd.Name, sd.RSS)
			}
			if got := throughputCallers(sd); !slices.Equal(got, params.Calls.Callers) {
				t.Errorf("%s, %s side: throughput measured with %v callers, want %v", c.Transport, sd.Name, got, params.Calls.Callers)
			}
			for _, tp := range sd.Throughput {
				what := fmt.Sprintf("%s, %s side, %d callers", c.Transport, sd.Name, tp.Callers)
				if tp.Calls <= 0 || tp.CallsPerSec <= 0 {
					t.Errorf("%s: throughput counted no calls: %+v", what, tp)
				}
				checkRatio(t, what+" throughput", tp.Ratio)
				// Every side's process serves the profiler, so allocations
				// are known; a call allocates something in any Go process.
				if tp.AllocsPerCall <= 0 || tp.BytesPerCall <= 0 {
					t.Errorf("%s: allocations per call are not positive: %v allocs, %v bytes", what, tp.AllocsPerCall, tp.BytesPerCall)
				}
				if tp.CPUMicrosPerCall < 0 {
					t.Errorf("%s: CPU per call %v µs: not sane", what, tp.CPUMicrosPerCall)
				}
				// Every side reads its requests and writes its answers.
				if tp.SyscallsPerCall <= 0 {
					t.Errorf("%s: %v system calls per call: /proc/PID/io was misread", what, tp.SyscallsPerCall)
				}
			}
		}
		want := []string{sideDirect, sideCopy, sideSDKRelay, sideToolfold, sideBaseline}
		if c.Transport == transportHTTP {
			want = []string{sideDirect, sideCopy, sideSDKRelay, sideToolfold, sideSession}
		}
		if !slices.Equal(names, want) {
			t.Errorf("%s sides are %q, want %q", c.Transport, names, want)
		}
	}
	// The toolfold side used CPU over its turns: thousands of calls cannot
	// all fit in one clock tick, so a zero means /proc was misread.
	for _, c := range r.Calls {
		for _, tp := range c.Side(sideToolfold).Throughput {
			if tp.CPUMicrosPerCall <= 0 {
				t.Errorf("toolfold over %s with %d callers used no CPU per call: %+v", c.Transport, tp.Callers, tp)
			}
			// The byte relay may use less than a clock tick in so short a
			// run; where it used some, the ratio is the two figures'.
			relay := c.Side(sideCopy).At(tp.Callers).CPUMicrosPerCall
			if want := ratio(tp.CPUMicrosPerCall, relay); tp.CPUOverRelay != want {
				t.Errorf("toolfold over %s with %d callers: CPU over the byte relay's is %v, want %v (%v µs over %v µs)",
					c.Transport, tp.Callers, tp.CPUOverRelay, want, tp.CPUMicrosPerCall, relay)
			}
		}
	}
	if len(r.Profiles) != 3*(len(transports)+2) || len(slices.Compact(slices.Sorted(slices.Values(r.Profiles)))) != len(r.Profiles) {
		t.Errorf("profiles written: %q, want three files of their own per toolfold side (stdio, stdio baseline, http, http session)", r.Profiles)
	}
	for _, f := range r.Profiles {
		if info, err := os.Stat(f); err != nil || info.Size() == 0 {
			t.Errorf("profile %s is missing or empty: %v", f, err)
		}
	}

	s := r.Startup
	for name, side := range map[string]StartupSide{"cached": s.Cached, "none": s.None} {
		if len(side.RunsMS) != params.Startup.Runs || side.MinMS <= 0 || side.MinMS > side.MedianMS || side.MedianMS > side.MaxMS {
			t.Errorf("%s start-up times are not positive and ordered: %+v", name, side)
		}
		if side.Tools != servers*fixtureTools {
			t.Errorf("a start with the %s catalog listed %d tools, want %d (%d servers × %d)", name, side.Tools, servers*fixtureTools, servers, fixtureTools)
		}
	}
	for i, n := range s.Cached.Spawned {
		if n != 0 {
			t.Errorf("cached start %d spawned %d servers; it should answer from the cache alone", i+1, n)
		}
	}
	for i, n := range s.None.Spawned {
		if n != servers {
			t.Errorf("uncached start %d spawned %d servers, want %d: the start log does not count what it should", i+1, n, servers)
		}
	}
	checkRatio(t, "start-up", s.Ratio)
	if s.OneServer.MedianMS <= 0 || s.OneServer.Tools != fixtureTools || s.Version.MedianMS <= 0 {
		t.Errorf("the start-up floors are not sane: one server %+v, toolfold version %+v", s.OneServer, s.Version)
	}

	if len(r.Memory) != len(params.Memory.Modes) {
		t.Fatalf("memory has %d results for %d modes", len(r.Memory), len(params.Memory.Modes))
	}
	for _, m := range r.Memory {
		if m.RSSBefore <= 0 || m.RSSAfter <= 0 || m.ToolsPerSession <= 0 || m.Sessions != params.Memory.Sessions || math.IsNaN(m.BytesPerSession) {
			t.Errorf("memory in %s mode is not sane: %+v", m.Mode, m)
		}
	}

	if r.Reload == nil || len(r.Reload.Runs) != 1 {
		t.Fatalf("the reload measurement has no run: %+v", r.Reload)
	}
	if rr := r.Reload.Runs[0]; rr.Tools != 30 || rr.Added < 1 || len(rr.ToListChangedMS) != 2 || slices.Min(rr.ToListChangedMS) <= 0 || rr.Median <= 0 {
		t.Errorf("the reload run is not sane: %+v", rr)
	}
	if r.Scale == nil || len(r.Scale.Runs) != len(params.Scale.Tools) {
		t.Fatalf("the scale sweep has no run per size: %+v", r.Scale)
	}
	for i, sr := range r.Scale.Runs {
		// Search mode lists its meta-tools, not the catalog's.
		if sr.Tools != params.Scale.Tools[i] || sr.Servers < 1 || sr.Listed < 1 || sr.CPUSeconds < 0 || sr.RSS <= 0 || sr.Heap == 0 || sr.ListMS < sr.InitializeMS {
			t.Errorf("scale run %d is not sane: %+v", i, sr)
		}
		if sr.Spawned != 0 {
			t.Errorf("the cached start of %d tools spawned %d stand-ins; it should answer from the cache alone", sr.Tools, sr.Spawned)
		}
		for name, p := range map[string]Percentiles{"find_tools": sr.Find, "ping": sr.Ping} {
			if !(p.P50 > 0 && p.P50 <= p.P90 && p.P90 <= p.P99 && p.P99 <= p.Max) {
				t.Errorf("scale run %d: %s latency percentiles are not positive and ordered: %+v", i, name, p)
			}
		}
		if sr.FindOverPing != sr.Find.P50-sr.Ping.P50 {
			t.Errorf("scale run %d: find_tools over ping is %v µs, want p50 %v less %v", i, sr.FindOverPing, sr.Find.P50, sr.Ping.P50)
		}
		for _, f := range []string{sr.HeapProfile, sr.CPUProfile, sr.FindCPUProfile} {
			if info, err := os.Stat(f); err != nil || info.Size() == 0 {
				t.Errorf("profile %q is missing or empty: %v", f, err)
			}
		}
	}
	// One server past the Go SDK's default page of 1,000, unpaged.
	if o := r.Scale.OneServer; o == nil || o.Tools != 1200 || o.Servers != 1 || o.Listed < 1 || o.Spawned != 0 || o.RSS <= 0 || o.Heap == 0 {
		t.Errorf("the one-server run is not sane: %+v", o)
	}
	if cpu, tools, ok := r.Scale.Growth(); !ok || tools != 3 || math.IsNaN(cpu) {
		t.Errorf("scale growth = %v× CPU for %v× tools (ok %v), want a figure for 3× the tools", cpu, tools, ok)
	}

	// Both outputs render: JSON has no NaN or infinity to choke on.
	if _, err := json.Marshal(r); err != nil {
		t.Errorf("the report does not encode as JSON: %v", err)
	}
	var table bytes.Buffer
	printTable(&table, r)
	for _, want := range []string{"1. tools/call over stdio", sideBaseline + ": built from " + h.root + ", commit", "goals, 2 callers", "goals, 4 callers", "2. tools/call over http", "goals, toolfold, 4 callers", "3. start to first tools/list", "4. RSS", "5. scale", "in one list", "find_tools p50 − ping"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, table.String())
		}
	}

	// Every process is gone once cleanup has run.
	h.cleanup()
	if leftovers := fixturesAlive(t, h.fixture); len(leftovers) > 0 {
		t.Errorf("fixture processes outlived the cleanup: %v", leftovers)
	}
}

// throughputCallers lists the numbers of callers a side was measured with.
func throughputCallers(sd SideResult) []int {
	var out []int
	for _, tp := range sd.Throughput {
		out = append(out, tp.Callers)
	}
	return out
}

func checkRatio(t *testing.T, name string, v float64) {
	t.Helper()
	if !(v > 0) || math.IsInf(v, 0) {
		t.Errorf("%s ratio is %v, want a positive finite number", name, v)
	}
}

// fixturesAlive lists the pids of processes still running the fixture binary
// (a zombie is not alive: its process is gone, only its exit status waits).
func fixturesAlive(t *testing.T, fixture string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("cannot list processes: %v", err)
	}
	var alive []string
	for _, e := range entries {
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.HasPrefix(cmdline, []byte(fixture+"\x00")) {
			continue
		}
		alive = append(alive, e.Name())
	}
	return alive
}

func TestParseFlagsRefusesNonsense(t *testing.T) {
	for _, args := range [][]string{{"-calls", "0"}, {"-only", "speed"}, {"extra"}, {"-memory-modes", ""}, {"-transports", "pigeon"}, {"-transports", ""}, {"-scale-tools", "1k"}, {"-scale-batch", "0"}, {"-scale-one-server", "-1"},
		{"-callers", ""}, {"-callers", "0"}, {"-callers", "16,16"}, {"-callers", "many"}} {
		if _, _, _, err := parseFlags(args); err == nil {
			t.Errorf("parseFlags(%q) accepted it", args)
		}
	}
	p, _, _, err := parseFlags([]string{"-only", "calls,memory"})
	if err != nil || !p.runs("calls") || p.runs("startup") {
		t.Errorf("-only calls,memory: runs(calls)=%v runs(startup)=%v err=%v", p.runs("calls"), p.runs("startup"), err)
	}
	// Both numbers of callers by default, in one run (issue 24).
	if !slices.Equal(p.Calls.Callers, []int{16, 64}) {
		t.Errorf("callers by default = %v, want [16 64]", p.Calls.Callers)
	}
	p, _, _, err = parseFlags([]string{"-callers", "64, 8"})
	if err != nil || !slices.Equal(p.Calls.Callers, []int{64, 8}) {
		t.Errorf("-callers '64, 8' = %v (err %v), want [64 8]", p.Calls.Callers, err)
	}
}

func TestPercentilesNearestRank(t *testing.T) {
	var samples []time.Duration
	for i := 100; i >= 1; i-- { // out of order on purpose
		samples = append(samples, time.Duration(i)*time.Microsecond)
	}
	p := percentiles(samples)
	if p.P50 != 50 || p.P90 != 90 || p.P99 != 99 || p.Max != 100 || p.Mean != 50.5 {
		t.Errorf("percentiles of 1..100 µs = %+v, want p50 50, p90 90, p99 99, max 100, mean 50.5", p)
	}
}

func TestRetryPortClashRetriesOnlyClashes(t *testing.T) {
	clash := errors.New("the fixture exited: listen tcp 127.0.0.1:1: bind: address already in use")
	other := errors.New("the fixture exited: no such tool")
	for _, tc := range []struct {
		name      string
		errs      []error // what each try returns, in order; nil ends
		wantTries int
		wantErr   error
	}{
		{"first try works", []error{nil}, 1, nil},
		{"a clash, then it works", []error{clash, nil}, 2, nil},
		{"another error is not retried", []error{other, nil}, 1, other},
		{"clashes give up after the bound", []error{clash, clash, clash, clash, nil}, portClashTries, clash},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tries := 0
			got, err := retryPortClash(func() (int, error) {
				err := tc.errs[tries]
				tries++
				return tries, err
			})
			if tries != tc.wantTries || !errors.Is(err, tc.wantErr) {
				t.Fatalf("tries %d, err %v; want %d tries, err %v", tries, err, tc.wantTries, tc.wantErr)
			}
			if err == nil && got != tries {
				t.Fatalf("it returned the value of try %d, want the last (%d)", got, tries)
			}
		})
	}
}
