package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/toolfold/toolfold/internal/sdkshim"
)

// ServeStdio serves one client over newline-delimited JSON-RPC on in and
// out until the client disconnects (it returns nil then, or the
// session's error) or ctx ends (it returns ctx.Err(), before the client's
// first message too). Every line passes a screen first (see frame.go): a
// malformed one is answered with a JSON-RPC error and the session goes
// on.
func (g *Gateway) ServeStdio(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if g.isClosed() {
		return ErrClosed
	}
	ctx = withStdioCaller(ctx)
	screen := newStdioScreen(in, out, g.log)
	screen.out.budget = g.answers
	// The client's first accepted message says who it is, and so which
	// server serves it.
	first, err := firstMessage(ctx, screen, in)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil // the client left before saying anything
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("reading the first message from stdin: %w", err)
	}
	client := peekClient(first.line)
	var s *session
	if client.Extension && client.ProtocolVersion != "" && client.ProtocolVersion < statelessProtocol {
		// A session of the groups extension can be told when the top-level
		// groups change. The SDK sends only the notifications it knows, so
		// this connection gets a per-request server of its own that writes
		// notifications/groups/list_changed itself, through the screen's
		// writer, which keeps whole messages apart.
		s = g.newSessionNotifying(perRequestMode, nil, func() {
			if _, err := screen.out.Write(groupsListChanged); err != nil {
				g.log.Warn("telling a client its groups changed", "err", err)
			}
		})
		g.track(s)
		if obs := g.opts.Observer; obs != nil {
			obs.SessionStarted(g.Presentation(client))
		}
	} else {
		s = g.sessionFor(client, true)
	}
	defer g.forget(s) // the client's only session ends with this call
	g.log.Info("client connected", "transport", "stdio", "client", client.Name, "protocol", client.ProtocolVersion, "gets", g.Presentation(client))

	// The SDK is handed the accepted frames as the screen decoded them
	// (checkFrame), not their lines to decode again, less the tools/call
	// messages the fast path takes (raw.go).
	edge := newRawEdge(ctx, g, s, screen)
	screen.fast = edge.take
	conn := sdkshim.NewDecodedConn(in, writeCloser{screen.out, out})
	over := make(chan struct{})
	defer close(over)
	go func() {
		f := first
		for {
			if !conn.Hand(f.msg) {
				return // the session is over
			}
			next, rerr := screen.next()
			if rerr != nil {
				if errors.Is(rerr, io.EOF) {
					// Closing stdin is the client's shutdown, but what it
					// sent before is answered first: the SDK ends the
					// session, and drops its requests, once its reader
					// ends.
					screen.drain(ctx, over)
					rerr = nil
				}
				conn.End(rerr)
				return
			}
			f = next
		}
	}()
	session, err := s.server.Connect(ctx, conn.Transport(), nil)
	edge.connect(session)
	if err != nil {
		conn.Close()
		return fmt.Errorf("starting the stdio session: %w", err)
	}
	if !g.life.hold(session) {
		return ErrClosed
	}
	defer g.life.let(session)
	return WaitOrCancel(ctx, session)
}

// firstMessage reads the client's first accepted message, or gives up
// when ctx ends: a silent client must not hold a cancelled serve. It then
// closes in, which ends the read where in can be interrupted (a pipe, a
// socket); where it cannot (the process's own stdin, which the caller may
// not let it close), the read is left to end with the process, which is
// ending anyway.
func firstMessage(ctx context.Context, screen *stdioScreen, in io.Closer) (*frame, error) {
	type read struct {
		f   *frame
		err error
	}
	got := make(chan read, 1)
	go func() {
		f, err := screen.next()
		got <- read{f, err}
	}()
	select {
	case r := <-got:
		return r.f, r.err
	case <-ctx.Done():
		_ = in.Close()
		return nil, ctx.Err()
	}
}

// writeCloser writes through the screen's writer and closes stdout.
type writeCloser struct {
	io.Writer
	io.Closer
}
