package upstream

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/config"
)

// errorLog keeps the messages logged at error level.
type errorLog struct {
	mu   sync.Mutex
	msgs []string
}

func (h *errorLog) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelError }

func (h *errorLog) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs = append(h.msgs, r.Message)
	return nil
}

func (h *errorLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *errorLog) WithGroup(string) slog.Handler      { return h }

func (h *errorLog) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.msgs
	h.msgs = nil
	return m
}

// lifecycleServer is a server that is never started, with its errors
// logged to log.
func lifecycleServer(t *testing.T) (*server, *errorLog) {
	t.Helper()
	log := &errorLog{}
	m := newTestManager(t, map[string]config.ServerConfig{"fx": {Command: "unused"}}, &Options{Logger: slog.New(log)})
	m.transitionRefused = nil // these tests make refusals on purpose
	return m.servers["fx"], log
}

var allPhases = []phase{phaseNew, phaseStarting, phaseRestarting, phaseReady, phaseFailed, phaseCrashed, phaseIdleStopped, phaseClosing, phaseClosed}

// Every transition the supervisor may make, written out here rather than
// read from the table, so that a change to the table shows up as a failing
// case: each listed one is taken, every other pair of phases is refused,
// logged as a bug, and leaves the server where it was.
func TestLifecycleTransitions(t *testing.T) {
	allowed := map[[2]phase]bool{
		{phaseNew, phaseStarting}:         true,
		{phaseIdleStopped, phaseStarting}: true,
		{phaseFailed, phaseRestarting}:    true,
		{phaseCrashed, phaseRestarting}:   true,
		{phaseStarting, phaseReady}:       true,
		{phaseRestarting, phaseReady}:     true,
		{phaseStarting, phaseFailed}:      true,
		{phaseRestarting, phaseFailed}:    true,
		{phaseStarting, phaseClosing}:     true,
		{phaseRestarting, phaseClosing}:   true,
		{phaseReady, phaseCrashed}:        true,
		{phaseReady, phaseIdleStopped}:    true,
		{phaseReady, phaseClosing}:        true,
		{phaseNew, phaseClosing}:          true,
		{phaseFailed, phaseClosing}:       true,
		{phaseCrashed, phaseClosing}:      true,
		{phaseIdleStopped, phaseClosing}:  true,
		{phaseClosing, phaseClosed}:       true,
	}
	s, log := lifecycleServer(t)
	for _, from := range allPhases {
		for _, to := range allPhases {
			want := allowed[[2]phase{from, to}]
			t.Run(from.String()+"→"+to.String(), func(t *testing.T) {
				s.mu.Lock()
				defer s.mu.Unlock()
				defer func() { s.phase, s.conn = phaseNew, nil }() // nothing for Close to stop
				// What ready needs, so that only the table decides here.
				s.phase, s.conn, s.known = from, &connection{s: s}, true
				gen, restarts := s.startGen, s.restarts
				got := s.transitionLocked(to, "test")
				errs := log.take()
				if got != want {
					t.Fatalf("transition allowed %v, want %v", got, want)
				}
				if !want {
					if s.phase != from {
						t.Errorf("a refused transition left the server %v, want %v", s.phase, from)
					}
					if len(errs) != 1 || !strings.HasPrefix(errs[0], "bug: ") {
						t.Errorf("a refused transition logged %q at error level, want one bug report", errs)
					}
					return
				}
				if s.phase != to || len(errs) != 0 {
					t.Errorf("server %v after the transition, errors %q; want %v, none", s.phase, errs, to)
				}
				// A start generation begins with each start, and only
				// restarts count as restarts.
				wantGen, wantRestarts := gen, restarts
				if to == phaseStarting || to == phaseRestarting {
					wantGen++
				}
				if to == phaseRestarting {
					wantRestarts++
				}
				if s.startGen != wantGen || s.restarts != wantRestarts {
					t.Errorf("start generation %d, restarts %d; want %d, %d", s.startGen, s.restarts, wantGen, wantRestarts)
				}
			})
		}
	}
}

