package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callPaths are two stdio sessions that end at the same kind of upstream:
// one straight to a fixture, one through `toolfold serve` fronting a fixture.
// Both stay open for the latency and the throughput figures, so the two
// sides see the same machine at the same time.
type callPaths struct {
	direct, gateway *stdioProcess
	closeOnce       sync.Once
}

// The tool both paths call: toolfold's flat mode names it <server>__<tool>.
const (
	benchServer = "s01"
	directTool  = "echo"
	gatewayTool = benchServer + "__" + directTool
)

var echoArgs = map[string]any{"text": "hello"}

// openCallPaths starts both paths and checks that each answers the echo tool
// with its argument, so a broken path fails here rather than being timed.
func (h *harness) openCallPaths(ctx context.Context) (*callPaths, error) {
	log := h.newStartLog()
	direct, err := h.connectStdio(ctx, h.command(h.fixture, "-name", benchServer, "-start-log", log))
	if err != nil {
		return nil, err
	}
	config, err := h.writeConfig(1, log)
	if err != nil {
		direct.Close()
		return nil, err
	}
	cmd := h.command(h.toolfold, "serve", "--config", config, "--mode", "flat", "--log-level", "warn")
	cmd.Env = toolfoldEnv(h.path("cache"))
	gateway, err := h.connectStdio(ctx, cmd)
	if err != nil {
		direct.Close()
		return nil, err
	}
	p := &callPaths{direct: direct, gateway: gateway}
	for _, side := range []struct {
		name    string
		session *stdioProcess
		tool    string
	}{{"the fixture directly", direct, directTool}, {"toolfold", gateway, gatewayTool}} {
		res, err := side.session.CallTool(ctx, &mcp.CallToolParams{Name: side.tool, Arguments: echoArgs})
		if err == nil && (res.IsError || resultText(res) != "hello") {
			err = fmt.Errorf("it answered %q instead of echoing \"hello\"", resultText(res))
		}
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("calling %s through %s: %w%s", side.tool, side.name, err, side.session.stderr.suffix())
		}
	}
	return p, nil
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

// Close stops both paths; it may be called more than once.
func (p *callPaths) Close() {
	p.closeOnce.Do(func() {
		p.direct.Close()
		p.gateway.Close()
	})
}

func (p *callPaths) callDirect(ctx context.Context) error {
	return callOK(p.direct.CallTool(ctx, &mcp.CallToolParams{Name: directTool, Arguments: echoArgs}))
}

