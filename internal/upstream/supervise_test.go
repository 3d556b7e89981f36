package upstream

import (
	"context"
	"errors"
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
)

func call(t *testing.T, m *Manager, server, tool string, a map[string]any) (*mcp.CallToolResult, error) {
	t.Helper()
	return m.CallTool(context.Background(), server, &mcp.CallToolParams{Name: tool, Arguments: a}, nil)
}

func mustCall(t *testing.T, m *Manager, server, tool string, a map[string]any) string {
	t.Helper()
	res, err := call(t, m, server, tool, a)
	if err != nil {
		t.Fatalf("calling %s/%s: %v", server, tool, err)
	}
	if res.IsError {
		t.Fatalf("calling %s/%s: tool error %q", server, tool, text(res))
	}
	return text(res)
}

func statusOf(m *Manager, name string) Status {
	for _, s := range m.Status() {
		if s.Name == name {
			return s
		}
	}
	return Status{}
}

func TestCallStartsLazilyAndAnswers(t *testing.T) {
	m := newTestManager(t, map[string]config.ServerConfig{"fx": fixture(t, "serve", nil)}, nil)
	if st := statusOf(m, "fx"); st.State != StateIdle {
		t.Fatalf("before any need: state %q, want idle", st.State)
	}
	res, err := call(t, m, "fx", "add", map[string]any{"a": 2, "b": 3})
	if err != nil {
		t.Fatal(err)
	}
	if got := text(res); got != "5" {
		t.Errorf("add 2+3 = %q, want 5", got)
	}
	if sc, _ := res.StructuredContent.(map[string]any); sc["sum"] != 5.0 {
		t.Errorf("structuredContent = %v, want sum 5", res.StructuredContent)
	}
	st := statusOf(m, "fx")
	if st.State != StateReady || st.Restarts != 0 || !strings.Contains(st.StderrTail, "fixture: starting") {
		t.Errorf("after a call: %+v", st)
	}
	info, ok := m.ServerInfo("fx")
	if !ok || info.Instructions != "A test server." {
		t.Errorf("ServerInfo = %+v, %v", info, ok)
	}
}

func TestIncludeExclude(t *testing.T) {
	tests := []struct {
		name             string
		include, exclude []string
		wantTools        []string
		refused          string
	}{
		{"all", nil, nil, []string{"add", "ask", "crash", "env", "gate", "grow", "hang", "pid", "reject", "roots", "sleep", "twostep"}, ""},
		{"include", []string{"a*", "pid"}, nil, []string{"add", "ask", "pid"}, "sleep"},
		{"exclude after include", []string{"a*"}, []string{"ask"}, []string{"add"}, "ask"},
		{"exclude", nil, []string{"*a*", "[ch]*"}, []string{"env", "grow", "pid", "reject", "roots", "sleep", "twostep"}, "crash"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := fixture(t, "serve", nil)
			cfg.Include, cfg.Exclude = tt.include, tt.exclude
			m := newTestManager(t, map[string]config.ServerConfig{"fx": cfg}, nil)
			tools, err := m.Tools(context.Background(), "fx")
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range tools {
				names = append(names, tl.Name)
			}
			if strings.Join(names, ",") != strings.Join(tt.wantTools, ",") {
				t.Errorf("tools = %v, want %v", names, tt.wantTools)
			}
			if tt.refused == "" {
				return
			}
			_, err = call(t, m, "fx", tt.refused, nil)
			want := `tool "` + tt.refused + `" of server "fx" is excluded by its config`
			if !errors.Is(err, ErrExcluded) || !strings.Contains(errorOf(err), want) {
				t.Errorf("calling an excluded tool: %v, want %q", err, want)
			}
		})
	}
}

