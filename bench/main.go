// Command bench measures what the toolfold gateway costs, side by side with
// the same upstream server reached directly, in one run (issues 3 and 13):
//
//  1. tools/call over stdio and over streamable HTTP, for four sides that
//     reach the same fixture's echo tool, taking turns: directly; through a
//     relay that copies bytes (the floor of any hop); through a bare Go SDK
//     relay (the floor of a gateway built on the SDK; over HTTP it is the
//     SDK's own stateful HTTP server); and through toolfold. Per side: p50
//     and p99 of sequential calls, calls per second with 16 and with 64
//     concurrent callers (-callers), and, of the process the client talks
//     to, CPU time per call (/proc/PID/stat), heap allocations per call
//     (Go's MemStats, through the profiler every side serves) and RSS;
//  2. time from start to the first tools/list answer with 20 servers
//     configured, with a cached catalog versus none, and how many servers
//     each start spawned;
//  3. resident memory of `toolfold serve --http` holding 1,000 sessions;
//  4. the scale sweep: catalogs of 1k, 5k and 20k tools made by repeating the
//     recorded catalogs (testdata/catalogs) under new names, served by Go
//     stand-ins (bench/fixture -catalog), cached: toolfold's CPU-seconds to
//     the first tools/list, RSS and heap per tool;
//  5. reload: the same stand-ins served in flat mode, and the time from a
//     config saved by rename with one server added to the client's
//     tools/list_changed that brings its tools.
//
// With -profile DIR it also profiles toolfold under the same concurrent
// load (CPU, and allocations as a before/after pair for pprof -base).
//
// It builds toolfold from this checkout and the upstream fixture
// (bench/fixture) into a temporary directory, drives both with the official
// Go SDK client over pipes and loopback only, and stops every process it
// started when it ends or is interrupted. Counts and times are bounded by
// flags; every figure is printed with the parameters it was measured with.
//
//	go run ./bench              # the table
//	go run ./bench -json        # the same as JSON
//	./scripts/bench.sh -calls 500 -only calls -transports stdio
//
// Figures are measured, never asserted: the smoke test (bench_test.go)
// checks only that the harness produces sane numbers.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Params are everything a run is measured with.
type Params struct {
	Calls   CallsParams   `json:"calls"`
	Startup StartupParams `json:"startup"`
	Memory  MemoryParams  `json:"memory"`
	Scale   ScaleParams   `json:"scale"`
	Reload  ReloadParams  `json:"reload"`
	// Only names the measurements to run; empty runs them all.
	Only []string `json:"only,omitempty"`
	// Profile is a directory to write toolfold's profiles under load to;
	// empty takes none.
	Profile     string        `json:"profile,omitempty"`
	ProfileTime time.Duration `json:"-"`
}

// measurements, in the order they run and print.
var measurements = []string{"calls", "startup", "memory", "scale", "reload"}

func (p Params) runs(name string) bool { return len(p.Only) == 0 || slices.Contains(p.Only, name) }

