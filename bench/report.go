package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// The goals issue 3 sets; the table says whether this run met them, and the
// smoke test never checks them (speed is measured, not asserted).
const (
	goalAddedP50Micros = 100.0
	goalCachedStartMS  = 50.0
)

// printTable writes the report for a person: every figure with the
// parameters it was measured with.
func printTable(w io.Writer, r *Report) {
	m := r.Machine
	fmt.Fprintf(w, "toolfold gateway benchmark, %s\n", r.Started.Format("2006-01-02 15:04:05 MST"))
	fmt.Fprintf(w, "machine: %d cores (GOMAXPROCS %d), %s/%s, %s", m.Cores, m.GOMAXPROCS, m.OS, m.Arch, orUnknown(m.CPU))
	if m.LoadAverage != "" {
		fmt.Fprintf(w, ", load average at start %s", m.LoadAverage)
	}
	fmt.Fprintf(w, "\ntoolfold built from %s, %s; client: official Go SDK %s; upstream: bench/fixture (Go SDK) over stdio; loopback only\n",
		m.Source, m.Go, orUnknown(m.SDK))

	if l := r.Latency; l != nil {
		p := l.Params
		fmt.Fprintf(w, "\n1. tools/call latency over stdio: %d timed sequential calls per side after %d warm-up, sides taking turns every %d calls\n"+
			"   (added = toolfold - direct; SDK relay = a bare Go SDK server+client hop with no logic, the floor for a gateway on the SDK)\n",
			p.Calls, p.Warmup, p.Block)
		tw := newTab(w)
		fmt.Fprintln(tw, "\t\tdirect\tSDK relay\ttoolfold\tadded\tratio\ttoolfold - relay\t")
		row := func(name string, pick func(Percentiles) float64, note string) {
			fmt.Fprintf(tw, "\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, us(pick(l.Direct)), us(pick(l.Relay)), us(pick(l.Toolfold)),
				signedUS(pick(l.Added)), times(pick(l.Ratio)), signedUS(pick(l.OverRelay)), note)
		}
		row("p50", func(p Percentiles) float64 { return p.P50 },
			goal(l.Added.P50 < goalAddedP50Micros, fmt.Sprintf("goal: added under %.0f µs", goalAddedP50Micros)))
		row("p90", func(p Percentiles) float64 { return p.P90 }, "")
		row("p99", func(p Percentiles) float64 { return p.P99 }, "")
		row("mean", func(p Percentiles) float64 { return p.Mean }, "")
		row("max", func(p Percentiles) float64 { return p.Max }, "")
		tw.Flush()
	}

	if t := r.Throughput; t != nil {
		p := t.Params
		fmt.Fprintf(w, "\n2. calls per second with %d concurrent callers on one stdio session: %.1f s per side in %d rounds, sides taking turns\n",
			p.Callers, p.Seconds, p.Rounds)
		tw := newTab(w)
		fmt.Fprintln(tw, "\t\tdirect\tSDK relay\ttoolfold\tratio toolfold/direct\tratio relay/direct\t")
		fmt.Fprintf(tw, "\tcalls/s\t%.0f\t%.0f\t%.0f\t%s\t%s\t\n", t.DirectCallsPerSec, t.RelayCallsPerSec, t.ToolfoldCallsPerSec, times(t.Ratio), times(t.RelayRatio))
		fmt.Fprintf(tw, "\tcalls\t%d\t%d\t%d\t\t\t\n", t.DirectCalls, t.RelayCalls, t.ToolfoldCalls)
		tw.Flush()
	}

	if s := r.Startup; s != nil {
		p := s.Params
		fmt.Fprintf(w, "\n3. start to first tools/list answer over stdio, %d servers configured, flat mode: %d starts per side, alternating;\n"+
			"   spawned = fixture processes started, counted %.0f ms after the answer\n", p.Servers, p.Runs, p.SettleMS)
		tw := newTab(w)
		fmt.Fprintln(tw, "\tcatalog\tmedian\tmin\tmax\tinitialize (median)\ttools\tspawned per start\t")
		side := func(name string, sd StartupSide, note string) {
			fmt.Fprintf(tw, "\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", name, ms(sd.MedianMS), ms(sd.MinMS), ms(sd.MaxMS),
				ms(medianOf(sd.InitializeMS)), sd.Tools, ints(sd.Spawned), note)
		}
		side("cached", s.Cached, goal(s.Cached.MedianMS < goalCachedStartMS && allZero(s.Cached.Spawned),
			fmt.Sprintf("goal: under %.0f ms, nothing spawned", goalCachedStartMS)))
		side("none", s.None, "")
		fmt.Fprintf(tw, "\tratio cached/none\t%s\t\t\t\t\t\t\n", times(s.Ratio))
		if len(s.OneServer.RunsMS) > 0 {
			fmt.Fprintf(tw, "\tfloor: one fixture directly\t%s\t%s\t%s\t%s\t%d\t\t\n", ms(s.OneServer.MedianMS), ms(s.OneServer.MinMS),
				ms(s.OneServer.MaxMS), ms(medianOf(s.OneServer.InitializeMS)), s.OneServer.Tools)
		}
		if len(s.Version.RunsMS) > 0 {
			fmt.Fprintf(tw, "\tfloor: toolfold version, exec to exit\t%s\t%s\t%s\t\t\t\t\n", ms(s.Version.MedianMS), ms(s.Version.MinMS), ms(s.Version.MaxMS))
		}
		tw.Flush()
	}

	if len(r.Memory) > 0 {
		p := r.Memory[0]
		fmt.Fprintf(w, "\n4. RSS of toolfold serve --http with %d concurrent streamable-HTTP sessions, each initialized and having listed its tools\n"+
			"   (Go SDK client with its standalone SSE stream; %d servers configured; one process per mode; VmRSS after a first session, then after all)\n",
			p.Sessions, p.Servers)
		tw := newTab(w)
		fmt.Fprintln(tw, "\tmode\ttools listed\tRSS before\tRSS after\tper session\topened in\t")
		for _, mr := range r.Memory {
			fmt.Fprintf(tw, "\t%s\t%d\t%s\t%s\t%s\t%.1f s\t\n", mr.Mode, mr.ToolsPerSession, mib(float64(mr.RSSBefore)),
				mib(float64(mr.RSSAfter)), kib(mr.BytesPerSession), mr.OpenSeconds)
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "\ntotal %.1f s. Numbers from a shared or busy machine are noisy; compare the ratios, and rerun before trusting a change.\n", r.Seconds)
}

func newTab(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

func goal(met bool, what string) string {
	if met {
		return "  " + what + ": met"
	}
	return "  " + what + ": NOT met"
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func us(v float64) string       { return fmt.Sprintf("%.1f µs", v) }
func signedUS(v float64) string { return fmt.Sprintf("%+.1f µs", v) }
func ms(v float64) string       { return fmt.Sprintf("%.1f ms", v) }
func mib(v float64) string      { return fmt.Sprintf("%.1f MiB", v/(1<<20)) }
func kib(v float64) string      { return fmt.Sprintf("%.1f KiB", v/(1<<10)) }

// times prints a ratio; 0 is how ratio reports one that is undefined.
func times(v float64) string {
	if v == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f×", v)
}

func ints(v []int) string {
	parts := make([]string, len(v))
	for i, n := range v {
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, " ")
}

func allZero(v []int) bool {
	for _, n := range v {
		if n != 0 {
			return false
		}
	}
	return true
}

func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	sorted := slices.Clone(v)
	slices.Sort(sorted)
	return median(sorted)
}