func TestKilledMidCallIsRestarted(t *testing.T) {
	events := newEventLog(t)
	m := newTestManager(t, map[string]config.ServerConfig{
		"fx":    fixture(t, "serve", map[string]string{"FIXTURE_EVENT_LOG": events.path}),
		"other": fixture(t, "serve", nil),
	}, nil)
	pid, err := strconv.Atoi(mustCall(t, m, "fx", "pid", nil))
	if err != nil {
		t.Fatal(err)
	}
	mustCall(t, m, "other", "pid", nil)
	otherBefore := statusOf(m, "other")

	errc := make(chan error, 1)
	go func() {
		_, err := call(t, m, "fx", "sleep", map[string]any{"ms": 20000})
		errc <- err
	}()
	events.wait(t, "started sleep") // the kill must find the call in flight
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err = <-errc
	want := `upstream "fx" exited during tools/call "sleep" (signal: killed)`
	if !errors.Is(err, ErrExited) || !strings.Contains(errorOf(err), want) || !strings.Contains(errorOf(err), "it will be restarted on the next call") {
		t.Fatalf("in-flight call got %v\nwant it to contain %q", err, want)
	}
	if st := statusOf(m, "fx"); st.State != StateRestarting || !strings.Contains(st.Error, "signal: killed") {
		t.Errorf("status after the crash: %+v", st)
	}

	pid2, err := strconv.Atoi(mustCall(t, m, "fx", "pid", nil))
	if err != nil {
		t.Fatal(err)
	}
	if pid2 == pid {
		t.Errorf("the server was not restarted (same pid %d)", pid)
	}
	if st := statusOf(m, "fx"); st.State != StateReady || st.Restarts != 1 || st.Error != "" {
		t.Errorf("status after the restart: %+v", st)
	}
	if other := statusOf(m, "other"); other.State != StateReady || other.Since != otherBefore.Since {
		t.Errorf("the other server was disturbed: %+v", other)
	}
	mustCall(t, m, "other", "pid", nil)
}

func TestCrashReportsStderr(t *testing.T) {
	m := newTestManager(t, map[string]config.ServerConfig{"fx": fixture(t, "serve", nil)}, nil)
	_, err := call(t, m, "fx", "crash", nil)
	want := `upstream "fx" exited during tools/call "crash" (exit status 1): panic: boom: out of cheese; it will be restarted on the next call`
	if errorOf(err) != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
	st := statusOf(m, "fx")
	if !strings.Contains(st.StderrTail, "panic: boom: out of cheese") || !strings.Contains(st.Error, "exit status 1") {
		t.Errorf("status: %+v", st)
	}
	if got := mustCall(t, m, "fx", "add", map[string]any{"a": 1, "b": 1}); got != "2" {
		t.Errorf("after the restart, add = %q", got)
	}
}

func TestStartFailureSaysWhy(t *testing.T) {
	m := newTestManager(t, map[string]config.ServerConfig{"bad": fixture(t, "fail-start", nil)}, nil)
	m.sup.backoffBase = 10 * time.Second // so the second need gets the error at once
	want := `upstream "bad" exited at start (exit status 3): fatal: the API key FIXTURE_TOKEN is not set`
	_, err := m.Tools(context.Background(), "bad")
	if !errors.Is(err, ErrStartFailed) || errorOf(err) != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
	st := statusOf(m, "bad")
	if st.State != StateFailed || st.Error != want || !strings.Contains(st.StderrTail, "FIXTURE_TOKEN") {
		t.Errorf("status: %+v", st)
	}
	_, err = call(t, m, "bad", "add", nil)
	if !errors.Is(err, ErrStartFailed) || !strings.Contains(errorOf(err), want+"; toolfold will try to start it again in") {
		t.Errorf("a call during the backoff: %v", err)
	}
}