// Machine describes where the figures were measured.
type Machine struct {
	Cores      int    `json:"cores"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	CPU        string `json:"cpu,omitempty"`
	// LoadAverage is /proc/loadavg when the run began: on a shared machine
	// it says how much else was running.
	LoadAverage string `json:"load_average,omitempty"`
	Go          string `json:"go"`
	SDK         string `json:"go_sdk"`
	// Source is the toolfold checkout the binaries were built from.
	Source string `json:"source"`
}

// Report is one run's figures.
type Report struct {
	Machine  Machine        `json:"machine"`
	Started  time.Time      `json:"started"`
	Seconds  float64        `json:"seconds"`
	Calls    []*CallsResult `json:"calls,omitempty"`
	Profiles []string       `json:"profiles,omitempty"`
	Startup  *StartupResult `json:"startup,omitempty"`
	Memory   []MemoryResult `json:"memory,omitempty"`
	Scale    *ScaleResult   `json:"scale,omitempty"`
	Reload   *ReloadResult  `json:"reload,omitempty"`
}

func main() {
	params, asJSON, timeout, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	fmt.Fprintln(os.Stderr, "bench: building toolfold and the fixture…")
	h, err := newHarness(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	// An interrupt kills every process group at once rather than cancelling
	// and waiting: a measurement blocked on a pipe ends when its process does.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		sig := <-signals
		fmt.Fprintf(os.Stderr, "bench: %v: stopping every process it started\n", sig)
		h.cleanup()
		os.Exit(130)
	}()
	report, err := run(ctx, h, params, os.Stderr)
	h.cleanup()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	if asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(report); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	printTable(os.Stdout, report)
}

func parseFlags(args []string) (p Params, asJSON bool, timeout time.Duration, err error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.BoolVar(&asJSON, "json", false, "print the report as JSON instead of a table")
	fs.DurationVar(&timeout, "timeout", 10*time.Minute, "give up after this long")
	only := fs.String("only", "", "comma-separated measurements to run: "+strings.Join(measurements, ",")+" (default: all)")
	trans := fs.String("transports", strings.Join(transports, ","), "calls: comma-separated transports to measure")
	fs.IntVar(&p.Calls.Calls, "calls", 2000, "calls: timed sequential calls per side")
	fs.IntVar(&p.Calls.Warmup, "warmup", 200, "calls: untimed calls per side first")
	fs.IntVar(&p.Calls.Block, "block", 100, "calls: sequential calls per side before the sides alternate")
	callers := fs.String("callers", "16,64", "calls: comma-separated numbers of concurrent callers on one session, each measured")
	fs.DurationVar(&p.Calls.Duration, "throughput-time", 3*time.Second, "calls: time measured with concurrent callers per side (four sides per transport)")
	fs.IntVar(&p.Calls.Rounds, "rounds", 3, "calls: turns the concurrent time per side is split into")
	fs.StringVar(&p.Calls.Baseline, "baseline", "", "calls over stdio: also measure toolfold built from the checkout in this directory (\""+sideBaseline+"\"), taking turns with the other sides: before and after a change in one run")
	fs.StringVar(&p.Profile, "profile", "", "calls: write toolfold's CPU and allocation profiles under load into this directory")
	fs.DurationVar(&p.ProfileTime, "profile-time", 5*time.Second, "calls: how long to profile toolfold per transport")
	fs.IntVar(&p.Startup.Servers, "servers", 20, "start-up: upstream servers in the config")
	fs.IntVar(&p.Startup.Runs, "start-runs", 5, "start-up: starts per side (cached, none)")
	fs.DurationVar(&p.Startup.Settle, "start-settle", 300*time.Millisecond, "start-up: time after the answer before counting spawned servers")
	fs.IntVar(&p.Memory.Sessions, "sessions", 1000, "memory: HTTP sessions held open at once")
	fs.IntVar(&p.Memory.Concurrency, "session-concurrency", 32, "memory: sessions being opened at once")
	fs.IntVar(&p.Memory.Servers, "memory-servers", 20, "memory: upstream servers in the config")
	modes := fs.String("memory-modes", "groups,search", "memory: comma-separated modes, one toolfold process each")
	fs.StringVar(&p.Memory.Protocol, "memory-protocol", "2025-11-25", "memory: the protocol version the clients ask for (2026-07-28 clients hold no session)")
	fs.BoolVar(&p.Memory.NoStream, "memory-no-stream", false, "memory: clients open no standalone SSE stream (the Go SDK client opens one by default)")
	fs.DurationVar(&p.Memory.Settle, "memory-settle", time.Second, "memory: pause before each RSS reading")
	scaleTools := fs.String("scale-tools", "1000,5000,20000,50000", "scale: comma-separated catalog sizes, synthesised from testdata/catalogs")
	fs.IntVar(&p.Scale.Batch, "scale-batch", 40, "scale: stand-in servers run at once while the cache is filled")
	fs.StringVar(&p.Scale.Mode, "scale-mode", "search", "scale: the mode of the measured start")
	fs.DurationVar(&p.Scale.ProfileTime, "scale-profile-time", 15*time.Second, "scale: with -profile, how long each size's start is CPU-profiled from launch, and find_tools after it")
	fs.IntVar(&p.Scale.OneServer, "scale-one-server", 20000, "scale: also start one stand-in server of this many tools, listed unpaged (0: none)")
	reloadTools := fs.String("reload-tools", "903,20000", "reload: comma-separated catalog sizes served before each reload adds a server")
	fs.IntVar(&p.Reload.Batch, "reload-batch", 40, "reload: stand-in servers run at once while the cache is filled")
	fs.IntVar(&p.Reload.Runs, "reload-runs", 5, "reload: reloads timed per size, each adding a server")
	fs.IntVar(&p.Scale.FindCalls, "scale-find-calls", 500, "scale: timed sequential find_tools calls (and as many pings) per size; 0 times none")
	if err := fs.Parse(args); err != nil {
		return p, false, 0, err
	}
	if fs.NArg() > 0 {
		return p, false, 0, fmt.Errorf("unexpected argument %q; every setting is a flag (see -h)", fs.Arg(0))
	}
	p.Memory.Modes = splitComma(*modes)
	for _, v := range splitComma(*scaleTools) {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return p, false, 0, fmt.Errorf("-scale-tools %q: %q is not a positive number of tools", *scaleTools, v)
		}
		p.Scale.Tools = append(p.Scale.Tools, n)
	}
	for _, v := range splitComma(*reloadTools) {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return p, false, 0, fmt.Errorf("-reload-tools %q: %q is not a positive number of tools", *reloadTools, v)
		}
		p.Reload.Tools = append(p.Reload.Tools, n)
	}
	for _, v := range splitComma(*callers) {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || slices.Contains(p.Calls.Callers, n) {
			return p, false, 0, fmt.Errorf("-callers %q: %q is not a positive number of callers named once", *callers, v)
		}
		p.Calls.Callers = append(p.Calls.Callers, n)
	}
	if len(p.Calls.Callers) == 0 {
		return p, false, 0, fmt.Errorf("-callers %q names no number of callers; give one at least, e.g. 16,64", *callers)
	}
	p.Only = splitComma(*only)
	p.Calls.Transports = splitComma(*trans)
	for _, t := range p.Calls.Transports {
		if !slices.Contains(transports, t) {
			return p, false, 0, fmt.Errorf("-transports %q: there is no transport %q; choose from %s", *trans, t, strings.Join(transports, ","))
		}
	}
	for _, m := range p.Only {
		if !slices.Contains(measurements, m) {
			return p, false, 0, fmt.Errorf("-only %q: there is no measurement %q; choose from %s", *only, m, strings.Join(measurements, ","))
		}
	}
	positive := map[string]int{
		"-calls": p.Calls.Calls, "-block": p.Calls.Block, "-rounds": p.Calls.Rounds,
		"-servers": p.Startup.Servers, "-start-runs": p.Startup.Runs, "-sessions": p.Memory.Sessions,
		"-session-concurrency": p.Memory.Concurrency, "-memory-servers": p.Memory.Servers, "-scale-batch": p.Scale.Batch,
		"-reload-batch": p.Reload.Batch, "-reload-runs": p.Reload.Runs,
	}
	for name, v := range positive {
		if v <= 0 {
			return p, false, 0, fmt.Errorf("%s must be at least 1, not %d", name, v)
		}
	}
	if p.Scale.FindCalls < 0 {
		return p, false, 0, fmt.Errorf("-scale-find-calls must not be negative, not %d", p.Scale.FindCalls)
	}
	if p.Scale.OneServer < 0 {
		return p, false, 0, fmt.Errorf("-scale-one-server must not be negative, not %d; 0 leaves the run out", p.Scale.OneServer)
	}
	if p.Calls.Warmup < 0 || p.Calls.Duration <= 0 || p.ProfileTime < time.Second || p.Scale.ProfileTime < time.Second || len(p.Memory.Modes) == 0 || len(p.Calls.Transports) == 0 {
		return p, false, 0, fmt.Errorf("-warmup must not be negative, -throughput-time must be positive, -profile-time and -scale-profile-time at least 1s, and -memory-modes and -transports must name one at least")
	}
	return p, asJSON, timeout, nil
}

func joinInts(v []int, sep string) string {
	parts := make([]string, len(v))
	for i, n := range v {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, sep)
}

func splitComma(s string) []string {
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// run takes every selected measurement in turn and logs progress to log.
func run(ctx context.Context, h *harness, p Params, log io.Writer) (*Report, error) {
	r := &Report{Machine: describeMachine(), Started: time.Now()}
	r.Machine.Source = h.source
	progress := func(format string, args ...any) {
		if log != nil {
			fmt.Fprintf(log, "bench: "+format+"\n", args...)
		}
	}
	if p.runs("calls") {
		if p.Calls.Baseline != "" {
			progress("building the baseline toolfold in %s…", p.Calls.Baseline)
			var err error
			if p.Calls.Baseline, err = h.buildBaseline(ctx, p.Calls.Baseline); err != nil {
				return nil, err
			}
		}
		for _, transport := range p.Calls.Transports {
			progress("calls over %s: %d sequential calls per side after %d warm-up, then %s callers for %v each per side…",
				transport, p.Calls.Calls, p.Calls.Warmup, joinInts(p.Calls.Callers, ", "), p.Calls.Duration)
			sides, err := h.openSides(ctx, transport)
			if err != nil {
				return nil, err
			}
			res, err := measureCalls(ctx, transport, sides, p.Calls)
			if err == nil && p.Profile != "" {
				progress("profiling toolfold over %s for %v…", transport, p.ProfileTime)
				for _, sd := range sides {
					if err != nil || !strings.HasPrefix(sd.name, sideToolfold) {
						continue
					}
					tag := transport
					switch sd.name {
					case sideSession:
						tag = "session-" + transport
					case sideBaseline:
						tag = "baseline-" + transport
					}
					var files []string
					files, err = profileUnderLoad(ctx, sd, slices.Max(p.Calls.Callers), p.ProfileTime, p.Profile, tag)
					r.Profiles = append(r.Profiles, files...)
				}
			}
			closeSides(sides) // before the next measurements, which start their own
			if err != nil {
				return nil, err
			}
			r.Calls = append(r.Calls, res)
		}
	}
	if p.runs("startup") {
		progress("start-up: %d servers, %d starts per side…", p.Startup.Servers, p.Startup.Runs)
		var err error
		if r.Startup, err = measureStartup(ctx, h, p.Startup); err != nil {
			return nil, err
		}
	}
	if p.runs("memory") {
		progress("memory: %d HTTP sessions in modes %s…", p.Memory.Sessions, strings.Join(p.Memory.Modes, ", "))
		var err error
		p.Memory.Profile = p.Profile
		if r.Memory, err = measureMemory(ctx, h, p.Memory); err != nil {
			return nil, err
		}
	}
	if p.runs("scale") && len(p.Scale.Tools) > 0 {
		var err error
		p.Scale.Profile = p.Profile
		if r.Scale, err = measureScale(ctx, h, p.Scale, progress); err != nil {
			return nil, err
		}
	}
	if p.runs("reload") && len(p.Reload.Tools) > 0 {
		var err error
		if r.Reload, err = measureReload(ctx, h, p.Reload, progress); err != nil {
			return nil, err
		}
	}
	r.Seconds = time.Since(r.Started).Seconds()
	return r, nil
}

func describeMachine() Machine {
	m := Machine{
		Cores: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		OS: runtime.GOOS, Arch: runtime.GOARCH, Go: runtime.Version(),
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/modelcontextprotocol/go-sdk" {
				m.SDK = dep.Version
			}
		}
	}
	if raw, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(raw)) {
			if name, ok := strings.CutPrefix(line, "model name"); ok {
				m.CPU = strings.TrimSpace(strings.TrimLeft(name, " \t:"))
				break
			}
		}
	}
	if raw, err := os.ReadFile("/proc/loadavg"); err == nil {
		fields := strings.Fields(string(raw))
		if len(fields) >= 3 {
			m.LoadAverage = strings.Join(fields[:3], " ")
		}
	}
	return m
}
