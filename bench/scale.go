package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ScaleParams bound the scale sweep.
type ScaleParams struct {
	// Tools are the catalog sizes, each made by repeating the recorded
	// catalogs (testdata/catalogs, azure-all left out) under new names
	// ("github", "github-2", …) until there are that many tools.
	Tools []int `json:"tools"`
	// Batch is how many stand-in servers run at once while the cache is
	// filled: all of them at once would not fit in memory.
	Batch int `json:"fill_batch"`
	// Mode is the presentation of the measured start.
	Mode string `json:"mode"`
	// Profile is a directory for each size's heap profile, and the CPU
	// profile of a second, untimed start; empty takes none.
	Profile string `json:"-"`
	// ProfileTime is how long that CPU profile runs from the launch: long
	// enough for the start to end inside it. With Profile, find_tools is
	// profiled as long, with calls made back to back.
	ProfileTime time.Duration `json:"-"`
	// OneServer, when positive, adds a run of one stand-in server with
	// that many tools (the recorded catalogs' tools repeated under new
	// names), listed in one unpaged tools/list: the size of the largest
	// servers, which used to exceed the message bound.
	OneServer int `json:"one_server_tools"`
	// FindCalls is how many sequential find_tools calls, and as many
	// pings, are timed against the started toolfold; 0 times none. The
	// queries are the requests of internal/search's evaluation sets.
	FindCalls int `json:"find_calls"`
}

// ScaleRun is one catalog size's cached start.
type ScaleRun struct {
	Tools   int `json:"tools"`
	Servers int `json:"servers"`
	// FillSeconds is how long filling the cache took (untimed otherwise:
	// it runs every stand-in server once).
	FillSeconds float64 `json:"fill_seconds"`
	// CPUSeconds is toolfold's user + system time from launch to the
	// answer of the first tools/list; InitializeMS and ListMS the wall
	// times to the initialize answer and to the list's.
	CPUSeconds float64 `json:"cpu_seconds"`
	// FirstCPUSeconds is the same of the untimed start before it, the
	// first on this cache, which pins every definition in a new lock: the
	// timed start is then a restart on an unchanged, pinned catalog, as
	// a user's every start after the first is.
	FirstCPUSeconds float64 `json:"first_cpu_seconds,omitempty"`
	InitializeMS    float64 `json:"initialize_ms"`
	ListMS          float64 `json:"list_ms"`
	// Listed is how many tools the first tools/list answered with.
	Listed int `json:"listed"`
	// RSS is toolfold's VmRSS just after the answer; Heap its heap in use
	// after a collection, read through its profiler.
	RSS         int64   `json:"rss_bytes"`
	Heap        uint64  `json:"heap_bytes"`
	RSSPerTool  float64 `json:"rss_bytes_per_tool"`
	HeapPerTool float64 `json:"heap_bytes_per_tool"`
	// Spawned counts stand-in servers the cached start launched: none is
	// expected, every list being cached.
	Spawned     int    `json:"spawned"`
	HeapProfile string `json:"heap_profile,omitempty"`
	CPUProfile  string `json:"cpu_profile,omitempty"`
	// Find and Ping are the latencies of the timed find_tools calls and of
	// pings in the same session, taking turns; FindOverPing is Find's p50
	// less Ping's, what finding costs beyond a round trip.
	Find         Percentiles `json:"find_tools"`
	Ping         Percentiles `json:"ping"`
	FindOverPing float64     `json:"find_p50_over_ping_us"`
	// FindCPU and PingCPU are toolfold's own CPU time per timed
	// find_tools call and per ping, in µs (its threads' schedstat, read
	// around each turn): how much of FindOverPing is toolfold computing, and
	// how much is the client, the pipe and waiting.
	FindCPU        float64 `json:"find_cpu_us"`
	PingCPU        float64 `json:"ping_cpu_us"`
	FindCPUProfile string  `json:"find_cpu_profile,omitempty"`
}

