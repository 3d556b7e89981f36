package upstream

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/logtest"
)

// fakeClock is a clock whose time moves only when a test advances it; the
// timers that fall due run, in order, inside Advance.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	c       *fakeClock
	at      time.Time
	f       func()
	stopped bool // stopped or fired
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.stopped
	t.stopped = true
	return was
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) stopper {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

// Advance moves the time on by d and runs the timers that fell due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*fakeTimer
	kept := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.stopped:
		case !t.at.After(c.now):
			t.stopped = true
			due = append(due, t)
		default:
			kept = append(kept, t)
		}
	}
	c.timers = kept
	c.mu.Unlock()
	for _, t := range due {
		t.f()
	}
}

type idleCheck struct {
	server  string
	stopped bool
}

// newIdleManager is newTestManager with a fake clock, and a channel that
// receives the outcome of every idle check.
func newIdleManager(t *testing.T, servers map[string]config.ServerConfig, opts *Options) (*Manager, *fakeClock, <-chan idleCheck) {
	t.Helper()
	m := newTestManager(t, servers, opts)
	clk := newFakeClock()
	checks := make(chan idleCheck, 100)
	m.clock = clk
	m.idleChecked = func(server string, stopped bool) { checks <- idleCheck{server, stopped} }
	return m, clk, checks
}

// nextCheck waits for the next idle check to be over. The deadline only
// keeps a broken test from hanging; nothing depends on how long a check takes.
func nextCheck(t *testing.T, checks <-chan idleCheck) idleCheck {
	t.Helper()
	select {
	case c := <-checks:
		return c
	case <-time.After(30 * time.Second):
		t.Fatal("no idle check happened")
		return idleCheck{}
	}
}

func withIdle(cfg config.ServerConfig, d time.Duration) config.ServerConfig {
	it := config.IdleTimeout(d)
	cfg.IdleTimeout = &it
	return cfg
}

// A stdio server idle for its timeout is stopped (the process is gone), stays
// listed from its known tools, is not treated as crashed, and the next call
// starts it again as on first use.
func TestIdleServerIsStoppedAndStartsAgain(t *testing.T) {
	starts := filepath.Join(t.TempDir(), "starts")
	cfg := withIdle(fixture(t, "serve", map[string]string{"FIXTURE_START_LOG": starts}), 10*time.Minute)
	var logs logtest.Buffer
	m, clk, checks := newIdleManager(t, map[string]config.ServerConfig{"fx": cfg},
		&Options{Logger: logs.Logger(slog.LevelDebug)})
	// Were the stop taken for a crash, the next call would find a backoff of
	// an hour and fail at once.
	m.sup.backoffBase = time.Hour

	pid1, err := strconv.Atoi(mustCall(t, m, "fx", "pid", nil))
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(10*time.Minute - time.Second)
	if st := statusOf(m, "fx"); st.State != StateReady {
		t.Fatalf("before the idle timeout: state %q, want ready", st.State)
	}
	clk.Advance(time.Second)
	if c := nextCheck(t, checks); !c.stopped {
		t.Fatalf("idle for the whole timeout, the server was not stopped: %+v", c)
	}
	if err := syscall.Kill(pid1, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the process %d is still there after the idle stop (kill -0: %v)", pid1, err)
	}
	st := statusOf(m, "fx")
	if st.State != StateIdle || st.IdleStops != 1 || st.Restarts != 0 || st.Error != "" || st.Tools == 0 {
		t.Errorf("after the idle stop: %+v; want idle, 1 idle stop, no restart, no error, tools still known", st)
	}
	if tools, ok := m.CachedTools("fx"); !ok || len(tools) == 0 {
		t.Errorf("the tools are no longer known after the idle stop: %v, %v", tools, ok)
	}
	if l := logs.String(); !strings.Contains(l, "level=INFO msg=\"upstream stopped: idle\"") || strings.Contains(l, "level=WARN") {
		t.Errorf("the log does not say (at info level, with no warning) that the server was stopped for idleness:\n%s", l)
	}

	pid2, err := strconv.Atoi(mustCall(t, m, "fx", "pid", nil))
	if err != nil {
		t.Fatal(err)
	}
	if pid2 == pid1 {
		t.Errorf("the call after the idle stop was answered by the old process %d", pid1)
	}
	if st := statusOf(m, "fx"); st.State != StateReady || st.Restarts != 0 || st.IdleStops != 1 {
		t.Errorf("after the next call: %+v; want ready, no restart counted", st)
	}
	data, err := os.ReadFile(starts)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "start "); n != 2 {
		t.Errorf("the fixture started %d times, want 2", n)
	}
}

