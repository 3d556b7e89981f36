package gateway

import (
	"context"
	"fmt"
	"net/http"
	"runtime/debug"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/relay"
)

// A panic while answering one request fails that request, never the
// process: every client and upstream of the gateway would go with it. Each
// way a request travels recovers where its goroutine starts: the typed
// path in the outermost middleware of every session's server (the SDK runs
// each request's handlers on one goroutine), the stdio byte path where a
// line is taken and where its answer comes back (on the source's reading
// goroutine), the HTTP front around each request. The request is answered
// with an internal error, the stack is logged, and a PanicObserver counts
// it.

// PanicObserver is an Observer that also counts the panics of request
// handlers, by path (typed, stdio-bytes, http-request-bytes,
// http-session-bytes, http).
type PanicObserver interface {
	HandlerPanicked(path string)
}

// pathHTTPFront is the HTTP front itself, outside any byte or typed path.
const pathHTTPFront = "http"

// panicMessage is what the client of a failed request reads.
const panicMessage = "toolfold failed while answering this request (an internal error, logged with its stack); the gateway goes on: retry, and report it if it happens again"

func panicError() *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: panicMessage}
}

// notePanic logs and counts a recovered panic.
func (g *Gateway) notePanic(path, method string, v any) {
	g.log.Error("a request's handler panicked: the request failed, the gateway goes on",
		"path", path, "method", method, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	if o, ok := g.opts.Observer.(PanicObserver); ok {
		o.HandlerPanicked(path)
	}
}

// panicPoint lets tests force a panic on a path (see export_test.go).
func (g *Gateway) panicPoint(path, method string) {
	if h := g.panicHook; h != nil {
		h(path, method)
	}
}

// recoverTyped is the outermost middleware of every session's server.
func (g *Gateway) recoverTyped(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer func() {
			if v := recover(); v != nil {
				g.notePanic(pathTyped, method, v)
				res, err = nil, panicError()
			}
		}()
		g.panicPoint(pathTyped, method)
		return next(ctx, method, req)
	}
}

// recoverHTTP answers a request whose handler panicked with an internal
// error, if nothing was written yet. http.ErrAbortHandler is net/http's own
// way to end a response and passes on.
func (g *Gateway) recoverHTTP(w http.ResponseWriter, path string) {
	v := recover()
	if v == nil {
		return
	}
	if v == http.ErrAbortHandler {
		panic(v)
	}
	g.notePanic(path, "", v)
	writeRPCErrorCode(w, http.StatusInternalServerError, nil, jsonrpc.CodeInternalError, panicMessage)
}

// panicAnswer is the stdio byte path's answer to a call that panicked.
func panicAnswer(id string) []byte {
	return append(relay.Error(id, panicError()), '\n')
}