// ScaleResult is the sweep.
type ScaleResult struct {
	Params ScaleParams `json:"params"`
	Runs   []ScaleRun  `json:"runs"`
	// OneServer is the run of ScaleParams.OneServer tools from one
	// server; its cache was filled by reading the server's whole list.
	OneServer *ScaleRun `json:"one_server,omitempty"`
}

// Growth is the ratio of CPU-seconds between the last two sizes, with the
// ratio of their tool counts: linear growth makes them equal.
func (r *ScaleResult) Growth() (cpu, tools float64, ok bool) {
	if len(r.Runs) < 2 {
		return 0, 0, false
	}
	a, b := r.Runs[len(r.Runs)-2], r.Runs[len(r.Runs)-1]
	return ratio(b.CPUSeconds, a.CPUSeconds), ratio(float64(b.Tools), float64(a.Tools)), true
}

// standIn is one stand-in server of a synthesised catalog.
type standIn struct {
	key   string
	file  string // the recorded catalog it serves
	limit int    // how many of its tools; 0 is all
	// unpaged lists every tool in one tools/list answer.
	unpaged bool
}

// measureScale fills a cache for each size with the stand-ins, batch by
// batch, then times one cached start of `toolfold serve` over stdio to its
// first tools/list.
func measureScale(ctx context.Context, h *harness, params ScaleParams, progress func(string, ...any)) (*ScaleResult, error) {
	recorded, err := recordedCatalogs(filepath.Join(h.root, "testdata", "catalogs"))
	if err != nil {
		return nil, err
	}
	r := &ScaleResult{Params: params}
	for _, n := range params.Tools {
		servers := standIns(recorded, n)
		log := h.newStartLog()
		cache := h.path("scale-cache")
		progress("scale: %d tools from %d stand-in servers: filling the cache, %d servers at a time…", n, len(servers), params.Batch)
		began := time.Now()
		if err := fillCache(ctx, h, servers, log, cache, params.Batch); err != nil {
			return nil, fmt.Errorf("scale, %d tools: %w", n, err)
		}
		run := ScaleRun{Tools: n, Servers: len(servers), FillSeconds: time.Since(began).Seconds()}
		config, err := h.writeStandInConfig(servers, log)
		if err != nil {
			return nil, err
		}
		progress("scale: %d tools: a first cached start, which pins every definition…", n)
		first := ScaleRun{Tools: n, Servers: len(servers)}
		firstParams := params
		firstParams.Profile, firstParams.FindCalls = "", 0
		if err := startScaled(ctx, h, config, cache, log, firstParams, &first); err != nil {
			return nil, fmt.Errorf("scale, %d tools: first cached start: %w", n, err)
		}
		run.FirstCPUSeconds = first.CPUSeconds
		progress("scale: %d tools: one cached restart in %s mode…", n, params.Mode)
		if err := startScaled(ctx, h, config, cache, log, params, &run); err != nil {
			return nil, fmt.Errorf("scale, %d tools: cached start: %w", n, err)
		}
		if params.Profile != "" {
			progress("scale: %d tools: a second start, profiled for %v…", n, params.ProfileTime)
			file := filepath.Join(params.Profile, fmt.Sprintf("toolfold-scale-%d-start-cpu.pprof", n))
			if err := profileStart(ctx, h, config, cache, params, file); err != nil {
				return nil, fmt.Errorf("scale, %d tools: profiled start: %w", n, err)
			}
			run.CPUProfile = file
		}
		r.Runs = append(r.Runs, run)
	}
	if n := params.OneServer; n > 0 {
		progress("scale: one server of %d tools, listed unpaged: filling the cache from it, then one cached start…", n)
		file, err := h.mergeCatalogs(standIns(recorded, n))
		if err != nil {
			return nil, err
		}
		one := []standIn{{key: "one", file: file, limit: n, unpaged: true}}
		log := h.newStartLog()
		cache := h.path("scale-cache")
		began := time.Now()
		if err := fillCache(ctx, h, one, log, cache, 1); err != nil {
			return nil, fmt.Errorf("scale, one server of %d tools: %w", n, err)
		}
		run := ScaleRun{Tools: n, Servers: 1, FillSeconds: time.Since(began).Seconds()}
		config, err := h.writeStandInConfig(one, log)
		if err != nil {
			return nil, err
		}
		oneParams := params
		oneParams.Profile, oneParams.FindCalls = "", 0
		if err := startScaled(ctx, h, config, cache, log, oneParams, &run); err != nil {
			return nil, fmt.Errorf("scale, one server of %d tools: cached start: %w", n, err)
		}
		r.OneServer = &run
	}
	return r, nil
}

