package gateway

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK answers a handler's error that is not a *jsonrpc.Error with
// code 0, which is no JSON-RPC error code: a client cannot tell what kind
// of failure it was (TestSDKSendsCodeZeroForPlainErrors pins this). Every
// server of the gateway therefore gives each error a code on the way out
// (withErrorCodes), and the HTTP front answers a request that needs a
// session and has none itself (http.go), since the SDK refuses it before
// any middleware runs.

// notFoundError is a request for something that does not exist (a prompt,
// a resource template): invalid params, as the protocol words an unknown
// prompt.
type notFoundError struct{ msg string }

func (e *notFoundError) Error() string { return e.msg }

// withErrorCodes gives every error a handler returns a JSON-RPC code:
// invalid params for what does not exist, and internal error for the rest
// (a cancelled request included). A *jsonrpc.Error passes as it is.
func withErrorCodes(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err == nil {
			return res, nil
		}
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) {
			return res, err // the SDK keeps a wrapped error's code
		}
		code := int64(jsonrpc.CodeInternalError)
		var missing *notFoundError
		if errors.As(err, &missing) {
			code = jsonrpc.CodeInvalidParams
		}
		msg := err.Error()
		if errors.Is(err, context.Canceled) {
			msg = "the request was cancelled: " + msg
		}
		return res, &jsonrpc.Error{Code: code, Message: msg}
	}
}
