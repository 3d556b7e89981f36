package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A side is one way to reach the same upstream fixture's echo tool: straight,
// through a relay, or through toolfold. The sides of one transport stay open
// together for the latency and the throughput figures, taking turns, so that
// every side sees the same machine at the same time.
type side struct {
	name string
	// process is the one the client talks to: the fixture itself on the
	// direct side, else the relay or toolfold (its upstream is a process of
	// its own and not counted). Its CPU time and RSS are the side's.
	process *process
	session *mcp.ClientSession
	tool    string
	close   func()
}

// process is a running program whose costs the benchmark reads from /proc
// and, when it serves Go's profiler, its allocation counts.
type process struct {
	pid   int
	pprof string // http://ADDR of its /debug/pprof/, or ""
}

func (s *side) call(ctx context.Context) error {
	return callOK(s.session.CallTool(ctx, &mcp.CallToolParams{Name: s.tool, Arguments: echoArgs}))
}

// The tool every side calls: toolfold's flat mode names it <server>__<tool>.
const (
	benchServer = "s01"
	directTool  = "echo"
	gatewayTool = benchServer + "__" + directTool
)

var echoArgs = map[string]any{"text": "hello"}

// The sides, in the order they take turns and print.
const (
	sideDirect   = "direct"
	sideCopy     = "byte relay"
	sideSDKRelay = "SDK relay"
	sideToolfold = "toolfold"
	// sideSession is toolfold serve --http called by a client on the
	// 2025-11-25 protocol, which holds a session (HTTP only); every other
	// HTTP side's client asks for the newest protocol, 2026-07-28, which
	// the Go SDK's own stateful handler does not serve (its client falls
	// back to a 2025-11-25 session there) and toolfold serves without one.
	sideSession = "toolfold, session"
	// sideBaseline is toolfold built from another checkout (-baseline),
	// over stdio: before and after a change, taking turns in one run.
	sideBaseline  = "toolfold, baseline"
	transportIO   = "stdio"
	transportHTTP = "http"
)

// transports the benchmark knows, in the order they run.
var transports = []string{transportIO, transportHTTP}

// openSides starts every side of one transport and checks that each answers
// the echo tool with its argument, so a broken side fails here rather than
// being timed.
func (h *harness) openSides(ctx context.Context, transport string) (sides []*side, err error) {
	defer func() {
		if err != nil {
			closeSides(sides)
			sides = nil
		}
	}()
	log := h.newStartLog()
	config, err := h.writeConfig(1, log)
	if err != nil {
		return nil, err
	}
	fixture := func(extra ...string) ([]string, *process, error) {
		addr, err := freeLoopbackAddr()
		if err != nil {
			return nil, nil, err
		}
		return append([]string{"-name", benchServer, "-pprof", addr}, extra...), &process{pprof: "http://" + addr}, nil
	}
	add := func(name, tool string, open func() (*side, error)) error {
		s, err := retryPortClash(open)
		if err != nil {
			return fmt.Errorf("opening the %s side over %s: %w", name, transport, err)
		}
		s.name, s.tool = name, tool
		sides = append(sides, s)
		return nil
	}
	switch transport {
	case transportIO:
		for _, def := range []struct{ name, flag string }{{sideDirect, ""}, {sideCopy, "-copy"}, {sideSDKRelay, "-relay"}} {
			if err := add(def.name, directTool, func() (*side, error) {
				var extra []string
				if def.flag != "" {
					extra = []string{def.flag}
				} else {
					extra = []string{"-start-log", log}
				}
				args, proc, err := fixture(extra...)
				if err != nil {
					return nil, err
				}
				return h.stdioSide(ctx, h.command(h.fixture, args...), proc)
			}); err != nil {
				return sides, err
			}
		}
		if err := add(sideToolfold, gatewayTool, func() (*side, error) {
			addr, err := freeLoopbackAddr()
			if err != nil {
				return nil, err
			}
			cmd := h.command(h.toolfold, "serve", "--config", config, "--mode", "flat", "--log-level", "warn", "--pprof", addr)
			cmd.Env = toolfoldEnv(h.path("cache"))
			return h.stdioSide(ctx, cmd, &process{pprof: "http://" + addr})
		}); err != nil {
			return sides, err
		}
		if h.baseline != "" {
			if err := add(sideBaseline, gatewayTool, func() (*side, error) {
				addr, err := freeLoopbackAddr()
				if err != nil {
					return nil, err
				}
				cmd := h.command(h.baseline, "serve", "--config", config, "--mode", "flat", "--log-level", "warn", "--pprof", addr)
				cmd.Env = toolfoldEnv(h.path("cache"))
				return h.stdioSide(ctx, cmd, &process{pprof: "http://" + addr})
			}); err != nil {
				return sides, err
			}
		}
	case transportHTTP:
		var directURL string
		for _, def := range []struct{ name, flag string }{{sideDirect, ""}, {sideCopy, "-proxy"}, {sideSDKRelay, "-relay"}} {
			if err := add(def.name, directTool, func() (*side, error) {
				addr, err := freeLoopbackAddr()
				if err != nil {
					return nil, err
				}
				extra := []string{"-http", addr}
				switch def.flag {
				case "-proxy":
					extra = append(extra, "-proxy", directURL)
				case "-relay":
					extra = append(extra, "-relay")
				}
				args, proc, err := fixture(extra...)
				if err != nil {
					return nil, err
				}
				s, err := h.httpFixtureSide(ctx, args, "http://"+addr+"/mcp", proc)
				if err == nil && def.name == sideDirect {
					directURL = "http://" + addr
				}
				return s, err
			}); err != nil {
				return sides, err
			}
		}
		for _, def := range []struct{ name, protocol string }{{sideToolfold, ""}, {sideSession, "2025-11-25"}} {
			if err := add(def.name, gatewayTool, func() (*side, error) {
				return h.httpToolfoldSide(ctx, config, def.protocol)
			}); err != nil {
				return sides, err
			}
		}
	default:
		return nil, fmt.Errorf("there is no transport %q; choose stdio or http", transport)
	}
	for _, s := range sides {
		res, err := s.session.CallTool(ctx, &mcp.CallToolParams{Name: s.tool, Arguments: echoArgs})
		if err == nil && (res.IsError || resultText(res) != "hello") {
			err = fmt.Errorf("it answered %q instead of echoing \"hello\"", resultText(res))
		}
		if err != nil {
			return sides, fmt.Errorf("calling %s through the %s side over %s: %w", s.tool, s.name, transport, err)
		}
	}
	return sides, nil
}

