package sdkshim

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// WithErrorCodes returns a receiving middleware that gives every error a
// handler returns a JSON-RPC code. The SDK sends an error that is not, and
// wraps no, *jsonrpc.Error with code 0, which JSON-RPC does not define, so
// a client cannot tell what kind of failure it was
// (TestSDKSendsCodeZeroForPlainErrors; docs/sdk-workarounds.md, item 8).
//
// codeOf, if not nil, names the code of the errors its owner knows (a
// "not found" is invalid params); the rest get internal error, a cancelled
// request included, said so in the message. A *jsonrpc.Error passes as it
// is.
func WithErrorCodes(codeOf func(error) (code int64, ok bool)) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
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
			if codeOf != nil {
				if c, ok := codeOf(err); ok {
					code = c
				}
			}
			msg := err.Error()
			if errors.Is(err, context.Canceled) {
				msg = "the request was cancelled: " + msg
			}
			return res, &jsonrpc.Error{Code: code, Message: msg}
		}
	}
}
