//go:build unix

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lockedBuffer is stderr for a server running in the test's process: its
// goroutines log while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// drainConfig serves cat: a call reading a named pipe runs until the test
// writes to it, so the test knows it is in flight and decides when it ends.
const drainConfig = `commands:
  cat:
    command: cat
    description: Print files
    actions:
      read:
        params:
          path: {type: string, positional: true}
        readOnly: true
`

// TestStopDrainsRequestsInFlight: when serve is told to stop (SIGTERM and
// Ctrl-C cancel its context), it refuses new connections at once, lets a
// tool call in flight finish and answer, ends a session's notification
// stream, and returns without waiting for its drain timeout.
func TestStopDrainsRequestsInFlight(t *testing.T) {
	dir := t.TempDir()
	pipe := filepath.Join(dir, "release")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Fatalf("making the pipe: %v", err)
	}
	config := writeFile(t, dir, "toolfold.yaml", drainConfig)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	stderr := &lockedBuffer{}
	e := env{stdin: io.NopCloser(strings.NewReader("")), stdout: nopCloser{io.Discard}, stderr: stderr,
		lookupEnv: func(k string) (string, bool) {
			if k == "TOOLFOLD_CACHE_DIR" {
				return t.TempDir(), true
			}
			return "", false
		}}
	exited := make(chan int, 1)
	// A drain timeout far beyond the test: returning means drained.
	go func() {
		exited <- run(ctx, []string{"serve", "--http", addr, "--config", config, "--mode", "flat", "--drain-timeout", "1h"}, e)
	}()
	defer func() {
		if t.Failed() {
			t.Logf("serve printed:\n%s", stderr)
		}
	}()
	waitDialable(t, addr, exited)

	url := "http://" + addr + "/mcp"
	// A 2025-11-25 session holds a notification stream (GET) open.
	session, err := mcp.NewClient(&mcp.Implementation{Name: "listener", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connecting a session: %v", err)
	}
	defer session.Close()
	caller, err := mcp.NewClient(&mcp.Implementation{Name: "caller", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	defer caller.Close()

	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	answered := make(chan answer, 1)
	go func() {
		res, err := caller.CallTool(context.Background(), &mcp.CallToolParams{Name: "cat__read", Arguments: map[string]any{"path": pipe}})
		answered <- answer{res, err}
	}()
	// Opening the pipe to write waits for cat to open it to read: from
	// then on the call is in flight.
	w, err := os.OpenFile(pipe, os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("opening the pipe: %v", err)
	}

	stop() // what SIGTERM does
	// New connections are refused once the listener is closed; the loop
	// ends on that, bounded for a server that never stops listening.
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			break
		}
		c.Close()
		if i == 3000 {
			t.Fatal("serve still accepts connections after being told to stop")
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case a := <-answered:
		t.Fatalf("the call ended before its tool did: %+v, %v", a.res, a.err)
	case code := <-exited:
		t.Fatalf("serve exited (%d) with a call in flight", code)
	default:
	}
	fmt.Fprintln(w, "released after stopping")
	w.Close()

	a := <-answered
	if a.err != nil || a.res.IsError || len(a.res.Content) == 0 {
		t.Fatalf("the call in flight when serve was stopped: %+v, %v; want its answer", a.res, a.err)
	}
	if text := a.res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "released after stopping") {
		t.Errorf("the call answered %q", text)
	}
	// The call was the only request to wait for: the session's stream must
	// not hold serve until its drain timeout (a minute bounds a hang).
	select {
	case code := <-exited:
		if code != exitOK {
			t.Errorf("serve exited with %d after draining, want %d", code, exitOK)
		}
	case <-time.After(time.Minute):
		t.Fatal("serve still runs a minute after its last call was answered: an open stream holds the drain")
	}
	if !strings.Contains(stderr.String(), "every request in flight was answered") {
		t.Errorf("serve did not log a complete drain")
	}
}

// waitDialable waits until addr accepts connections, failing if serve
// exits first, or after a minute without a listener (a hang guard).
func waitDialable(t *testing.T, addr string, exited chan int) {
	t.Helper()
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		select {
		case code := <-exited:
			t.Fatalf("serve exited with %d before it listened", code)
		default:
		}
		if i == 6000 {
			t.Fatal("serve did not listen within a minute")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