// mergeCatalogs writes one catalog of the stand-ins' tools, each renamed
// after its stand-in ("github-2_create_issue") so that names stay unique.
func (h *harness) mergeCatalogs(servers []standIn) (string, error) {
	var tools []json.RawMessage
	for _, s := range servers {
		raw, err := os.ReadFile(s.file)
		if err != nil {
			return "", err
		}
		var doc struct {
			Tools []map[string]json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			return "", fmt.Errorf("%s: %w", s.file, err)
		}
		for _, t := range doc.Tools[:s.limit] {
			var name string
			if err := json.Unmarshal(t["name"], &name); err != nil {
				return "", fmt.Errorf("%s: a tool without a name: %w", s.file, err)
			}
			t["name"], _ = json.Marshal(s.key + "_" + name)
			b, err := json.Marshal(t)
			if err != nil {
				return "", err
			}
			tools = append(tools, b)
		}
	}
	raw, err := json.Marshal(map[string]any{"tools": tools})
	if err != nil {
		return "", err
	}
	path := h.path("one-server-catalog") + ".json"
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		return "", fmt.Errorf("writing the one-server catalog: %w", err)
	}
	return path, nil
}

// recordedCatalogs lists the recorded catalogs with their tool counts, in
// name order.
func recordedCatalogs(dir string) ([]standIn, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no recorded catalogs in %s (%v): the scale sweep needs testdata/catalogs", dir, err)
	}
	slices.Sort(files)
	var out []standIn
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		if name == "azure-all" { // azure in another mode
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var doc struct {
			Tools []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if len(doc.Tools) > 0 {
			out = append(out, standIn{key: name, file: f, limit: len(doc.Tools)})
		}
	}
	return out, nil
}

// standIns repeats the recorded catalogs under new names until they hold n
// tools, the last one cut short.
func standIns(recorded []standIn, n int) []standIn {
	var out []standIn
	for copyNo, left := 1, n; left > 0; copyNo++ {
		for _, rc := range recorded {
			if left == 0 {
				break
			}
			s := rc
			if copyNo > 1 {
				s.key = fmt.Sprintf("%s-%d", rc.key, copyNo)
			}
			s.limit = min(rc.limit, left)
			left -= s.limit
			out = append(out, s)
		}
	}
	return out
}

// writeStandInConfig writes a config of stand-in servers. A server's entry
// is the same in every config it is in, so its cache entry is too.
func (h *harness) writeStandInConfig(servers []standIn, startLog string) (string, error) {
	mcpServers := map[string]any{}
	for _, s := range servers {
		args := []string{"-name", s.key, "-catalog", s.file, "-limit", strconv.Itoa(s.limit), "-start-log", startLog}
		if s.unpaged {
			args = append(args, "-page-size", strconv.Itoa(s.limit+1))
		}
		mcpServers[s.key] = map[string]any{"command": h.fixture, "args": args}
	}
	raw, err := json.Marshal(map[string]any{"mcpServers": mcpServers})
	if err != nil {
		return "", err
	}
	path := h.path("scale") + ".json"
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		return "", fmt.Errorf("writing a stand-in config: %w", err)
	}
	return path, nil
}

