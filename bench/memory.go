package main

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MemoryParams bound the memory figure.
type MemoryParams struct {
	Sessions    int      `json:"sessions"`    // held open at once
	Concurrency int      `json:"concurrency"` // sessions being opened at once
	Servers     int      `json:"servers"`     // fixtures in the config
	Modes       []string `json:"modes"`       // one toolfold process per mode
	// Protocol is the version the clients ask for: a 2026-07-28 client
	// holds no session at all, so the figure is of 2025-11-25 sessions
	// unless told otherwise.
	Protocol string `json:"protocol"`
	// NoStream: the clients open no standalone SSE stream (GET), which
	// holds a connection and two goroutines per session on the server.
	NoStream bool `json:"no_stream"`
	// Settle is the pause before each RSS reading, so sessions' standalone
	// SSE streams are all established and the process is quiet.
	Settle   time.Duration `json:"-"`
	SettleMS float64       `json:"settle_ms"`
	// Profile, if set, is a directory for a heap profile and the
	// goroutines of each process holding its sessions
	// (toolfold-memory-MODE[-nostream]-heap.pprof, -goroutines.txt).
	Profile string `json:"-"`
}

// MemoryResult is the resident memory of one toolfold HTTP process before
// and after Sessions sessions were opened, each initialized and having
// listed its tools, all still open.
type MemoryResult struct {
	Mode            string  `json:"mode"`
	Protocol        string  `json:"protocol"`
	NoStream        bool    `json:"no_stream"`
	Sessions        int     `json:"sessions"`
	Servers         int     `json:"servers"`
	ToolsPerSession int     `json:"tools_per_session"` // the first session's list
	RSSBefore       int64   `json:"rss_before_bytes"`
	RSSAfter        int64   `json:"rss_after_bytes"`
	BytesPerSession float64 `json:"bytes_per_session"`
	// What each session adds, from Go's MemStats and goroutine count:
	// the heap in use, goroutine stacks, and goroutines (the rest of RSS
	// is heap the runtime has not returned, and the runtime's own).
	HeapPerSession       float64 `json:"heap_bytes_per_session"`
	StackPerSession      float64 `json:"stack_bytes_per_session"`
	GoroutinesPerSession float64 `json:"goroutines_per_session"`
	OpenSeconds          float64 `json:"open_seconds"` // to open them all
}

// measureMemory runs one `toolfold serve --http` per mode. groups gives each
// session a server of its own (what auto gives clients known to refresh their
// list); search and flat share one server between sessions.
func measureMemory(ctx context.Context, h *harness, params MemoryParams) ([]MemoryResult, error) {
	params.SettleMS = float64(params.Settle) / float64(time.Millisecond)
	config, err := h.writeConfig(params.Servers, h.newStartLog())
	if err != nil {
		return nil, err
	}
	var results []MemoryResult
	for _, mode := range params.Modes {
		r, err := measureMemoryMode(ctx, h, config, mode, params)
		if err != nil {
			return nil, fmt.Errorf("memory in %s mode: %w", mode, err)
		}
		results = append(results, *r)
	}
	return results, nil
}

