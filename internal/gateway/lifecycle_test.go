package gateway_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"testing"
	"time"

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
