package toolfold

import (
	"os"
	"time"
)

// HTTPOptions configure Server.Handler. The zero value is usable.
type HTTPOptions struct {
	// Stateless serves every request on its own, without sessions: there
	// is no per-client view, so the auto mode serves search.
	Stateless bool
	// SessionTimeout closes sessions idle for this long; zero means 30
	// minutes.
	SessionTimeout time.Duration
}

type stdin struct{}

func (stdin) Read(p []byte) (int, error) { return os.Stdin.Read(p) }
func (stdin) Close() error               { return nil }

type stdout struct{}

func (stdout) Write(p []byte) (int, error) { return os.Stdout.Write(p) }
func (stdout) Close() error                { return nil }