// fillCache runs `toolfold tools` over the servers, batch at a time, so
// that each server's list lands in the cache; toolfold stops each batch's
// servers when it exits.
func fillCache(ctx context.Context, h *harness, servers []standIn, log, cache string, batch int) error {
	for at := 0; at < len(servers); at += batch {
		part := servers[at:min(at+batch, len(servers))]
		config, err := h.writeStandInConfig(part, log)
		if err != nil {
			return err
		}
		cmd := h.command(h.toolfold, "tools", "--config", config)
		cmd.Env = toolfoldEnv(cache)
		cmd.Stdout = io.Discard
		stderr := &tailBuffer{max: 4 << 10}
		cmd.Stderr = stderr
		err = cmd.Run()
		h.forget(cmd)
		if err != nil {
			return fmt.Errorf("filling the cache with servers %d–%d: %w%s", at+1, at+len(part), err, stderr.suffix())
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return checkCacheFilled(cache, len(servers))
}

// startScaled launches toolfold on the full config with the filled cache
// and records its cost to the first tools/list.
func startScaled(ctx context.Context, h *harness, config, cache, log string, params ScaleParams, run *ScaleRun) error {
	before, err := readStarts(log)
	if err != nil {
		return err
	}
	var start time.Time
	var addr string
	p, err := retryPortClash(func() (*stdioProcess, error) {
		var err error
		if addr, err = freeLoopbackAddr(); err != nil {
			return nil, err
		}
		cmd := h.command(h.toolfold, "serve", "--config", config, "--mode", params.Mode, "--log-level", "warn", "--pprof", addr)
		cmd.Env = toolfoldEnv(cache)
		start = time.Now()
		return h.connectStdio(ctx, cmd)
	})
	if err != nil {
		return err
	}
	defer p.Close()
	run.InitializeMS = millis(time.Since(start))
	res, err := p.ListTools(ctx, nil)
	if err != nil {
		return fmt.Errorf("tools/list: %w%s", err, p.stderr.suffix())
	}
	run.ListMS = millis(time.Since(start))
	pid := p.cmd.Process.Pid
	cpu, err := cpuTime(pid)
	if err != nil {
		return err
	}
	if run.RSS, err = rssBytes(pid); err != nil {
		return err
	}
	run.CPUSeconds = cpu.Seconds()
	run.Listed = len(res.Tools)
	base := "http://" + addr
	m, err := readMemStats(ctx, base, true)
	if err != nil {
		return err
	}
	run.Heap = m.heapInuse
	run.RSSPerTool = float64(run.RSS) / float64(run.Tools)
	run.HeapPerTool = float64(run.Heap) / float64(run.Tools)
	if params.Profile != "" {
		file := filepath.Join(params.Profile, fmt.Sprintf("toolfold-scale-%d-heap.pprof", run.Tools))
		if err := saveProfile(ctx, base+"/debug/pprof/heap", file); err != nil {
			return err
		}
		run.HeapProfile = file
	}
	after, err := readStarts(log)
	if err != nil {
		return err
	}
	run.Spawned = len(after) - len(before)
	if params.FindCalls > 0 {
		queries, err := findQueries(h.root)
		if err != nil {
			return err
		}
		if err := timeFind(ctx, p, queries, params.FindCalls, run); err != nil {
			return err
		}
		if params.Profile != "" {
			file := filepath.Join(params.Profile, fmt.Sprintf("toolfold-scale-%d-find-cpu.pprof", run.Tools))
			if err := profileFind(ctx, p, base, queries, params.ProfileTime, file); err != nil {
				return err
			}
			run.FindCPUProfile = file
		}
	}
	return nil
}

// findQueries are the requests of internal/search's evaluation sets: what
// people ask for, in their words, over the catalogs the sweep repeats.
func findQueries(root string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(root, "internal", "search", "testdata", "eval*.json"))
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	var out []string
	for _, f := range files {
		if strings.HasSuffix(f, ".agent.json") {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var cases []struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(raw, &cases); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for _, c := range cases {
			out = append(out, c.Query)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no requests in %s: find_tools is timed with internal/search's evaluation sets", filepath.Join(root, "internal", "search", "testdata"))
	}
	return out, nil
}

// findBlock is how many find_tools calls run before as many pings: the two
// take turns, so that a change in the machine's load touches both.
const findBlock = 50

// timeFind times calls sequential find_tools calls, cycling through the
// queries, and as many pings, in turns of findBlock, after one untimed turn.
func timeFind(ctx context.Context, p *stdioProcess, queries []string, calls int, run *ScaleRun) error {
	var finds, pings []time.Duration
	var findCPU, pingCPU time.Duration
	pid := p.cmd.Process.Pid
	next := 0
	turn := func(n int, timed bool) error {
		before, err := cpuTimeFine(pid)
		if err != nil {
			return err
		}
		for range n {
			q := queries[next%len(queries)]
			next++
			start := time.Now()
			if err := findOnce(ctx, p, q); err != nil {
				return err
			}
			if timed {
				finds = append(finds, time.Since(start))
			}
		}
		between, err := cpuTimeFine(pid)
		if err != nil {
			return err
		}
		for range n {
			start := time.Now()
			if err := p.Ping(ctx, nil); err != nil {
				return fmt.Errorf("ping: %w%s", err, p.stderr.suffix())
			}
			if timed {
				pings = append(pings, time.Since(start))
			}
		}
		after, err := cpuTimeFine(pid)
		if err != nil {
			return err
		}
		if timed {
			findCPU += between - before
			pingCPU += after - between
		}
		return nil
	}
	if err := turn(min(findBlock, calls), false); err != nil {
		return err
	}
	for done := 0; done < calls; done += findBlock {
		if err := turn(min(findBlock, calls-done), true); err != nil {
			return err
		}
	}
	run.Find, run.Ping = percentiles(finds), percentiles(pings)
	run.FindOverPing = run.Find.P50 - run.Ping.P50
	if len(finds) > 0 {
		run.FindCPU = float64(findCPU.Microseconds()) / float64(len(finds))
		run.PingCPU = float64(pingCPU.Microseconds()) / float64(len(pings))
	}
	return nil
}

// findOnce calls find_tools with one query and checks that it answered.
func findOnce(ctx context.Context, p *stdioProcess, query string) error {
	res, err := p.CallTool(ctx, &mcp.CallToolParams{Name: "find_tools", Arguments: map[string]any{"query": query}})
	if err != nil {
		return fmt.Errorf("find_tools %q: %w%s", query, err, p.stderr.suffix())
	}
	if res.IsError {
		return fmt.Errorf("find_tools %q answered with an error: %s", query, resultText(res))
	}
	return nil
}

// profileFind records toolfold's CPU profile for d while find_tools is
// called back to back, so the profile holds little but finding.
func profileFind(ctx context.Context, p *stdioProcess, base string, queries []string, d time.Duration, file string) error {
	url := fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, max(int(d.Seconds()), 1))
	done := make(chan error, 1)
	go func() { done <- saveProfile(ctx, url, file) }()
	for i := 0; ; i++ {
		select {
		case err := <-done:
			return err
		default:
		}
		if err := findOnce(ctx, p, queries[i%len(queries)]); err != nil {
			<-done
			return err
		}
	}
}

// profileStart launches toolfold as startScaled does, with no client:
// serve builds its catalog before it reads a request. It records the CPU
// profile from as soon as the profiler answers until ProfileTime is up.
func profileStart(ctx context.Context, h *harness, config, cache string, params ScaleParams, file string) error {
	addr, err := freeLoopbackAddr()
	if err != nil {
		return err
	}
	cmd := h.command(h.toolfold, "serve", "--config", config, "--mode", params.Mode, "--log-level", "warn", "--pprof", addr)
	cmd.Env = toolfoldEnv(cache)
	stdin, err := cmd.StdinPipe() // held open: serve ends when stdin does
	if err != nil {
		return err
	}
	stderr := &tailBuffer{max: 4 << 10}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		h.forget(cmd)
		return err
	}
	defer func() {
		stdin.Close()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		h.forget(cmd)
	}()
	// The profiler listens before the catalog is built: poll for it.
	base := "http://" + addr
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		resp, err := http.Get(base + "/debug/pprof/")
		if err == nil {
			resp.Body.Close()
			break
		}
		if err := sleep(ctx, 5*time.Millisecond); err != nil {
			return err
		}
	}
	url := fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, int(params.ProfileTime.Seconds()))
	if err := saveProfile(ctx, url, file); err != nil {
		return fmt.Errorf("%w%s", err, stderr.suffix())
	}
	return nil
}