// blockingServer has a tool that blocks until released and a resource that
// can be subscribed to.
func blockingServer(entered chan<- struct{}, release <-chan struct{}) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "blocking", Version: "1"}, &mcp.ServerOptions{
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	addBlockingTool(srv, entered, release)
	srv.AddTool(&mcp.Tool{Name: "add", InputSchema: objectSchema}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := args(req)
		return textResult(strconv.FormatFloat(num(a, "a")+num(a, "b"), 'f', -1, 64)), nil
	})
	srv.AddResource(&mcp.Resource{URI: "mem://a", Name: "a"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "mem://a", Text: "a"}}}, nil
	})
	return srv
}

// memServer is the config of a server dialed in memory; it has a command,
// so it counts as a stdio server.
func memServer(idle time.Duration) config.ServerConfig {
	return withIdle(config.ServerConfig{Command: "unused", Transport: config.TransportStdio, Lazy: true, Timeout: config.Duration(20 * time.Second)}, idle)
}

func TestIdleNeverStopsDuringACall(t *testing.T) {
	entered, release := make(chan struct{}, 1), make(chan struct{})
	m, clk, checks := newIdleManager(t, map[string]config.ServerConfig{"mem": memServer(10 * time.Minute)},
		&Options{dial: inMemoryDialer(blockingServer(entered, release))})
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := m.CallTool(context.Background(), "mem", &mcp.CallToolParams{Name: "block"}, nil)
		done <- outcome{res, err}
	}()
	<-entered
	clk.Advance(20 * time.Minute) // the timer armed when the start completed falls due
	if c := nextCheck(t, checks); c.stopped {
		t.Fatal("the server was stopped for idleness with a call in flight")
	}
	close(release)
	if o := <-done; o.err != nil || text(o.res) != "done" {
		t.Fatalf("the call in flight: %v, %v", o.res, o.err)
	}
	// Idleness counts from the end of the call.
	clk.Advance(10 * time.Minute)
	if c := nextCheck(t, checks); !c.stopped {
		t.Fatal("idle for the timeout after the call, the server was not stopped")
	}
	if st := statusOf(m, "mem"); st.State != StateIdle {
		t.Errorf("state %q, want idle", st.State)
	}
}

