package upstream

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolfold/toolfold/internal/config"
)

// A server whose first start fails, with no cached list, is tried again
// in the background on the Manager's clock, 1s then 2s later, until it
// starts; each failure is told and Status says how many and when next.
func TestFailedFirstStartIsRetried(t *testing.T) {
	dir := t.TempDir()
	failing := filepath.Join(dir, "failing")
	if err := os.WriteFile(failing, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	failed := make(chan string, 10)
	changed := make(chan string, 10)
	m, clk, _ := newIdleManager(t, map[string]config.ServerConfig{
		"npx": fixture(t, "fail-start", map[string]string{"FIXTURE_FAIL_IF": failing}),
	}, &Options{
		RetryFailedStarts: true,
		OnStartFailed:     func(server string, err error) { failed <- errorOf(err) },
		OnToolsChanged:    func(server string) { changed <- server },
	})
	m.jitter = func() float64 { return 0 }
	want := `upstream "npx" exited at start (exit status 3)`

	if _, err := m.Tools(context.Background(), "npx"); !strings.HasPrefix(errorOf(err), want) {
		t.Fatalf("first start: %v", err)
	}
	expectFailure(t, failed, want)
	st := statusOf(m, "npx")
	if st.State != StateFailed || st.FailedStarts != 1 || !st.NextStart.Equal(clk.Now().Add(time.Second)) {
		t.Fatalf("after the first failure: %+v", st)
	}

	clk.Advance(time.Second)
	expectFailure(t, failed, want)
	waitState(t, m, "npx", StateFailed)
	st = statusOf(m, "npx")
	if st.FailedStarts != 2 || !st.NextStart.Equal(clk.Now().Add(2*time.Second)) {
		t.Fatalf("after the second failure: %+v", st)
	}

	if err := os.Remove(failing); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Second)
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatal("the retry did not bring the tools")
	}
	st = statusOf(m, "npx")
	if st.State != StateReady || st.FailedStarts != 0 || !st.NextStart.IsZero() || st.Tools == 0 {
		t.Errorf("after the retry succeeded: %+v", st)
	}
}

// Without RetryFailedStarts, or for a server whose list is known, nothing
// is retried in the background: the next need starts it.
func TestNoBackgroundRetryWithoutOption(t *testing.T) {
	m, _, _ := newIdleManager(t, map[string]config.ServerConfig{"bad": fixture(t, "fail-start", nil)}, nil)
	if _, err := m.Tools(context.Background(), "bad"); err == nil {
		t.Fatal("the start must fail")
	}
	if st := statusOf(m, "bad"); !st.NextStart.IsZero() || st.FailedStarts != 1 {
		t.Errorf("status: %+v", st)
	}
}

// The retries are spaced 1s, 2s, 4s … up to 5 minutes, each shortened by
// up to half by the jitter source.
func TestRetryDelay(t *testing.T) {
	m := newTestManager(t, map[string]config.ServerConfig{"x": {Command: "unused"}}, nil)
	s := m.servers["x"]
	m.jitter = func() float64 { return 0 }
	for n, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 9: 256 * time.Second, 10: 5 * time.Minute, 40: 5 * time.Minute} {
		if got := s.retryDelay(n); got != want {
			t.Errorf("retryDelay(%d) = %v, want %v", n, got, want)
		}
	}
	m.jitter = func() float64 { return 0.5 }
	if got := s.retryDelay(3); got != 3*time.Second {
		t.Errorf("with jitter 0.5, retryDelay(3) = %v, want 3s", got)
	}
}

func expectFailure(t *testing.T, failed <-chan string, want string) {
	t.Helper()
	select {
	case got := <-failed:
		if !strings.HasPrefix(got, want) {
			t.Fatalf("failure told: %s\nwant %s", got, want)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no failed start was told")
	}
}

// waitState waits for the server's state; OnStartFailed runs after the
// state is set, so this returns at once after expectFailure.
func waitState(t *testing.T, m *Manager, name string, want State) {
	t.Helper()
	if st := statusOf(m, name); st.State != want {
		t.Fatalf("state %q, want %q: %+v", st.State, want, st)
	}
}
