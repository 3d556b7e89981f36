package main

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// StartupParams bound the start-up figure.
type StartupParams struct {
	Servers int `json:"servers"` // fixtures in the config
	Runs    int `json:"runs"`    // starts per side
	// Settle is how long the benchmark keeps toolfold running after the
	// answer before counting fixture starts, so a server spawned in the
	// background just after answering is still caught.
	Settle   time.Duration `json:"-"`
	SettleMS float64       `json:"settle_ms"`
}

// StartupSide is one side's starts: with a cached catalog, or with none.
type StartupSide struct {
	// RunsMS is each start's time from launching the process to the answer
	// of the first tools/list, in milliseconds; InitializeMS is the part of
	// it until initialize was answered.
	RunsMS       []float64 `json:"runs_ms"`
	InitializeMS []float64 `json:"initialize_ms"`
	MedianMS     float64   `json:"median_ms"`
	MinMS        float64   `json:"min_ms"`
	MaxMS        float64   `json:"max_ms"`
	// Spawned is how many fixture processes each start launched.
	Spawned []int `json:"spawned"`
	// Tools is how many tools the first tools/list answered with, in the
	// last run (each fixture serves 4).
	Tools int `json:"tools"`
}

// StartupResult compares a start with every server's tool list cached on
// disk to a start that must launch every server to learn its tools.
type StartupResult struct {
	Params StartupParams `json:"params"`
	Cached StartupSide   `json:"cached"`
	None   StartupSide   `json:"none"`
	Ratio  float64       `json:"ratio"` // cached median over uncached median
	// The floors a cached start is up against, measured in the same turns:
	// one fixture started directly to its first tools/list (a bare Go SDK
	// server: what any stdio server costs), and `toolfold version` from
	// exec to exit (what toolfold's process costs before serving anything).
	OneServer StartupSide `json:"one_server_directly"`
	Version   StartupSide `json:"toolfold_version"`
}

// measureStartup alternates uncached and cached starts of `toolfold serve`
// over stdio in flat mode, so the first tools/list carries every tool. The
// first uncached start fills the cache every cached start then reads.
func measureStartup(ctx context.Context, h *harness, params StartupParams) (*StartupResult, error) {
	params.SettleMS = float64(params.Settle) / float64(time.Millisecond)
	log := h.newStartLog()
	config, err := h.writeConfig(params.Servers, log)
	if err != nil {
		return nil, err
	}
	r := &StartupResult{Params: params}
	var filledCache string
	for i := range params.Runs {
		empty := h.path("cache")
		if err := startOnce(ctx, h, config, empty, log, params.Settle, &r.None); err != nil {
			return nil, fmt.Errorf("start with no cached catalog: %w", err)
		}
		if i == 0 {
			if err := checkCacheFilled(empty, params.Servers); err != nil {
				return nil, err
			}
			filledCache = empty
		}
		if err := startOnce(ctx, h, config, filledCache, log, params.Settle, &r.Cached); err != nil {
			return nil, fmt.Errorf("start with a cached catalog: %w", err)
		}
		if err := startFixtureOnce(ctx, h, &r.OneServer); err != nil {
			return nil, fmt.Errorf("start of one fixture directly: %w", err)
		}
		if err := runVersionOnce(ctx, h, &r.Version); err != nil {
			return nil, err
		}
	}
	for _, side := range []*StartupSide{&r.Cached, &r.None, &r.OneServer, &r.Version} {
		side.summarize()
	}
	r.Ratio = ratio(r.Cached.MedianMS, r.None.MedianMS)
	return r, nil
}

// startOnce launches toolfold with the catalog cache in cacheDir, times it to
// the first tools/list answer, and records how many fixtures it spawned.
func startOnce(ctx context.Context, h *harness, config, cacheDir, log string, settle time.Duration, side *StartupSide) error {
	before, err := readStarts(log)
	if err != nil {
		return err
	}
	cmd := h.command(h.toolfold, "serve", "--config", config, "--mode", "flat", "--log-level", "warn")
	cmd.Env = toolfoldEnv(cacheDir)
	start := time.Now()
	p, err := h.connectStdio(ctx, cmd)
	if err != nil {
		return err
	}
	defer p.Close()
	initialized := time.Since(start)
	res, err := p.ListTools(ctx, nil)
	if err != nil {
		return fmt.Errorf("tools/list: %w%s", err, p.stderr.suffix())
	}
	answered := time.Since(start)
	tools := len(res.Tools)
	for cursor := res.NextCursor; cursor != ""; { // count the rest, untimed
		page, err := p.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			return fmt.Errorf("tools/list, next page: %w", err)
		}
		tools += len(page.Tools)
		cursor = page.NextCursor
	}
	select {
	case <-time.After(settle):
	case <-ctx.Done():
		return ctx.Err()
	}
	after, err := readStarts(log)
	if err != nil {
		return err
	}
	side.RunsMS = append(side.RunsMS, millis(answered))
	side.InitializeMS = append(side.InitializeMS, millis(initialized))
	side.Spawned = append(side.Spawned, len(after)-len(before))
	side.Tools = tools
	return nil
}

// startFixtureOnce times one fixture from launch to its first tools/list.
func startFixtureOnce(ctx context.Context, h *harness, side *StartupSide) error {
	start := time.Now()
	p, err := h.connectStdio(ctx, h.command(h.fixture, "-name", "alone"))
	if err != nil {
		return err
	}
	defer p.Close()
	initialized := time.Since(start)
	res, err := p.ListTools(ctx, nil)
	if err != nil {
		return fmt.Errorf("tools/list: %w%s", err, p.stderr.suffix())
	}
	side.RunsMS = append(side.RunsMS, millis(time.Since(start)))
	side.InitializeMS = append(side.InitializeMS, millis(initialized))
	side.Tools = len(res.Tools)
	return nil
}

// runVersionOnce times `toolfold version` from exec to exit: the process's
// start-up (runtime and package initialization) with nothing served.
func runVersionOnce(ctx context.Context, h *harness, side *StartupSide) error {
	cmd := h.command(h.toolfold, "version")
	stderr := &tailBuffer{max: 4 << 10}
	cmd.Stderr = stderr
	start := time.Now()
	err := cmd.Run()
	elapsed := time.Since(start)
	h.forget(cmd)
	if err != nil {
		return fmt.Errorf("toolfold version: %w%s", err, stderr.suffix())
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	side.RunsMS = append(side.RunsMS, millis(elapsed))
	return nil
}

// checkCacheFilled makes sure the uncached start left a cache file per
// server; otherwise the cached starts would silently measure a miss.
func checkCacheFilled(cacheDir string, servers int) error {
	var files int
	err := filepath.WalkDir(cacheDir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files++
		}
		return err
	})
	if err != nil || files < servers {
		return fmt.Errorf("after a start with %d servers, toolfold's cache in %s holds %d files (%v); the cached start cannot be measured", servers, cacheDir, files, err)
	}
	return nil
}

func (s *StartupSide) summarize() {
	if len(s.RunsMS) == 0 {
		return
	}
	sorted := slices.Clone(s.RunsMS)
	slices.Sort(sorted)
	s.MinMS, s.MaxMS = sorted[0], sorted[len(sorted)-1]
	s.MedianMS = median(sorted)
}

// median of sorted values; the mean of the middle two for an even count.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

func millis(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
