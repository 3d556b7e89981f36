package upstream

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/config"
)

// The supervisor keeps one clock: the backoff after a crash is set and
// waited on the Manager's clock, as its timers are. With the fake clock
// moved past the backoff, the next call restarts the server at once.
// Before, the backoff was set with time.Now and waited on a real timer:
// the call below waited for the real hour (seen failing: the guard hit).
func TestBackoffRunsOnTheManagersClock(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	m, clk, _ := newIdleManager(t, map[string]config.ServerConfig{"fx": fixture(t, "serve", nil)}, nil)
	m.sup.backoffBase = time.Hour
	m.sup.backoffMax = time.Hour
	m.sup.maxBackoffWait = 2 * time.Hour // the caller waits rather than fails
	pid := mustCall(t, m, "fx", "pid", nil)
	if _, err := call(t, m, "fx", "crash", nil); !errors.Is(err, ErrExited) {
		t.Fatalf("crash: %v, want ErrExited", err)
	}
	clk.Advance(time.Hour)

	// A guard, not a timing: a call that waits for the real hour fails.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := m.CallTool(ctx, "fx", &mcp.CallToolParams{Name: "pid"}, nil)
	if err != nil {
		t.Fatalf("the call after the backoff passed on the Manager's clock: %v", err)
	}
	if got := text(res); got == pid {
		t.Errorf("pid %s after the crash: the server was not restarted", got)
	}
}