// buildBaseline builds toolfold from the checkout at dir, for the side
// that compares this checkout with it, and says what it built.
func (h *harness) buildBaseline(ctx context.Context, dir string) (string, error) {
	out := h.path("toolfold-baseline")
	build := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/toolfold")
	build.Dir = dir
	var stderr bytes.Buffer
	build.Stderr = &stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("building the baseline toolfold in %s (-baseline names a toolfold checkout): %v\n%s", dir, err, stderr.String())
	}
	h.baseline = out
	return dir + ", " + describeSource(ctx, dir), nil
}

// httpToolfoldSide starts toolfold serve --http in flat mode and connects
// on protocol ("": the client's newest).
func (h *harness) httpToolfoldSide(ctx context.Context, config, protocol string) (*side, error) {
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	srv, err := h.startHTTP(ctx, config, h.path("cache"), "--mode", "flat", "--pprof", addr)
	if err != nil {
		return nil, err
	}
	s, err := connectHTTP(ctx, srv.endpoint, protocol)
	if err != nil {
		h.stopHTTP(srv)
		return nil, fmt.Errorf("%w%s", err, srv.stderr.suffix())
	}
	s.process = &process{pid: srv.cmd.Process.Pid, pprof: "http://" + addr}
	inner := s.close
	s.close = func() { inner(); h.stopHTTP(srv) }
	return s, nil
}

// stdioSide connects the SDK client to cmd over stdio.
func (h *harness) stdioSide(ctx context.Context, cmd *exec.Cmd, proc *process) (*side, error) {
	p, err := h.connectStdio(ctx, cmd)
	if err != nil {
		return nil, err
	}
	proc.pid = cmd.Process.Pid
	return &side{process: proc, session: p.ClientSession, close: p.Close}, nil
}