func (p *callPaths) callGateway(ctx context.Context) error {
	return callOK(p.gateway.CallTool(ctx, &mcp.CallToolParams{Name: gatewayTool, Arguments: echoArgs}))
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

// LatencyParams bound the latency figure.
type LatencyParams struct {
	Calls  int `json:"calls"`  // timed calls per side
	Warmup int `json:"warmup"` // untimed calls per side first
	// Block is how many calls one side makes before the other takes its
	// turn: alternating blocks spread the machine's noise (other builds on a
	// shared box) over both sides instead of over whichever ran second.
	Block int `json:"block"`
}

// Percentiles of one side's call latency, in microseconds.
type Percentiles struct {
	P50  float64 `json:"p50_us"`
	P90  float64 `json:"p90_us"`
	P99  float64 `json:"p99_us"`
	Mean float64 `json:"mean_us"`
	Max  float64 `json:"max_us"`
}

// LatencyResult compares sequential tools/call latency over stdio.
type LatencyResult struct {
	Params   LatencyParams `json:"params"`
	Direct   Percentiles   `json:"direct"`
	Toolfold Percentiles   `json:"toolfold"`
	// Added is toolfold minus direct at each percentile; Ratio is toolfold
	// over direct.
	Added Percentiles `json:"added"`
	Ratio Percentiles `json:"ratio"`
}

// measureLatency times sequential calls on each path, one at a time.
func measureLatency(ctx context.Context, p *callPaths, params LatencyParams) (*LatencyResult, error) {
	for range params.Warmup {
		if err := p.callDirect(ctx); err != nil {
			return nil, fmt.Errorf("warm-up call to the fixture: %w", err)
		}
		if err := p.callGateway(ctx); err != nil {
			return nil, fmt.Errorf("warm-up call through toolfold: %w", err)
		}
	}
	direct := make([]time.Duration, 0, params.Calls)
	gateway := make([]time.Duration, 0, params.Calls)
	timed := func(samples *[]time.Duration, call func(context.Context) error, n int) error {
		for range n {
			start := time.Now()
			if err := call(ctx); err != nil {
				return err
			}
			*samples = append(*samples, time.Since(start))
		}
		return nil
	}
	for done := 0; done < params.Calls; done += params.Block {
		n := min(params.Block, params.Calls-done)
		if err := timed(&direct, p.callDirect, n); err != nil {
			return nil, fmt.Errorf("timed call to the fixture: %w", err)
		}
		if err := timed(&gateway, p.callGateway, n); err != nil {
			return nil, fmt.Errorf("timed call through toolfold: %w", err)
		}
	}
	r := &LatencyResult{Params: params, Direct: percentiles(direct), Toolfold: percentiles(gateway)}
	r.Added = Percentiles{
		P50: r.Toolfold.P50 - r.Direct.P50, P90: r.Toolfold.P90 - r.Direct.P90, P99: r.Toolfold.P99 - r.Direct.P99,
		Mean: r.Toolfold.Mean - r.Direct.Mean, Max: r.Toolfold.Max - r.Direct.Max,
	}
	r.Ratio = Percentiles{
		P50: ratio(r.Toolfold.P50, r.Direct.P50), P90: ratio(r.Toolfold.P90, r.Direct.P90), P99: ratio(r.Toolfold.P99, r.Direct.P99),
		Mean: ratio(r.Toolfold.Mean, r.Direct.Mean), Max: ratio(r.Toolfold.Max, r.Direct.Max),
	}
	return r, nil
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

// ThroughputParams bound the throughput figure.
type ThroughputParams struct {
	Callers int `json:"callers"` // goroutines calling at once on one session
	// Duration is the time each side is measured in total, split into
	// Rounds alternating turns for the same reason as LatencyParams.Block.
	Duration time.Duration `json:"-"`
	Seconds  float64       `json:"seconds_per_side"`
	Rounds   int           `json:"rounds"`
}

// ThroughputResult compares calls per second with concurrent callers.
type ThroughputResult struct {
	Params              ThroughputParams `json:"params"`
	DirectCalls         int64            `json:"direct_calls"`
	ToolfoldCalls       int64            `json:"toolfold_calls"`
	DirectCallsPerSec   float64          `json:"direct_calls_per_s"`
	ToolfoldCallsPerSec float64          `json:"toolfold_calls_per_s"`
	Ratio               float64          `json:"ratio"` // toolfold over direct
}

// measureThroughput runs Callers goroutines on one session per side, as one
// busy client would, and counts completed calls.
func measureThroughput(ctx context.Context, p *callPaths, params ThroughputParams) (*ThroughputResult, error) {
	params.Seconds = params.Duration.Seconds()
	slice := params.Duration / time.Duration(params.Rounds)
	var direct, gateway throughputSide
	for range params.Rounds {
		if err := direct.run(ctx, p.callDirect, params.Callers, slice); err != nil {
			return nil, fmt.Errorf("concurrent calls to the fixture: %w", err)
		}
		if err := gateway.run(ctx, p.callGateway, params.Callers, slice); err != nil {
			return nil, fmt.Errorf("concurrent calls through toolfold: %w", err)
		}
	}
	r := &ThroughputResult{
		Params:              params,
		DirectCalls:         direct.calls,
		ToolfoldCalls:       gateway.calls,
		DirectCallsPerSec:   direct.perSecond(),
		ToolfoldCallsPerSec: gateway.perSecond(),
	}
	r.Ratio = ratio(r.ToolfoldCallsPerSec, r.DirectCallsPerSec)
	return r, nil
}

// throughputSide accumulates one side's calls over its turns.
type throughputSide struct {
	calls   int64
	elapsed time.Duration
}

func (s *throughputSide) perSecond() float64 {
	if s.elapsed <= 0 {
		return 0
	}
	return float64(s.calls) / s.elapsed.Seconds()
}

// run keeps callers calls in flight for d. Calls that started before the
// deadline are waited for and counted, and the elapsed time runs until the
// last one ends, so nothing is counted without its time.
func (s *throughputSide) run(ctx context.Context, call func(context.Context) error, callers int, d time.Duration) error {
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
				if err := call(ctx); err != nil {
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
	return firstErr
}
