package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/gateway"
)

// connLimits bound what one HTTP connection may hold, so that clients that
// connect and stall cannot keep connections (and file descriptors) open.
type connLimits struct {
	// Header is the time to send a request's headers.
	Header time.Duration
	// Body is the time to send a request's body, from its headers on.
	Body time.Duration
	// Idle is how long a kept-alive connection may wait for its next request.
	Idle time.Duration
}

// defaultConnLimits are generous for a client on a slow network, and short
// beside the file descriptors a flood of stalled connections would take.
var defaultConnLimits = connLimits{Header: 10 * time.Second, Body: 30 * time.Second, Idle: 2 * time.Minute}

// newHTTPServer serves handler within the limits. There is no overall read
// or write timeout: an MCP response may stream for as long as a tool runs,
// and an event stream stays open for the session's life. The body's time
// is bounded per request instead (boundBodyRead).
func newHTTPServer(handler http.Handler, l connLimits) *http.Server {
	return &http.Server{
		Handler:           boundBodyRead(handler, l.Body),
		ReadHeaderTimeout: l.Header,
		IdleTimeout:       l.Idle,
		// net/http's own bound: under it, a request with an oversized
		// token is read and refused with a 401 that says why (httpapi);
		// over a tighter one, the connection is closed while the client
		// still sends, which it sees as a reset.
		MaxHeaderBytes: http.DefaultMaxHeaderBytes,
	}
}

// boundBodyRead gives a request with a body that long to send it; the
// deadline is lifted once the body is read, so a long answer still streams.
func boundBodyRead(next http.Handler, d time.Duration) http.Handler {
	return &bodyDeadline{next: next, d: d}
}

// bodyDeadline is boundBodyRead's handler: a type rather than an
// http.HandlerFunc (whose ServeHTTP is one more frame), its work done in
// bound, because a session's event stream parks its goroutine with this
// frame on the stack for the session's life (see httpFront.ServeHTTP).
type bodyDeadline struct {
	next http.Handler
	d    time.Duration
}

func (b *bodyDeadline) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
		b.bound(w, r)
	}
	b.next.ServeHTTP(w, r)
}

// bound sets the read deadline of r's body.
func (b *bodyDeadline) bound(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(b.d)) == nil {
		r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
	}
}

type deadlineBody struct {
	ReadCloser io.ReadCloser
	rc         *http.ResponseController
	lifted     bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	// Only a body read to its end lifts the deadline: after a timeout the
	// connection must stay bounded, so the server drops it.
	if errors.Is(err, io.EOF) && !b.lifted {
		b.lifted = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

func (b *deadlineBody) Close() error { return b.ReadCloser.Close() }

// checkExposure refuses to serve an address other machines can reach
// without bearer tokens, unless the user said so explicitly.
func checkExposure(addr net.Addr, hasTokens, allowed bool) error {
	if hasTokens || allowed || isLoopback(addr) {
		return nil
	}
	return fmt.Errorf("refusing to serve %s without authentication: other machines can reach it, and http.auth has no tokens, so anyone there could call every tool; "+
		"bind to loopback (--http 127.0.0.1:PORT), add tokens under http.auth.tokens, or, on a network you trust, pass --allow-unauthenticated-remote (config: http.allowUnauthenticated: true)", addr)
}

// httpLimits are the serve flags that bound HTTP sessions; each overrides
// its config key when given.
type httpLimits struct {
	maxSessions int
	idleTimeout time.Duration
	allowRemote bool
}

func (l *httpLimits) register(fs *flag.FlagSet) {
	fs.IntVar(&l.maxSessions, "max-sessions", 0, fmt.Sprintf("with --http: the most sessions open at once; more are refused (config http.maxSessions, default %d)", config.DefaultMaxSessions))
	fs.DurationVar(&l.idleTimeout, "session-idle-timeout", 0, fmt.Sprintf("with --http: close a session without requests for this long (config http.sessionIdleTimeout, default %s)", config.DefaultSessionIdleTimeout))
	fs.BoolVar(&l.allowRemote, "allow-unauthenticated-remote", false, "with --http: serve an address other machines can reach although http.auth has no tokens (config http.allowUnauthenticated)")
}

// check refuses flags out of range, before anything starts.
func (l httpLimits) check() error {
	if l.maxSessions < 0 || l.idleTimeout < 0 {
		return usageError{"--max-sessions and --session-idle-timeout must be positive, such as --max-sessions 1000 --session-idle-timeout 30m"}
	}
	return nil
}

// options combines the flags with the config's http section.
func (l httpLimits) options(c config.HTTPConfig) (*gateway.HTTPOptions, error) {
	if err := l.check(); err != nil {
		return nil, err
	}
	o := &gateway.HTTPOptions{MaxSessions: c.MaxSessions, SessionTimeout: c.SessionIdleTimeout.Std()}
	if l.maxSessions != 0 {
		o.MaxSessions = l.maxSessions
	}
	if l.idleTimeout != 0 {
		o.SessionTimeout = l.idleTimeout
	}
	return o, nil
}