// httpFixtureSide starts a fixture serving HTTP and connects to it.
func (h *harness) httpFixtureSide(ctx context.Context, args []string, endpoint string, proc *process) (*side, error) {
	cmd := h.command(h.fixture, args...)
	stderr := &tailBuffer{max: 8 << 10}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		h.forget(cmd)
		return nil, fmt.Errorf("starting the fixture: %w", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	stop := func() {
		_ = cmd.Process.Kill()
		<-done
		h.forget(cmd)
	}
	// Any HTTP answer means it listens; the SDK answers a bare GET with an
	// error status.
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := http.Get(endpoint)
		if err == nil {
			resp.Body.Close()
			break
		}
		select {
		case <-done:
			h.forget(cmd)
			return nil, fmt.Errorf("the fixture exited before serving HTTP%s", stderr.suffix())
		case <-ctx.Done():
			stop()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("the fixture did not serve HTTP at %s within 30s%s", endpoint, stderr.suffix())
		}
	}
	s, err := connectHTTP(ctx, endpoint, "")
	if err != nil {
		stop()
		return nil, fmt.Errorf("%w%s", err, stderr.suffix())
	}
	proc.pid = cmd.Process.Pid
	s.process = proc
	inner := s.close
	s.close = func() { inner(); stop() }
	return s, nil
}

// connectHTTP opens one streamable-HTTP client on protocol ("": the
// client's newest) with room for every caller to keep its own connection.
func connectHTTP(ctx context.Context, endpoint, protocol string) (*side, error) {
	transport := &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: time.Minute}
	client := mcp.NewClient(&mcp.Implementation{Name: "toolfold-bench", Version: "1.0.0"}, nil)
	var opts *mcp.ClientSessionOptions
	if protocol != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: protocol}
	}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: transport}}, opts)
	if err != nil {
		transport.CloseIdleConnections()
		return nil, fmt.Errorf("connecting to %s: %w", endpoint, err)
	}
	return &side{session: cs, close: func() { cs.Close(); transport.CloseIdleConnections() }}, nil
}

func closeSides(sides []*side) {
	for _, s := range sides {
		if s != nil && s.close != nil {
			s.close()
		}
	}
}

// resultText is the text of a result's first content.
func resultText(res *mcp.CallToolResult) string {
	if len(res.Content) == 0 {
		return ""
	}
	if text, ok := res.Content[0].(*mcp.TextContent); ok {
		return text.Text
	}
	return fmt.Sprintf("%T", res.Content[0])
}

func callOK(res *mcp.CallToolResult, err error) error {
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("the tool answered with an error: %+v", res.Content)
	}
	return nil
}

// CallsParams bound the latency and throughput figures.
type CallsParams struct {
	Transports []string `json:"transports"`
	Calls      int      `json:"calls"`  // timed sequential calls per side
	Warmup     int      `json:"warmup"` // untimed calls per side first
	// Block is how many sequential calls one side makes before the next
	// takes its turn: taking turns spreads the machine's noise (other
	// builds on a shared box) over every side instead of over whichever ran
	// last.
	Block int `json:"block"`
	// Callers are the numbers of goroutines calling at once on one
	// session, each measured in the same run (issue 24: a path that keeps
	// pace at 16 callers may not at 64).
	Callers []int `json:"callers"`
	// Duration is the time each side is measured with each number of
	// Callers in total, split into Rounds alternating turns for the same
	// reason as Block.
	Duration time.Duration `json:"-"`
	Seconds  float64       `json:"seconds_per_side"`
	Rounds   int           `json:"rounds"`
	// Baseline is the checkout a stdio side "toolfold, baseline" was
	// built from, and its commit; empty without one.
	Baseline string `json:"baseline,omitempty"`
}

// Percentiles of one side's call latency, in microseconds.
type Percentiles struct {
	P50  float64 `json:"p50_us"`
	P90  float64 `json:"p90_us"`
	P99  float64 `json:"p99_us"`
	Mean float64 `json:"mean_us"`
	Max  float64 `json:"max_us"`
}

// SideResult is one side's figures.
type SideResult struct {
	Name    string      `json:"name"`
	Latency Percentiles `json:"latency"`
	// Throughput has one entry per number of callers, in the order of
	// CallsParams.Callers.
	Throughput []Throughput `json:"throughput"`
	// RSS is the process's resident memory after the turns.
	RSS int64 `json:"rss_bytes"`
}

