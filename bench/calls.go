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

// callPaths are three stdio sessions that end at the same kind of upstream
// fixture: one straight to it, one through a bare Go SDK relay (the fixture's
// -relay mode: the floor for any gateway built on the SDK), and one through
// `toolfold serve`. All stay open for the latency and the throughput
// figures, so every side sees the same machine at the same time.
type callPaths struct {
	direct, relay, gateway *stdioProcess
	closeOnce              sync.Once
}

// The tool every path calls: toolfold's flat mode names it <server>__<tool>.
const (
	benchServer = "s01"
	directTool  = "echo"
	gatewayTool = benchServer + "__" + directTool
)

var echoArgs = map[string]any{"text": "hello"}

// openCallPaths starts the three paths and checks that each answers the echo
// tool with its argument, so a broken path fails here rather than being
// timed.
func (h *harness) openCallPaths(ctx context.Context) (_ *callPaths, err error) {
	p := &callPaths{}
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	log := h.newStartLog()
	if p.direct, err = h.connectStdio(ctx, h.command(h.fixture, "-name", benchServer, "-start-log", log)); err != nil {
		return nil, err
	}
	if p.relay, err = h.connectStdio(ctx, h.command(h.fixture, "-name", benchServer, "-relay")); err != nil {
		return nil, err
	}
	config, err := h.writeConfig(1, log)
	if err != nil {
		return nil, err
	}
	cmd := h.command(h.toolfold, "serve", "--config", config, "--mode", "flat", "--log-level", "warn")
	cmd.Env = toolfoldEnv(h.path("cache"))
	if p.gateway, err = h.connectStdio(ctx, cmd); err != nil {
		return nil, err
	}
	for _, side := range []struct {
		name    string
		session *stdioProcess
		tool    string
	}{{"the fixture directly", p.direct, directTool}, {"the bare SDK relay", p.relay, directTool}, {"toolfold", p.gateway, gatewayTool}} {
		res, err := side.session.CallTool(ctx, &mcp.CallToolParams{Name: side.tool, Arguments: echoArgs})
		if err == nil && (res.IsError || resultText(res) != "hello") {
			err = fmt.Errorf("it answered %q instead of echoing \"hello\"", resultText(res))
		}
		if err != nil {
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

// Close stops the paths that were opened; it may be called more than once.
func (p *callPaths) Close() {
	p.closeOnce.Do(func() {
		for _, s := range []*stdioProcess{p.direct, p.relay, p.gateway} {
			if s != nil {
				s.Close()
			}
		}
	})
}

func (p *callPaths) callDirect(ctx context.Context) error {
	return callOK(p.direct.CallTool(ctx, &mcp.CallToolParams{Name: directTool, Arguments: echoArgs}))
}

func (p *callPaths) callRelay(ctx context.Context) error {
	return callOK(p.relay.CallTool(ctx, &mcp.CallToolParams{Name: directTool, Arguments: echoArgs}))
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
	// Block is how many calls one side makes before the next takes its
	// turn: taking turns spreads the machine's noise (other builds on a
	// shared box) over every side instead of over whichever ran last.
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
	Relay    Percentiles   `json:"sdk_relay"`
	Toolfold Percentiles   `json:"toolfold"`
	// Added is toolfold minus direct at each percentile; Ratio is toolfold
	// over direct; OverRelay is toolfold minus the bare SDK relay, the part
	// of Added that is toolfold's own rather than one more SDK hop's.
	Added     Percentiles `json:"added"`
	Ratio     Percentiles `json:"ratio"`
	OverRelay Percentiles `json:"over_relay"`
}

// measureLatency times sequential calls on each path, one at a time.
func measureLatency(ctx context.Context, p *callPaths, params LatencyParams) (*LatencyResult, error) {
	sides := []struct {
		name    string
		call    func(context.Context) error
		samples []time.Duration
	}{{name: "the fixture", call: p.callDirect}, {name: "the SDK relay", call: p.callRelay}, {name: "toolfold", call: p.callGateway}}
	for range params.Warmup {
		for _, side := range sides {
			if err := side.call(ctx); err != nil {
				return nil, fmt.Errorf("warm-up call to %s: %w", side.name, err)
			}
		}
	}
	for done := 0; done < params.Calls; done += params.Block {
		n := min(params.Block, params.Calls-done)
		for i := range sides {
			side := &sides[i]
			for range n {
				start := time.Now()
				if err := side.call(ctx); err != nil {
					return nil, fmt.Errorf("timed call to %s: %w", side.name, err)
				}
				side.samples = append(side.samples, time.Since(start))
			}
		}
	}
	r := &LatencyResult{Params: params, Direct: percentiles(sides[0].samples), Relay: percentiles(sides[1].samples), Toolfold: percentiles(sides[2].samples)}
	r.Added = r.Toolfold.combine(r.Direct, func(a, b float64) float64 { return a - b })
	r.Ratio = r.Toolfold.combine(r.Direct, ratio)
	r.OverRelay = r.Toolfold.combine(r.Relay, func(a, b float64) float64 { return a - b })
	return r, nil
}

// combine applies f to each statistic of p and q.
func (p Percentiles) combine(q Percentiles, f func(a, b float64) float64) Percentiles {
	return Percentiles{P50: f(p.P50, q.P50), P90: f(p.P90, q.P90), P99: f(p.P99, q.P99), Mean: f(p.Mean, q.Mean), Max: f(p.Max, q.Max)}
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
	RelayCalls          int64            `json:"sdk_relay_calls"`
	ToolfoldCalls       int64            `json:"toolfold_calls"`
	DirectCallsPerSec   float64          `json:"direct_calls_per_s"`
	RelayCallsPerSec    float64          `json:"sdk_relay_calls_per_s"`
	ToolfoldCallsPerSec float64          `json:"toolfold_calls_per_s"`
	Ratio               float64          `json:"ratio"`       // toolfold over direct
	RelayRatio          float64          `json:"relay_ratio"` // the SDK relay over direct
}

// measureThroughput runs Callers goroutines on one session per side, as one
// busy client would, and counts completed calls.
func measureThroughput(ctx context.Context, p *callPaths, params ThroughputParams) (*ThroughputResult, error) {
	params.Seconds = params.Duration.Seconds()
	slice := params.Duration / time.Duration(params.Rounds)
	var direct, relay, gateway throughputSide
	for range params.Rounds {
		if err := direct.run(ctx, p.callDirect, params.Callers, slice); err != nil {
			return nil, fmt.Errorf("concurrent calls to the fixture: %w", err)
		}
		if err := relay.run(ctx, p.callRelay, params.Callers, slice); err != nil {
			return nil, fmt.Errorf("concurrent calls through the SDK relay: %w", err)
		}
		if err := gateway.run(ctx, p.callGateway, params.Callers, slice); err != nil {
			return nil, fmt.Errorf("concurrent calls through toolfold: %w", err)
		}
	}
	r := &ThroughputResult{
		Params:              params,
		DirectCalls:         direct.calls,
		RelayCalls:          relay.calls,
		ToolfoldCalls:       gateway.calls,
		DirectCallsPerSec:   direct.perSecond(),
		RelayCallsPerSec:    relay.perSecond(),
		ToolfoldCallsPerSec: gateway.perSecond(),
	}
	r.Ratio = ratio(r.ToolfoldCallsPerSec, r.DirectCallsPerSec)
	r.RelayRatio = ratio(r.RelayCallsPerSec, r.DirectCallsPerSec)
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