// A server that never answers the handshake is stopped at its
// startTimeout, and the error names the timeout, not how the stopped
// process then exited.
func TestStartTimeoutIsNamed(t *testing.T) {
	events := newEventLog(t)
	mute := fixture(t, "mute", map[string]string{"FIXTURE_EVENT_LOG": events.path})
	mute.StartTimeout = config.Duration(5 * time.Second)
	m, clk, _ := newIdleManager(t, map[string]config.ServerConfig{"mute": mute}, nil)
	errs := make(chan error, 1)
	go func() {
		_, err := m.Tools(context.Background(), "mute")
		errs <- err
	}()
	events.wait(t, "read ") // the handshake began
	clk.Advance(5 * time.Second)
	err := <-errs
	want := `upstream "mute" did not start within 5s (startTimeout); it was stopped`
	if !errors.Is(err, ErrStartFailed) || !strings.HasPrefix(errorOf(err), want) {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
	events.wait(t, "stdin closed")
	if st := statusOf(m, "mute"); st.State != StateFailed || !strings.HasPrefix(st.Error, want) {
		t.Errorf("status: %+v", st)
	}
}

func TestMissingCommand(t *testing.T) {
	cfg := config.ServerConfig{Command: "toolfold-no-such-program", Transport: config.TransportStdio}
	m := newTestManager(t, map[string]config.ServerConfig{"ghost": cfg}, nil)
	_, err := m.Tools(context.Background(), "ghost")
	if !errors.Is(err, ErrStartFailed) || !strings.Contains(errorOf(err), `upstream "ghost" could not be started`) || !strings.Contains(errorOf(err), "executable file not found") {
		t.Fatalf("got %v", err)
	}
}

// A server hung in a call holds up no other server's calls.
func TestHungServerLeavesOthersAlone(t *testing.T) {
	events := newEventLog(t)
	stuck := fixture(t, "serve", map[string]string{"FIXTURE_EVENT_LOG": events.path})
	stuck.Timeout = config.Duration(time.Hour) // only the test ends the hang
	m := newTestManager(t, map[string]config.ServerConfig{"stuck": stuck, "fast": fixture(t, "serve", nil)}, nil)
	mustCall(t, m, "fast", "pid", nil)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hung := make(chan error, 1)
	go func() {
		_, err := m.CallTool(ctx, "stuck", &mcp.CallToolParams{Name: "hang"}, nil)
		hung <- err
	}()
	events.wait(t, "started hang")
	if got := mustCall(t, m, "fast", "add", map[string]any{"a": 20, "b": 22}); got != "42" {
		t.Errorf("fast add = %q", got)
	}
	select {
	case err := <-hung:
		t.Fatalf("the hung call ended (%v) before the test ended it", err)
	default: // the other server answered while this one was still hung
	}
	cancel()
	if err := <-hung; !errors.Is(err, context.Canceled) {
		t.Errorf("the hung call, cancelled: %v", err)
	}
}

// A call the server does not answer within its timeout fails with
// ErrTimeout; the server hears of the cancellation and stays usable.
func TestTimeoutCancelsTheCall(t *testing.T) {
	events := newEventLog(t)
	slow := fixture(t, "serve", map[string]string{"FIXTURE_EVENT_LOG": events.path})
	slow.Timeout = config.Duration(700 * time.Millisecond)
	m := newTestManager(t, map[string]config.ServerConfig{"slow": slow}, nil)
	mustCall(t, m, "slow", "pid", nil)

	_, err := call(t, m, "slow", "hang", nil)
	want := `upstream "slow" did not answer tools/call "hang" within 700ms`
	if !errors.Is(err, ErrTimeout) || errorOf(err) != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	events.wait(t, "cancelled hang")
	// The server is still usable: only the call was abandoned.
	mustCall(t, m, "slow", "pid", nil)
}

func TestCancellationReachesUpstream(t *testing.T) {
	events := newEventLog(t)
	m := newTestManager(t, map[string]config.ServerConfig{"fx": fixture(t, "serve", map[string]string{"FIXTURE_EVENT_LOG": events.path})}, nil)
	mustCall(t, m, "fx", "pid", nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := m.CallTool(ctx, "fx", &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": 20000}}, nil)
		errc <- err
	}()
	// Cancelled before it reaches the server, the call would leave the
	// server nothing to hear of.
	events.wait(t, "started sleep")
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) || !strings.Contains(errorOf(err), "cancelled by the caller") {
		t.Fatalf("got %v", err)
	}
	events.wait(t, "cancelled sleep")
}

// eventLog is where a fixture writes its FIXTURE_EVENT_LOG lines: a named
// pipe the test holds open, so that it hears each event as it is written.
// The fixture is another process and has no other way to tell.
type eventLog struct {
	path string
	mu   sync.Mutex
	text strings.Builder
	grew chan struct{} // closed by the next event
}

func newEventLog(t *testing.T) *eventLog {
	t.Helper()
	l := &eventLog{path: filepath.Join(t.TempDir(), "events")}
	if err := syscall.Mkfifo(l.path, 0o600); err != nil {
		t.Fatal(err)
	}
	// Opened to read and write: the open waits for no writer, and reading
	// never meets the end while fixtures come and go.
	f, err := os.OpenFile(l.path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() }) // after the manager's, which stops the fixtures
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			l.mu.Lock()
			l.text.Write(buf[:n])
			if l.grew != nil && n > 0 {
				close(l.grew)
				l.grew = nil
			}
			l.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return l
}

