package gateway

import (
	"bytes"
	"context"
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
//
// A stateful endpoint serves both protocol eras: the SDK serves 2026-07-28
// only from a stateless handler, so requests of that protocol (no session,
// the version in the Mcp-Protocol-Version header or in the request's
// _meta) go to one, and everything else to the stateful handler with its
// sessions.
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
		if server, ok := r.Context().Value(chosenServer{}).(*mcp.Server); ok {
			return server // the SDK asks twice for a new session's server
		}
		// The SDK only reads this server's protocol versions; a session's
		// own server was chosen when it began.
		return probe
	}
	handler := func(stateless bool) http.Handler {
		return mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
			Stateless:      stateless,
			Logger:         sdkLogger(g.log),
			SessionTimeout: o.SessionTimeout,
		})
	}
	sessions, modern := handler(o.Stateless), handler(true)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || (r.Header.Get("Mcp-Session-Id") != "" && !o.Stateless) {
			sessions.ServeHTTP(w, r)
			return
		}
		// Read no more than the SDK would, before it sees the request.
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, mcp.DefaultMaxRequestBodyBytes))
		if err != nil {
			// Leave the error to the SDK, which reads the body next and
			// answers with the right status (413 for an oversized body:
			// the *http.MaxBytesError is passed on as it is).
			r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
			sessions.ServeHTTP(w, r)
			return
		}
		client := peekClient(body)
		if v := r.Header.Get("Mcp-Protocol-Version"); client.ProtocolVersion == "" && v >= statelessProtocol {
			client.ProtocolVersion = v
		}
		// A 2026-07-28 request carries no session: nothing outlives it.
		client.Stateless = o.Stateless || client.ProtocolVersion >= statelessProtocol
		r = r.WithContext(context.WithValue(r.Context(), chosenServer{}, g.ServerFor(client)))
		r.Body = io.NopCloser(bytes.NewReader(body))
		if client.ProtocolVersion >= statelessProtocol {
			modern.ServeHTTP(w, r)
			return
		}
		sessions.ServeHTTP(w, r)
	}), nil
}

// chosenServer keys the server the gateway chose for a request in its
// context, where the SDK's getServer callback finds it.
type chosenServer struct{}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
