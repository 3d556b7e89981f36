package main

import (
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// fdReserve is how many file descriptors are kept from HTTP connections
// for everything else toolfold opens: upstream servers' pipes, the
// catalog cache, logs.
const fdReserve = 512

// connCapFor is the most HTTP connections to hold open at once given the
// process's file descriptor limit; 0 means no limit is known.
func connCapFor(fdLimit uint64) int {
	if fdLimit == 0 {
		return 0
	}
	if fdLimit < fdReserve+64 {
		return 64
	}
	return int(fdLimit - fdReserve)
}

// capConns holds the listener to at most max open connections: at the
// cap, Accept waits (the kernel's backlog holds newcomers) rather than run
// the process out of file descriptors, which would stop /healthz, new
// upstream servers and every other client alike. While at the cap, idle
// keep-alive connections are closed, so that only connections stalled
// mid-request (bounded by the header and body timeouts) hold it.
func capConns(ln net.Listener, max int, srv *http.Server, log *slog.Logger) net.Listener {
	if max <= 0 {
		return ln
	}
	return &cappedListener{Listener: ln, slots: make(chan struct{}, max), done: make(chan struct{}), srv: srv, log: log}
}

type cappedListener struct {
	net.Listener
	slots chan struct{}
	done  chan struct{}
	once  sync.Once
	srv   *http.Server
	log   *slog.Logger
	full  atomic.Bool
}

func (l *cappedListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	default:
		if !l.full.Swap(true) {
			l.log.Warn("HTTP connections are at their cap, set by the file descriptor limit: new ones wait, idle ones are closed", "max_connections", cap(l.slots))
			l.srv.SetKeepAlivesEnabled(false) // also closes the idle ones
		}
		select {
		case l.slots <- struct{}{}:
		case <-l.done:
			return nil, net.ErrClosed
		}
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &cappedConn{Conn: c, l: l}, nil
}

func (l *cappedListener) release() {
	<-l.slots
	if len(l.slots) < cap(l.slots)*9/10 && l.full.Swap(false) {
		l.srv.SetKeepAlivesEnabled(true)
	}
}

func (l *cappedListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

type cappedConn struct {
	net.Conn
	l    *cappedListener
	once sync.Once
}

func (c *cappedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.l.release)
	return err
}
