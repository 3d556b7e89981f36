package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
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
		Latency:    LatencyParams{Calls: 20, Warmup: 5, Block: 7},
		Throughput: ThroughputParams{Callers: 4, Duration: 200 * time.Millisecond, Rounds: 2},
		Startup:    StartupParams{Servers: servers, Runs: 2, Settle: 100 * time.Millisecond},
		Memory:     MemoryParams{Sessions: 10, Concurrency: 4, Servers: servers, Modes: []string{"groups", "search"}, Settle: 100 * time.Millisecond},
	}
	r, err := run(ctx, h, params, nil)
	if err != nil {
		t.Fatal(err)
	}

	l := r.Latency
	for name, p := range map[string]Percentiles{"direct": l.Direct, "SDK relay": l.Relay, "toolfold": l.Toolfold} {
		if !(p.P50 > 0 && p.P50 <= p.P90 && p.P90 <= p.P99 && p.P99 <= p.Max && p.Mean > 0) {
			t.Errorf("%s latency percentiles are not positive and ordered: %+v", name, p)
		}
	}
	checkRatio(t, "latency p50", l.Ratio.P50)
	checkRatio(t, "latency p99", l.Ratio.P99)

	tp := r.Throughput
	if tp.DirectCalls <= 0 || tp.RelayCalls <= 0 || tp.ToolfoldCalls <= 0 || tp.DirectCallsPerSec <= 0 || tp.RelayCallsPerSec <= 0 || tp.ToolfoldCallsPerSec <= 0 {
		t.Errorf("throughput counted no calls: %+v", tp)
	}
	checkRatio(t, "throughput", tp.Ratio)
	checkRatio(t, "throughput of the relay", tp.RelayRatio)

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

	// Both outputs render: JSON has no NaN or infinity to choke on.
	if _, err := json.Marshal(r); err != nil {
		t.Errorf("the report does not encode as JSON: %v", err)
	}
	var table bytes.Buffer
	printTable(&table, r)
	for _, want := range []string{"1. tools/call latency", "2. calls per second", "3. start to first tools/list", "4. RSS"} {
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
	for _, args := range [][]string{{"-calls", "0"}, {"-only", "speed"}, {"extra"}, {"-memory-modes", ""}} {
		if _, _, _, err := parseFlags(args); err == nil {
			t.Errorf("parseFlags(%q) accepted it", args)
		}
	}
	p, _, _, err := parseFlags([]string{"-only", "latency,memory"})
	if err != nil || !p.runs("latency") || p.runs("startup") {
		t.Errorf("-only latency,memory: runs(latency)=%v runs(startup)=%v err=%v", p.runs("latency"), p.runs("startup"), err)
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
