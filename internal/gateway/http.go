package gateway

import (
	"bytes"
	"io"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPOptions configure the streamable HTTP endpoint.
type HTTPOptions struct {
	// Stateless serves every request on its own, without sessions (the
	// 2026-07-28 way). There is no view to keep, so auto mode serves search.
	Stateless bool
	// SessionTimeout closes sessions idle for this long; zero means 30
	// minutes. A closed session's view is gone; the client starts afresh.
	SessionTimeout time.Duration
}

// HTTPHandler serves MCP over streamable HTTP. Mount it at /mcp. On a
// stateless endpoint the groups mode has no view: its enable_tools then
// describes the groups' tools for call_tool and changes no list, as for
// every 2026-07-28 client.
func (g *Gateway) HTTPHandler(opts *HTTPOptions) (http.Handler, error) {
	var o HTTPOptions
	if opts != nil {
		o = *opts
	}
	if o.SessionTimeout == 0 {
		o.SessionTimeout = 30 * time.Minute
	}
	probe := mcp.NewServer(&mcp.Implementation{Name: g.opts.Name, Version: g.opts.Version}, nil)
	getServer := func(r *http.Request) *mcp.Server {
		if pb, ok := r.Body.(*peekedBody); ok {
			return pb.server // the SDK asks twice for a new session's server
		}
		if r.Method != http.MethodPost || (r.Header.Get("Mcp-Session-Id") != "" && !o.Stateless) {
			// The SDK only reads this server's protocol versions; the
			// session's own server was chosen when it began.
			return probe
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			// Leave the error to the SDK, which reads the body next and
			// answers with the right status (413 for an oversized body).
			r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
			return probe
		}
		client := peekClient(body)
		// A 2026-07-28 request carries no session: nothing outlives it.
		client.Stateless = o.Stateless || client.ProtocolVersion >= statelessProtocol
		server := g.ServerFor(client)
		r.Body = &peekedBody{Reader: bytes.NewReader(body), server: server}
		return server
	}
	return mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Stateless:      o.Stateless,
		Logger:         sdkLogger(g.log),
		SessionTimeout: o.SessionTimeout,
	}), nil
}

// peekedBody replays a request body the gateway has read, and remembers the
// server chosen for it.
type peekedBody struct {
	io.Reader
	server *mcp.Server
}

func (*peekedBody) Close() error { return nil }

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