// wait waits until the fixture has logged want. The guard only stops a
// broken test from hanging; nothing depends on how long it takes.
func (l *eventLog) wait(t *testing.T, want string) {
	t.Helper()
	guard := time.After(30 * time.Second)
	for {
		l.mu.Lock()
		text := l.text.String()
		if l.grew == nil {
			l.grew = make(chan struct{})
		}
		grew := l.grew
		l.mu.Unlock()
		if strings.Contains(text, want) {
			return
		}
		select {
		case <-grew:
		case <-guard:
			t.Fatalf("the fixture never logged %q (logged %q)", want, text)
		}
	}
}

// TestSlowStartDoesNotDelayDiscovery: the slow server's start ends only
// when the test releases it, after both fast ones were reported, so the
// order proves they did not wait for it, however loaded the machine.
func TestSlowStartDoesNotDelayDiscovery(t *testing.T) {
	release := filepath.Join(t.TempDir(), "release")
	if err := syscall.Mkfifo(release, 0o600); err != nil {
		t.Fatal(err)
	}
	m := newTestManager(t, map[string]config.ServerConfig{
		"a-slow": fixture(t, "slow-start", map[string]string{"FIXTURE_RELEASE": release}),
		"b-fast": fixture(t, "serve", nil),
		"c-fast": fixture(t, "serve", nil),
	}, nil)
	var order []string
	for name, err := range m.Discover(context.Background()) {
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		order = append(order, name)
		if name == "a-slow" {
			continue
		}
		if _, ok := m.CachedTools(name); !ok {
			t.Errorf("%s reported but its tools are not known", name)
		}
		if st := statusOf(m, "a-slow"); st.State != StateStarting {
			t.Errorf("while %s is reported, the slow one is %q", name, st.State)
		}
		if len(order) == 2 {
			// Opening to write waits for the fixture to open to read.
			f, err := os.OpenFile(release, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
	}
	if len(order) != 3 || order[2] != "a-slow" {
		t.Errorf("order = %v, want the slow server last", order)
	}
}

func TestCloseFailsCallsInFlight(t *testing.T) {
	events := newEventLog(t)
	m := New(map[string]config.ServerConfig{"fx": fixture(t, "serve", map[string]string{"FIXTURE_EVENT_LOG": events.path})}, &Options{DisableCache: true})
	mustCall(t, m, "fx", "pid", nil)
	errc := make(chan error, 1)
	go func() {
		_, err := call(t, m, "fx", "sleep", map[string]any{"ms": 20000})
		errc <- err
	}()
	events.wait(t, "started sleep") // Close must find the call in flight
	m.Close()
	if err := <-errc; !errors.Is(err, ErrClosed) && !errors.Is(err, mcp.ErrConnectionClosed) {
		t.Errorf("call in flight at Close: %v", err)
	}
	if _, err := call(t, m, "fx", "pid", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("call after Close: %v", err)
	}
	if st := statusOf(m, "fx"); st.State != StateIdle {
		t.Errorf("state after Close: %q", st.State)
	}
}

func TestUnknownAndDisabled(t *testing.T) {
	cfg := fixture(t, "serve", nil)
	cfg.Disabled = true
	m := newTestManager(t, map[string]config.ServerConfig{"off": cfg}, nil)
	if _, err := call(t, m, "nope", "x", nil); !errors.Is(err, ErrUnknownServer) {
		t.Errorf("unknown server: %v", err)
	}
	if _, err := call(t, m, "off", "add", nil); !errors.Is(err, ErrDisabled) {
		t.Errorf("disabled server: %v", err)
	}
	if got := m.DiscoverAll(context.Background()); len(got) != 0 {
		t.Errorf("DiscoverAll included a disabled server: %v", got)
	}
	if st := statusOf(m, "off"); !st.Disabled || st.State != StateIdle {
		t.Errorf("status: %+v", st)
	}
}