// Throughput is one side's figures with one number of concurrent callers.
type Throughput struct {
	Callers     int     `json:"callers"`
	Calls       int64   `json:"calls"`
	CallsPerSec float64 `json:"calls_per_s"`
	// Ratio is CallsPerSec over the direct side's with as many callers.
	Ratio float64 `json:"ratio"`
	// CPUMicrosPerCall is the user+system CPU time of the process the
	// client talks to, per call, over the throughput turns (/proc/PID/stat).
	CPUMicrosPerCall float64 `json:"cpu_us_per_call"`
	// CPUOverRelay is CPUMicrosPerCall over the byte relay's with as many
	// callers: what the side costs against the floor of any hop.
	CPUOverRelay float64 `json:"cpu_over_relay"`
	// AllocsPerCall and BytesPerCall are that process's heap allocations
	// per call over the same turns (Go's MemStats); -1 when unreadable.
	AllocsPerCall float64 `json:"allocs_per_call"`
	BytesPerCall  float64 `json:"bytes_per_call"`
	// SyscallsPerCall are that process's read and write system calls per
	// call over the same turns (/proc/PID/io: syscr + syscw), -1 when
	// unreadable: a hop pays at least one of each per message in each
	// direction unless it carries several messages per call.
	SyscallsPerCall float64 `json:"syscalls_per_call"`
}

// At returns the side's figures with callers concurrent callers (zero if
// not measured).
func (s SideResult) At(callers int) Throughput {
	for _, t := range s.Throughput {
		if t.Callers == callers {
			return t
		}
	}
	return Throughput{}
}

// CallsResult compares the sides of one transport.
type CallsResult struct {
	Transport string       `json:"transport"`
	Params    CallsParams  `json:"params"`
	Sides     []SideResult `json:"sides"`
}

// Side returns the named side's figures (zero if absent).
func (r *CallsResult) Side(name string) SideResult {
	for _, s := range r.Sides {
		if s.Name == name {
			return s
		}
	}
	return SideResult{}
}

// measureCalls times sequential calls on each side, then counts calls with
// each number of concurrent callers, the sides taking turns throughout:
// every round gives each side a turn with each number of callers.
func measureCalls(ctx context.Context, transport string, sides []*side, params CallsParams) (*CallsResult, error) {
	params.Seconds = params.Duration.Seconds()
	samples := make([][]time.Duration, len(sides))
	for range params.Warmup {
		for _, s := range sides {
			if err := s.call(ctx); err != nil {
				return nil, fmt.Errorf("warm-up call to the %s side: %w", s.name, err)
			}
		}
	}
	for done := 0; done < params.Calls; done += params.Block {
		n := min(params.Block, params.Calls-done)
		for i, s := range sides {
			for range n {
				start := time.Now()
				if err := s.call(ctx); err != nil {
					return nil, fmt.Errorf("timed call to the %s side: %w", s.name, err)
				}
				samples[i] = append(samples[i], time.Since(start))
			}
		}
	}
	turn := params.Duration / time.Duration(params.Rounds)
	// counted[i][j]: side i with params.Callers[j] callers.
	counted := make([][]throughputSide, len(sides))
	for i := range counted {
		counted[i] = make([]throughputSide, len(params.Callers))
	}
	for range params.Rounds {
		for j, callers := range params.Callers {
			for i, s := range sides {
				if err := counted[i][j].run(ctx, s, callers, turn); err != nil {
					return nil, fmt.Errorf("%d concurrent callers of the %s side: %w", callers, s.name, err)
				}
			}
		}
	}
	r := &CallsResult{Transport: transport, Params: params}
	for i, s := range sides {
		sr := SideResult{Name: s.name, Latency: percentiles(samples[i])}
		for j, callers := range params.Callers {
			sr.Throughput = append(sr.Throughput, counted[i][j].result(callers))
		}
		sr.RSS, _ = rssBytes(s.process.pid)
		r.Sides = append(r.Sides, sr)
	}
	direct, relay := r.Side(sideDirect), r.Side(sideCopy)
	for i := range r.Sides {
		for j := range r.Sides[i].Throughput {
			t := &r.Sides[i].Throughput[j]
			t.Ratio = ratio(t.CallsPerSec, direct.At(t.Callers).CallsPerSec)
			t.CPUOverRelay = ratio(t.CPUMicrosPerCall, relay.At(t.Callers).CPUMicrosPerCall)
		}
	}
	return r, nil
}

// result is what the turns counted, per call.
func (s *throughputSide) result(callers int) Throughput {
	t := Throughput{Callers: callers, Calls: s.calls, CallsPerSec: s.perSecond(), AllocsPerCall: -1, BytesPerCall: -1, SyscallsPerCall: -1}
	if s.calls > 0 {
		if s.syscallsKnown {
			t.SyscallsPerCall = float64(s.syscalls) / float64(s.calls)
		}
		t.CPUMicrosPerCall = float64(s.cpu.Microseconds()) / float64(s.calls)
		if s.allocsKnown {
			t.AllocsPerCall = float64(s.allocs) / float64(s.calls)
			t.BytesPerCall = float64(s.bytes) / float64(s.calls)
		}
	}
	return t
}

