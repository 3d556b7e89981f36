package gateway

import (
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The SDK answers a handler's error that is not a *jsonrpc.Error with
// code 0, which is no JSON-RPC error code. Every server of the gateway
// therefore gives each error a code on the way out
// (sdkshim.WithErrorCodes with errorCode), and the HTTP front answers a
// request that needs a session and has none itself (http.go), since the
// SDK refuses it before any middleware runs.

// notFoundError is a request for something that does not exist (a prompt,
// a resource template): invalid params, as the protocol words an unknown
// prompt.
type notFoundError struct{ msg string }

func (e *notFoundError) Error() string { return e.msg }

// errorCode is the JSON-RPC code of the errors the gateway tells apart:
// invalid params for what does not exist. Others are internal errors.
func errorCode(err error) (int64, bool) {
	var missing *notFoundError
	if errors.As(err, &missing) {
		return jsonrpc.CodeInvalidParams, true
	}
	return 0, false
}