// Ready is entered only with a connection and a tool list: a start
// that would publish the server ready without either is refused.
func TestReadyNeedsConnectionAndTools(t *testing.T) {
	for _, tc := range []struct {
		name        string
		conn, known bool
		want        bool
	}{
		{"connection and tools", true, true, true},
		{"no tool list", true, false, false},
		{"no connection", false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, log := lifecycleServer(t)
			s.mu.Lock()
			defer s.mu.Unlock()
			defer func() { s.phase, s.conn = phaseNew, nil }() // nothing for Close to stop
			s.phase, s.known = phaseStarting, tc.known
			if tc.conn {
				s.conn = &connection{s: s}
			}
			if got := s.transitionLocked(phaseReady, "test"); got != tc.want {
				t.Fatalf("ready allowed %v, want %v", got, tc.want)
			}
			if errs := log.take(); !tc.want && len(errs) != 1 {
				t.Errorf("refused without a bug report: %q", errs)
			}
		})
	}
}

// The phases are finer than the states Status reports; what /healthz
// says for each stays what it said before there were phases.
func TestPhasesReportTheSameStates(t *testing.T) {
	want := map[phase]State{
		phaseNew:         StateIdle,
		phaseStarting:    StateStarting,
		phaseRestarting:  StateRestarting,
		phaseReady:       StateReady,
		phaseFailed:      StateFailed,
		phaseCrashed:     StateRestarting,
		phaseIdleStopped: StateIdle,
		phaseClosing:     StateIdle,
		phaseClosed:      StateIdle,
	}
	for _, p := range allPhases {
		if got := p.public(); got != want[p] {
			t.Errorf("%v reports %q, want %q", p, got, want[p])
		}
	}
}

// A tool list read on the connection of an earlier start is dropped, even
// when its read began after the newer start's (a re-read after a
// list_changed that the old connection delivered late): the server has
// started again since, and only the new connection's list is current.
// Before start generations, the later read won (seen failing: recorded
// [stale]).
func TestListOfAnEarlierStartIsDropped(t *testing.T) {
	s, _ := lifecycleServer(t)
	tools := func(name string) []*mcp.Tool {
		return []*mcp.Tool{{Name: name, InputSchema: map[string]any{"type": "object"}}}
	}
	start := func() *connection {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.startGen++ // as transitionLocked does on each start
		return &connection{s: s, gen: s.startGen}
	}
	old := start()
	current := start()
	fresh := s.beginList() // the new start's read
	stale := s.beginList() // a late re-read on the old connection
	s.setTools(current, fresh, nil, tools("fresh"), nil)
	s.setTools(old, stale, nil, tools("stale"), nil)
	got, ok := s.knownTools()
	if !ok || len(got) != 1 || got[0].Name != "fresh" {
		names := []string{}
		for _, t := range got {
			names = append(names, t.Name)
		}
		t.Errorf("recorded %v (known %v); want the current start's list [fresh]", names, ok)
	}
}

// A list_changed that a restarted server sends while a re-read on its old
// connection is still in flight is answered by a re-read on the new
// connection. Before, the queued re-read ran on the old session it was
// first given, recorded the old server's list and lost the new one's
// change (seen failing: recorded [a x], want [a b c]).
func TestQueuedReReadUsesTheNewConnection(t *testing.T) {
	noop := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	newSrv := func(names ...string) *mcp.Server {
		srv := mcp.NewServer(&mcp.Implementation{Name: "lists", Version: "1"}, nil)
		for _, n := range names {
			srv.AddTool(&mcp.Tool{Name: n, InputSchema: objectSchema}, noop)
		}
		return srv
	}
	// The first connection reaches the old version of the server, the
	// second (after the restart) the new one.
	oldSrv, newVersion := newSrv("a"), newSrv("a", "b")
	// The old server holds one tools/list, armed below, until released.
	holding, release := make(chan struct{}), make(chan struct{})
	var hold sync.Mutex
	holdNext := false
	oldSrv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			hold.Lock()
			h := holdNext && method == "tools/list"
			if h {
				holdNext = false
			}
			hold.Unlock()
			if h {
				close(holding)
				<-release
			}
			return next(ctx, method, req)
		}
	})
	var dials sync.Mutex
	n := 0
	dial := func(ctx context.Context, name string, cfg config.ServerConfig, log *slog.Logger) (dialed, error) {
		dials.Lock()
		srv := newVersion
		if n == 0 {
			srv = oldSrv
		}
		n++
		dials.Unlock()
		return inMemoryDialer(srv)(ctx, name, cfg, log)
	}
	queued, ended := make(chan struct{}, 10), make(chan struct{}, 10)
	m := newTestManager(t, map[string]config.ServerConfig{"fx": {Command: "unused"}}, &Options{dial: dial, ProtocolVersion: "2025-11-25"})
	m.refreshQueued = func(string) { queued <- struct{}{} }
	m.refreshEnded = func(string) { ended <- struct{}{} }
	s := m.servers["fx"]
	ctx := context.Background()

	old, err := s.connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.release(old)
	defer old.stop() // let go of below without being stopped

	// A change on the old server: its re-read is held.
	hold.Lock()
	holdNext = true
	hold.Unlock()
	oldSrv.AddTool(&mcp.Tool{Name: "x", InputSchema: objectSchema}, noop)
	await(t, holding, "the old server's re-read")

	// The old connection is let go of (as a remote server that forgot the
	// session) and the server starts again, on its new version.
	s.dropLostSession(old)
	c, err := s.connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.release(c)
	// A change on the new server, while the old re-read is in flight:
	// its re-read is queued.
	newVersion.AddTool(&mcp.Tool{Name: "c", InputSchema: objectSchema}, noop)
	await(t, queued, "the new server's re-read queued")
	close(release)
	await(t, ended, "the re-reads to end")

	tools, _ := s.knownTools()
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	if got := strings.Join(names, " "); got != "a b c" {
		t.Errorf("recorded [%s], want the new connection's list [a b c]", got)
	}
}

