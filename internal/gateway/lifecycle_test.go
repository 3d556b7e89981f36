package gateway_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/gateway"
)

// ServeStdio keeps Run's contract: when ctx ends it returns ctx.Err(),
// with a client that never said a word as much as with one in session.
// Before, a silent client held it in its first read whatever ctx did,
// and a session ended by ctx returned nil.
func TestServeStdioReturnsCtxErrWhenCtxEnds(t *testing.T) {
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	for _, tc := range []struct {
		name   string
		before bool   // ctx ends before ServeStdio is called
		send   string // what the client says before ctx ends; "" for nothing
	}{
		{name: "silent client"},
		{name: "ended before the call", before: true},
		{name: "client in session", send: initialize},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGateway(t, gateway.Options{}, nil)
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			defer inW.Close()
			defer outR.Close()
			ctx, cancel := context.WithCancel(context.Background())
			if tc.before {
				cancel()
			}
			done := make(chan error, 1)
			go func() { done <- g.ServeStdio(ctx, inR, outW) }()
			if tc.send != "" {
				if _, err := io.WriteString(inW, tc.send+"\n"); err != nil {
					t.Fatal(err)
				}
				// Its answer says the session is up.
				if _, err := bufio.NewReader(outR).ReadBytes('\n'); err != nil {
					t.Fatal(err)
				}
			}
			go io.Copy(io.Discard, outR)
			cancel()
			// A guard, not a timing: a ServeStdio that ignores ctx would
			// hang the test.
			guard := time.NewTimer(time.Minute)
			defer guard.Stop()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("ServeStdio returned %v after ctx ended; want context.Canceled", err)
				}
			case <-guard.C:
				t.Fatal("ServeStdio did not return after ctx ended")
			}
		})
	}
}

// gatewayGoroutines are the stacks of the goroutines running code of
// package gateway (its tests' own left out).
func gatewayGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var found []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "toolfold/internal/gateway.") && !strings.Contains(g, "toolfold/internal/gateway_test.") {
			found = append(found, g)
		}
	}
	return found
}

// Shutdown stops everything the gateway started: a call parked while
// its client is asked for input (its detached goroutine and its timer),
// the watcher of a session made by Connect, a stdio session, and the
// announcements not sent yet. No goroutine of the gateway is left after
// it, and the gateway refuses new sessions. (Checked as a mutation: with
// the broker's close left out of Shutdown, the parked call's goroutine is
// reported here.)
func TestShutdownLeavesNoGoroutine(t *testing.T) {
	if left := gatewayGoroutines(); len(left) > 0 {
		t.Skipf("goroutines of the gateway run before the test (another test's?):\n%s", strings.Join(left, "\n\n"))
	}
	g := flatGateway(t, gateway.Options{}, askingTools(nil))
	cs := connectAt(t, g, "mrtr", "2026-07-28",
		&mcp.ClientOptions{Capabilities: everything, MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
	firstRound(t, cs, map[string]any{"x": "1"}) // parks the call, running, until the retry
	g.PromptsChanged()

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	defer inW.Close()
	go io.Copy(io.Discard, outR)
	served := make(chan error, 1)
	go func() { served <- g.ServeStdio(context.Background(), inR, outW) }()
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if len(gatewayGoroutines()) == 0 {
		t.Fatal("no goroutine of the gateway runs: the test checks nothing")
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a guard
	defer cancel()
	if err := g.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := <-served; err != nil {
		t.Logf("ServeStdio returned %v", err)
	}
	// What Shutdown waited for may still be returning from its last
	// frame: give the scheduler the turn, a bounded number of times.
	var left []string
	for range 10000 {
		if left = gatewayGoroutines(); len(left) == 0 {
			break
		}
		runtime.Gosched()
	}
	if len(left) > 0 {
		t.Errorf("%d goroutines of the gateway are left after Shutdown:\n%s", len(left), strings.Join(left, "\n\n"))
	}
	if _, err := g.Connect(context.Background(), gateway.ClientInfo{}, nil); !errors.Is(err, gateway.ErrClosed) {
		t.Errorf("Connect after Shutdown: %v, want ErrClosed", err)
	}
	if err := g.Shutdown(ctx); err != nil {
		t.Errorf("a second Shutdown: %v", err)
	}
}