func measureMemoryMode(ctx context.Context, h *harness, config, mode string, params MemoryParams) (*MemoryResult, error) {
	var pprofAddr string
	srv, err := retryPortClash(func() (*httpServer, error) {
		var err error
		if pprofAddr, err = freeLoopbackAddr(); err != nil {
			return nil, err
		}
		return h.startHTTP(ctx, config, h.path("cache"), "--mode", mode, "--pprof", pprofAddr)
	})
	if err != nil {
		return nil, err
	}
	defer h.stopHTTP(srv)
	// One HTTP client for every session, with room for every connection to
	// be reused: the figure is toolfold's memory, not connection churn.
	transport := &http.Transport{MaxIdleConns: 0, MaxIdleConnsPerHost: params.Sessions + params.Concurrency, IdleConnTimeout: time.Minute}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}
	open := func() (*mcp.ClientSession, int, error) {
		c := mcp.NewClient(&mcp.Implementation{Name: "toolfold-bench", Version: "1.0.0"}, nil)
		var opts *mcp.ClientSessionOptions
		if params.Protocol != "" {
			opts = &mcp.ClientSessionOptions{ProtocolVersion: params.Protocol}
		}
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.endpoint, HTTPClient: client, DisableStandaloneSSE: params.NoStream}, opts)
		if err != nil {
			return nil, 0, err
		}
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			cs.Close()
			return nil, 0, err
		}
		return cs, len(res.Tools), nil
	}
	// A first session, closed again, so that whatever toolfold sets up on
	// its first client is in the baseline rather than spread over sessions.
	first, tools, err := open()
	if err != nil {
		return nil, fmt.Errorf("opening a first session: %w%s", err, srv.stderr.suffix())
	}
	first.Close()
	if err := sleep(ctx, params.Settle); err != nil {
		return nil, err
	}
	base := "http://" + pprofAddr
	before, err := readHolding(ctx, srv.cmd.Process.Pid, base)
	if err != nil {
		return nil, err
	}

	sessions := make([]*mcp.ClientSession, params.Sessions)
	defer closeAll(sessions, params.Concurrency)
	started := time.Now()
	errs := make([]error, params.Sessions)
	limit := make(chan struct{}, params.Concurrency)
	var wg sync.WaitGroup
	for i := range sessions {
		limit <- struct{}{}
		wg.Go(func() {
			defer func() { <-limit }()
			sessions[i], _, errs[i] = open()
		})
	}
	wg.Wait()
	openSeconds := time.Since(started).Seconds()
	if failed, err := countErrors(errs); err != nil {
		return nil, fmt.Errorf("%d of %d sessions failed to open, the first with: %w%s", failed, params.Sessions, err, srv.stderr.suffix())
	}
	if err := sleep(ctx, params.Settle); err != nil {
		return nil, err
	}
	after, err := readHolding(ctx, srv.cmd.Process.Pid, base)
	if err != nil {
		return nil, err
	}
	perSession := func(before, after int64) float64 {
		return float64(after-before) / float64(params.Sessions)
	}
	if params.Profile != "" {
		// The heap, and the goroutines as text, grouped by stack: what each
		// session's goroutines wait in.
		prefix := filepath.Join(params.Profile, "toolfold-memory-"+mode+streamTag(params.NoStream))
		if err := saveProfile(ctx, base+"/debug/pprof/heap", prefix+"-heap.pprof"); err != nil {
			return nil, err
		}
		if err := saveProfile(ctx, base+"/debug/pprof/goroutine?debug=1", prefix+"-goroutines.txt"); err != nil {
			return nil, err
		}
	}
	return &MemoryResult{
		Mode:                 mode,
		Protocol:             params.Protocol,
		NoStream:             params.NoStream,
		Sessions:             params.Sessions,
		Servers:              params.Servers,
		ToolsPerSession:      tools,
		RSSBefore:            before.rss,
		RSSAfter:             after.rss,
		BytesPerSession:      perSession(before.rss, after.rss),
		HeapPerSession:       perSession(before.heap, after.heap),
		StackPerSession:      perSession(before.stacks, after.stacks),
		GoroutinesPerSession: perSession(before.goroutines, after.goroutines),
		OpenSeconds:          openSeconds,
	}, nil
}

// streamTag tells the profiles of clients without a standalone stream
// apart.
func streamTag(noStream bool) string {
	if noStream {
		return "-nostream"
	}
	return ""
}

// holding is what a process holds at one moment.
type holding struct {
	rss, heap, stacks, goroutines int64
}

// readHolding reads a Go process's RSS (from /proc), and from its profiler
// at base its live heap (after a collection), goroutine stacks and
// goroutines.
func readHolding(ctx context.Context, pid int, base string) (holding, error) {
	rss, err := rssBytes(pid)
	if err != nil {
		return holding{}, err
	}
	mem, err := readMemStats(ctx, base, true)
	if err != nil {
		return holding{}, err
	}
	goroutines, err := readGoroutines(ctx, base)
	if err != nil {
		return holding{}, err
	}
	return holding{rss, int64(mem.heapInuse), int64(mem.stackInuse), int64(goroutines)}, nil
}

// closeAll closes the sessions that were opened, a few at a time.
func closeAll(sessions []*mcp.ClientSession, concurrency int) {
	limit := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	for _, cs := range sessions {
		if cs == nil {
			continue
		}
		limit <- struct{}{}
		wg.Go(func() {
			defer func() { <-limit }()
			cs.Close()
		})
	}
	wg.Wait()
}

// countErrors returns how many errs are set, and the first of them.
func countErrors(errs []error) (n int, first error) {
	for _, err := range errs {
		if err != nil {
			if first == nil {
				first = err
			}
			n++
		}
	}
	return n, first
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
