//go:build unix

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
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
// goroutines log while the test reads, and a test can wait for a line.
type lockedBuffer struct {
	mu   sync.Mutex
	b    bytes.Buffer
	grew chan struct{} // closed by the next write
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.grew != nil {
		close(l.grew)
		l.grew = nil
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// next returns what was written so far and a channel closed by the next
// write.
func (l *lockedBuffer) next() (string, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.grew == nil {
		l.grew = make(chan struct{})
	}
	return l.b.String(), l.grew
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
	waitDialable(t, stderr, addr, exited)

	url := "http://" + addr + "/mcp"
	// A 2025-11-25 session holds a notification stream (GET) open.
	// The test opens that stream itself, to see it end.
	session, err := mcp.NewClient(&mcp.Implementation{Name: "listener", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connecting a session: %v", err)
	}
	defer session.Close()
	streamEnded := openStream(t, url, session.ID())
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
	// Shutdown closes the listener before it ends the streams, so once the
	// stream has ended a new connection must be refused. The call in flight
	// still holds serve, so this happens while it drains.
	select {
	case <-streamEnded:
	case code := <-exited:
		t.Fatalf("serve exited (%d) with a call in flight", code)
	case <-time.After(time.Minute): // a hang guard
		t.Fatal("the notification stream still runs a minute after serve was told to stop")
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatal("serve still accepts connections after being told to stop")
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

// waitDialable waits until serve says it serves at addr (its listener is
// open before then), failing if serve exits first, or after a minute
// without a word (a hang guard).
func waitDialable(t *testing.T, stderr *lockedBuffer, addr string, exited chan int) {
	t.Helper()
	guard := time.After(time.Minute)
	for {
		text, grew := stderr.next()
		if strings.Contains(text, "serving streamable HTTP") && strings.Contains(text, addr) {
			return
		}
		select {
		case <-grew:
		case code := <-exited:
			t.Fatalf("serve exited with %d before it listened", code)
		case <-guard:
			t.Fatal("serve did not listen within a minute")
		}
	}
}

// openStream opens session's notification stream (GET) at url and returns
// a channel closed when serve ends it.
func openStream(t *testing.T, url, session string) <-chan struct{} {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("opening the notification stream: %v", err)
	}
	if res.StatusCode != http.StatusOK {
		res.Body.Close()
		t.Fatalf("opening the notification stream: %s", res.Status)
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		defer res.Body.Close()
		_, _ = io.Copy(io.Discard, res.Body)
	}()
	return ended
}