// percentiles uses the nearest-rank definition: p99 of 2,000 samples is the
// 1,980th smallest, a sample that was actually observed.
func percentiles(samples []time.Duration) Percentiles {
	if len(samples) == 0 {
		return Percentiles{}
	}
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	rank := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(sorted)))) - 1
		return micros(sorted[max(i, 0)])
	}
	var sum time.Duration
	for _, d := range sorted {
		sum += d
	}
	return Percentiles{
		P50: rank(0.50), P90: rank(0.90), P99: rank(0.99),
		Mean: micros(sum / time.Duration(len(sorted))),
		Max:  micros(sorted[len(sorted)-1]),
	}
}

func micros(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// ratio is a/b, or 0 when b is zero: JSON has no NaN or infinity, and no
// measured ratio is 0, so 0 reads as "undefined" in both outputs.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// throughputSide accumulates one side's calls and costs over its turns.
type throughputSide struct {
	calls         int64
	elapsed       time.Duration
	cpu           time.Duration
	allocs, bytes uint64
	allocsKnown   bool
	syscalls      uint64
	syscallsKnown bool
	turns         int
}

func (s *throughputSide) perSecond() float64 {
	if s.elapsed <= 0 {
		return 0
	}
	return float64(s.calls) / s.elapsed.Seconds()
}

// run keeps callers calls in flight for d. Calls that started before the
// deadline are waited for and counted, and the elapsed time runs until the
// last one ends, so nothing is counted without its time. The process's CPU
// time and allocations are read just before and just after.
func (s *throughputSide) run(ctx context.Context, sd *side, callers int, d time.Duration) error {
	cpuBefore, _ := cpuTime(sd.process.pid)
	sysBefore, sysErr := syscallCount(sd.process.pid)
	memBefore, memErr := readMemStats(ctx, sd.process.pprof, false)
	var calls atomic.Int64
	var firstErr error
	var errOnce sync.Once
	stop := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	for range callers {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := sd.call(ctx); err != nil {
					errOnce.Do(func() { firstErr = err; close(stop) })
					return
				}
				calls.Add(1)
			}
		})
	}
	timer := time.NewTimer(d)
	select {
	case <-timer.C:
		errOnce.Do(func() { close(stop) })
	case <-stop:
		timer.Stop()
	case <-ctx.Done():
		errOnce.Do(func() { firstErr = ctx.Err(); close(stop) })
	}
	wg.Wait()
	s.elapsed += time.Since(start)
	s.calls += calls.Load()
	cpuAfter, _ := cpuTime(sd.process.pid)
	s.cpu += cpuAfter - cpuBefore
	sysAfter, sysErr2 := syscallCount(sd.process.pid)
	sysKnown := sysErr == nil && sysErr2 == nil
	s.syscallsKnown = sysKnown && (s.turns == 0 || s.syscallsKnown)
	if sysKnown {
		s.syscalls += sysAfter - sysBefore
	}
	memAfter, memErr2 := readMemStats(ctx, sd.process.pprof, false)
	known := memErr == nil && memErr2 == nil
	if s.turns == 0 {
		s.allocsKnown = known
	}
	s.allocsKnown = s.allocsKnown && known
	if known {
		s.allocs += memAfter.mallocs - memBefore.mallocs
		s.bytes += memAfter.totalAlloc - memBefore.totalAlloc
	}
	s.turns++
	return firstErr
}

// syscallCount is how many read and write system calls process pid has
// made (/proc/PID/io, which Linux keeps for processes of the same user).
func syscallCount(pid int) (uint64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the system calls of process %d (the figure needs Linux's /proc): %w", pid, err)
	}
	var total uint64
	found := 0
	for line := range strings.Lines(string(raw)) {
		name, value, ok := strings.Cut(strings.TrimSpace(line), ": ")
		if !ok || (name != "syscr" && name != "syscw") {
			continue
		}
		n, err := strconv.ParseUint(value, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/io: %s: %w", pid, name, err)
		}
		total += n
		found++
	}
	if found != 2 {
		return 0, fmt.Errorf("/proc/%d/io lacks syscr or syscw", pid)
	}
	return total, nil
}
