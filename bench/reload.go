package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ReloadParams bound the reload measurement.
type ReloadParams struct {
	// Tools are the catalog sizes served before the reload, made as the
	// scale sweep makes them (the recorded catalogs repeated).
	Tools []int `json:"tools"`
	// Batch is how many stand-ins run at once while the cache is filled.
	Batch int `json:"fill_batch"`
	// Runs is how many reloads are timed per size, each adding a server
	// of its own.
	Runs int `json:"runs"`
}

// ReloadRun is one catalog size's reloads.
type ReloadRun struct {
	Tools   int `json:"tools"`
	Servers int `json:"servers"`
	// Added is the tools of the server each reload adds (a stand-in of
	// the first recorded catalog, never started before: no cached list).
	Added int `json:"added_tools"`
	// ToListChangedMS are the wall times from the renamed config file to
	// the client's tools list_changed after which its list holds the
	// added server's tools, one per reload; Median their median.
	ToListChangedMS []float64 `json:"to_list_changed_ms"`
	Median          float64   `json:"median_ms"`
}

// ReloadResult is the measurement.
type ReloadResult struct {
	Params ReloadParams `json:"params"`
	Runs   []ReloadRun  `json:"runs"`
}

// measureReload serves each size's cached catalog with toolfold serve over
// stdio in flat mode, then saves the config with one server added, as an
// editor saves (a rename), and times the client's list_changed.
func measureReload(ctx context.Context, h *harness, params ReloadParams, progress func(string, ...any)) (*ReloadResult, error) {
	recorded, err := recordedCatalogs(filepath.Join(h.root, "testdata", "catalogs"))
	if err != nil {
		return nil, err
	}
	r := &ReloadResult{Params: params}
	for _, n := range params.Tools {
		servers := standIns(recorded, n)
		log := h.newStartLog()
		cache := h.path("reload-cache")
		progress("reload: %d tools from %d stand-in servers: filling the cache, %d servers at a time…", n, len(servers), params.Batch)
		if err := fillCache(ctx, h, servers, log, cache, params.Batch); err != nil {
			return nil, fmt.Errorf("reload, %d tools: %w", n, err)
		}
		run := ReloadRun{Tools: n, Servers: len(servers), Added: recorded[0].limit}
		progress("reload: %d tools: %d reloads, each adding a server…", n, params.Runs)
		if err := timeReloads(ctx, h, servers, recorded[0], log, cache, params.Runs, &run); err != nil {
			return nil, fmt.Errorf("reload, %d tools: %w", n, err)
		}
		r.Runs = append(r.Runs, run)
	}
	return r, nil
}

func timeReloads(ctx context.Context, h *harness, servers []standIn, extra standIn, log, cache string, runs int, run *ReloadRun) error {
	first, err := h.writeStandInConfig(servers, log)
	if err != nil {
		return err
	}
	config := filepath.Join(filepath.Dir(first), "reload-served.json")
	if err := os.Rename(first, config); err != nil {
		return err
	}
	changed := make(chan time.Time, 64) // when each list_changed arrived
	client := mcp.NewClient(&mcp.Implementation{Name: "toolfold-bench", Version: "1.0.0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- time.Now():
			default:
			}
		},
	})
	cmd := h.command(h.toolfold, "serve", "--config", config, "--mode", "flat", "--log-level", "warn")
	cmd.Env = toolfoldEnv(cache)
	stderr := &tailBuffer{max: 8 << 10}
	cmd.Stderr = stderr
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		h.stop(cmd)
		return fmt.Errorf("connecting: %w%s", err, stderr.suffix())
	}
	defer func() { cs.Close(); h.forget(cmd) }()
	count := func() (int, error) {
		n := 0
		for _, err := range cs.Tools(ctx, nil) {
			if err != nil {
				return 0, fmt.Errorf("tools/list: %w%s", err, stderr.suffix())
			}
			n++
		}
		return n, nil
	}
	// Serving the whole cached catalog: every stand-in's tools listed.
	want := run.Tools
	if _, err := waitListed(ctx, changed, count, want); err != nil {
		return err
	}
	for i := range runs {
		added := extra
		added.key = fmt.Sprintf("reload-added-%d", i+1)
		servers = append(servers, added)
		next, err := h.writeStandInConfig(servers, log)
		if err != nil {
			return err
		}
		// Whatever the last wait left is old news.
		for len(changed) > 0 {
			<-changed
		}
		want += added.limit
		start := time.Now()
		if err := os.Rename(next, config); err != nil {
			return err
		}
		heard, err := waitListed(ctx, changed, count, want)
		if err != nil {
			return fmt.Errorf("reload %d: %w", i+1, err)
		}
		run.ToListChangedMS = append(run.ToListChangedMS, millis(heard.Sub(start)))
	}
	run.Median = medianOf(run.ToListChangedMS)
	return nil
}

// waitListed waits, list_changed by list_changed, until the client's list
// holds want tools, and returns when the list_changed that brought them
// arrived (when the list held them before any did: when it was read).
func waitListed(ctx context.Context, changed <-chan time.Time, count func() (int, error), want int) (time.Time, error) {
	var heard time.Time
	for {
		n, err := count()
		if err != nil {
			return time.Time{}, err
		}
		if n >= want {
			if heard.IsZero() {
				heard = time.Now()
			}
			return heard, nil
		}
		select {
		case heard = <-changed:
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("the list holds %d tools, want %d: %w", n, want, ctx.Err())
		}
	}
}
