package gateway

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"weak"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxFirstLine bounds the first message read before the SDK takes over; an
// initialize request is a few hundred bytes.
const maxFirstLine = 1 << 20

// ServeStdio serves one client over newline-delimited JSON-RPC on in and
// out until the client disconnects or ctx ends.
func (g *Gateway) ServeStdio(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	br := bufio.NewReaderSize(in, 64<<10)
	first, err := readLine(br, maxFirstLine)
	if err != nil && len(first) == 0 {
		if errors.Is(err, io.EOF) {
			return nil // the client left before saying anything
		}
		return fmt.Errorf("reading the first message from stdin: %w", err)
	}
	client := peekClient(first)
	var server *mcp.Server
	if client.Extension && client.ProtocolVersion != "" && client.ProtocolVersion < statelessProtocol {
		// A session of the groups extension can be told when the top-level
		// groups change. The SDK sends only the notifications it knows, so
		// this connection gets a per-request server of its own that writes
		// notifications/groups/list_changed itself, between the SDK's
		// messages (one Write each).
		lw := &lineWriter{w: out}
		out = lw
		s := g.newSessionNotifying(perRequestMode, nil, func() {
			if _, err := lw.Write(groupsListChanged); err != nil {
				g.log.Warn("telling a client its groups changed", "err", err)
			}
		})
		g.mu.Lock()
		g.live = append(g.live, weak.Make(s))
		g.mu.Unlock()
		if obs := g.opts.Observer; obs != nil {
			obs.SessionStarted(g.Presentation(client))
		}
		server = s.server
		defer runtime.KeepAlive(s) // live holds it weakly
	} else {
		server = g.ServerFor(client)
	}
	g.log.Info("client connected", "transport", "stdio", "client", client.Name, "protocol", client.ProtocolVersion, "gets", g.Presentation(client))
	// The SDK reads the first line again, followed by the rest of stdin.
	transport := &mcp.IOTransport{Reader: readCloser{io.MultiReader(bytes.NewReader(first), br), in}, Writer: out}
	session, err := server.Connect(ctx, transport, nil)
	if err != nil {
		return fmt.Errorf("starting the stdio session: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- session.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		session.Close()
		<-done
		return nil
	}
}

// readLine reads up to and including the next newline, at most limit bytes.
func readLine(r *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if err == nil || len(line) >= limit {
			return line, nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// lineWriter lets the gateway write whole messages between the SDK's, each
// of which is one Write.
type lineWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lineWriter) Close() error { return l.w.Close() }

type readCloser struct {
	io.Reader
	io.Closer
}