func TestIdleNeverStopsWhileSubscribed(t *testing.T) {
	m, clk, checks := newIdleManager(t, map[string]config.ServerConfig{"mem": memServer(10 * time.Minute)},
		&Options{dial: inMemoryDialer(blockingServer(make(chan struct{}, 1), nil))})
	ctx := context.Background()
	if err := m.Subscribe(ctx, "mem", &mcp.SubscribeParams{URI: "mem://a"}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(20 * time.Minute)
	if c := nextCheck(t, checks); c.stopped {
		t.Fatal("the server was stopped for idleness while a client held a subscription")
	}
	if st := statusOf(m, "mem"); st.State != StateReady {
		t.Fatalf("state %q, want ready", st.State)
	}
	if err := m.Unsubscribe(ctx, "mem", &mcp.UnsubscribeParams{URI: "mem://a"}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(10 * time.Minute)
	if c := nextCheck(t, checks); !c.stopped {
		t.Fatal("idle for the timeout after the last unsubscribe, the server was not stopped")
	}
}

// Calls racing with idle stops always get an answer: a call either holds
// the connection (and it is not stopped) or waits for the stop to finish
// and starts the server again. None of it counts as a crash.
func TestIdleStopsRacingWithCalls(t *testing.T) {
	m, clk, _ := newIdleManager(t, map[string]config.ServerConfig{"mem": memServer(time.Minute)},
		&Options{dial: inMemoryDialer(blockingServer(make(chan struct{}, 1), nil))})
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	// Each worker lets the idle timeout pass after each of its calls, so
	// stops fall due while the other workers' calls connect, run and end.
	for range 4 {
		wg.Go(func() {
			for range 25 {
				res, err := m.CallTool(context.Background(), "mem", &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 1, "b": 2}}, nil)
				if err == nil && text(res) != "3" {
					err = errors.New("add 1+2 = " + text(res))
				}
				if err != nil {
					errs <- err
				}
				clk.Advance(time.Minute)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st := statusOf(m, "mem")
	if st.Restarts != 0 || st.Error != "" {
		t.Errorf("idle stops were taken for crashes: %+v", st)
	}
	t.Logf("%d idle stops during 100 calls", st.IdleStops)
}

// Only stdio servers are stopped for idleness, and only with a timeout.
func TestIdleTimeoutAppliesToStdioOnly(t *testing.T) {
	m := newTestManager(t, map[string]config.ServerConfig{
		"stdio":  memServer(time.Minute),
		"never":  memServer(0),
		"unset":  {Command: "x"},
		"remote": withIdle(config.ServerConfig{URL: "http://127.0.0.1:1/mcp", Transport: config.TransportHTTP}, time.Minute),
	}, nil)
	for name, want := range map[string]time.Duration{"stdio": time.Minute, "never": 0, "unset": 0, "remote": 0} {
		if got := m.servers[name].idleTimeout; got != want {
			t.Errorf("%s: idle timeout %v, want %v", name, got, want)
		}
	}
}

// gatedConn holds its first Close until the test opens the gate, so a test
// can act while a connection is being stopped.
type gatedConn struct {
	mcp.Connection
	once    sync.Once
	closing chan<- struct{}
	gate    <-chan struct{}
	event   func(string)
}

func (g *gatedConn) Close() error {
	g.once.Do(func() {
		g.event("close")
		g.closing <- struct{}{}
		<-g.gate
		g.event("closed")
	})
	err := g.Connection.Close()
	return err
}

type wrappedTransport struct {
	mcp.Transport
	wrap func(mcp.Connection) mcp.Connection
}

func (w wrappedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := w.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return w.wrap(c), nil
}

// A call that arrives while the server is being stopped for idleness waits
// for the stop to finish and starts a new one: the two never overlap (a
// server that keeps a file must not run twice).
func TestCallDuringIdleStopWaitsAndStartsAgain(t *testing.T) {
	var mu sync.Mutex
	var events []string
	event := func(e string) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}
	closing, gate := make(chan struct{}, 1), make(chan struct{})
	base := inMemoryDialer(blockingServer(make(chan struct{}, 1), nil))
	dials := 0
	dial := func(ctx context.Context, name string, cfg config.ServerConfig, log *slog.Logger) (dialed, error) {
		d, err := base(ctx, name, cfg, log)
		if err != nil {
			return d, err
		}
		dials++ // starts are serialized per server
		event("dial " + strconv.Itoa(dials))
		if dials == 1 {
			d.transport = wrappedTransport{d.transport, func(c mcp.Connection) mcp.Connection {
				return &gatedConn{Connection: c, closing: closing, gate: gate, event: event}
			}}
		}
		return d, nil
	}
	m, clk, checks := newIdleManager(t, map[string]config.ServerConfig{"mem": memServer(time.Minute)}, &Options{dial: dial})
	add := func() (string, error) {
		res, err := m.CallTool(context.Background(), "mem", &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 1, "b": 2}}, nil)
		if err != nil {
			return "", err
		}
		return text(res), nil
	}
	if got, err := add(); err != nil || got != "3" {
		t.Fatalf("first call: %q, %v", got, err)
	}
	clk.Advance(time.Minute)
	<-closing // the idle stop is under way, held in Close
	type outcome struct {
		got string
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		got, err := add()
		event("answered")
		done <- outcome{got, err}
	}()
	select {
	case o := <-done:
		t.Fatalf("a call was answered while the server was being stopped: %+v", o)
	default:
	}
	close(gate)
	if o := <-done; o.err != nil || o.got != "3" {
		t.Fatalf("the call made during the stop: %q, %v", o.got, o.err)
	}
	if c := nextCheck(t, checks); !c.stopped {
		t.Fatalf("idle check: %+v", c)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(events, ", "); got != "dial 1, close, closed, dial 2, answered" {
		t.Errorf("events: %s; want the new start after the stop", got)
	}
}

// addBlockingTool adds the tool "block", which signals entered and answers
// "done" once release is closed (or fails when its call is cancelled).
func addBlockingTool(srv *mcp.Server, entered chan<- struct{}, release <-chan struct{}) {
	srv.AddTool(&mcp.Tool{Name: "block", InputSchema: objectSchema}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		entered <- struct{}{}
		select {
		case <-release:
			return textResult("done"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
}