// await waits for ch. The deadline only keeps a broken test from hanging;
// nothing depends on how long the wait takes.
func await(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(time.Minute):
		t.Fatalf("gave up waiting for %s", what)
	}
}

// A server being closed, or closed, is never started again, even by a
// caller that passed the Manager's own checks before the close began.
func TestClosedServerIsNotStarted(t *testing.T) {
	for _, p := range []phase{phaseClosing, phaseClosed} {
		t.Run(p.String(), func(t *testing.T) {
			s, log := lifecycleServer(t)
			s.mu.Lock()
			s.phase = p
			s.mu.Unlock()
			c, err := s.connect(context.Background())
			if !errors.Is(err, ErrClosed) || c != nil {
				t.Errorf("connect: %v, %v; want ErrClosed", c, err)
			}
			if errs := log.take(); len(errs) != 0 {
				t.Errorf("logged %q", errs)
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.phase != p || s.starting != nil {
				t.Errorf("server %v (start running: %v) after connect, want %v and none", s.phase, s.starting != nil, p)
			}
		})
	}
}

// A tools/list_changed that comes while a start's own tools/list is on
// its way: the re-read it causes is newer than the start's list, and is
// what the ready server has, whichever is recorded first. Before, the
// last writer won, and the start's older list stayed.
func TestListChangedDuringStartWins(t *testing.T) {
	noop := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "lists", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "a", InputSchema: objectSchema}, noop)
	// The start's tools/list is answered now but delivered only when
	// released: its answer is older than anything read meanwhile.
	holding, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			held := false
			if method == "tools/list" {
				once.Do(func() { held = true })
			}
			if held {
				close(holding)
				<-release
			}
			return res, err
		}
	})
	ended := make(chan struct{}, 10)
	m := newTestManager(t, map[string]config.ServerConfig{"fx": {Command: "unused"}}, &Options{dial: inMemoryDialer(srv), ProtocolVersion: "2025-11-25"})
	m.refreshEnded = func(string) { ended <- struct{}{} }
	s := m.servers["fx"]

	type result struct {
		c   *connection
		err error
	}
	started := make(chan result, 1)
	go func() {
		c, err := s.connect(context.Background())
		started <- result{c, err}
	}()
	await(t, holding, "the start's tools/list")
	srv.AddTool(&mcp.Tool{Name: "b", InputSchema: objectSchema}, noop)
	await(t, ended, "the re-read after list_changed")
	close(release)
	r := <-started
	if r.err != nil {
		t.Fatalf("start: %v", r.err)
	}
	s.release(r.c)

	tools, _ := s.knownTools()
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	if got := strings.Join(names, " "); got != "a b" {
		t.Errorf("the ready server has [%s], want the re-read's [a b]", got)
	}
	if st := s.status(); st.State != StateReady || st.Tools != 2 {
		t.Errorf("status %s with %d tools, want ready with 2", st.State, st.Tools)
	}
}
