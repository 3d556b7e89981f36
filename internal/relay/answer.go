package relay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/rawcall"
)

// Outcomes of an answer, as the gateway's metrics and audit name them.
const (
	OK        = "ok"
	Refused   = "refused"    // the source answered with a JSON-RPC error
	ToolError = "tool_error" // a result that says "isError":true
)

// Answer is the JSON-RPC response to a tools/call the byte path forwarded
// (id as the client sent it), answered by its source with res or err, and
// its outcome. It has room for a newline after it. c says how to complete
// the result beyond its content, which Answer always completes: for a
// 2026-07-28 request, its resultType and the server's info.
//
// It is the one check a source's answer passes on its way out as bytes: a
// server's answer is untrusted, and bytes that are not valid JSON would
// break the client's stream (on stdio, end its session). An answer that is
// not valid JSON, or not an object, becomes a tool error that says so and
// what to do; a Go error that is not a JSON-RPC one (a bug's last resort:
// sources answer with results) becomes a tool error worded as the typed
// path words a handler's error.
func Answer(id, tool string, res json.RawMessage, err error, c Completion) (msg []byte, outcome string) {
	if err != nil {
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) {
			return Error(id, rpcErr), Refused
		}
		res = failed(fmt.Sprintf("%s failed: %v", tool, err))
	} else if !rawcall.Valid(res) {
		res = failed(fmt.Sprintf("%s failed: its server's answer was not valid JSON (%d bytes); the server has a bug, report it to its maintainers", tool, len(res)))
	} else if isNull(res) {
		// The SDK's client decodes a null result as an empty one, so the
		// typed path answers it as one: so does the byte path.
		res = json.RawMessage(`{}`)
	} else if !isObject(res) {
		// Valid JSON, but no result a client can read (a string, an
		// array, a number): the typed path's decoding refuses it too.
		res = failed(fmt.Sprintf("%s failed: its server's answer was not a JSON object, as a tool's result must be; the server has a bug, report it to its maintainers", tool))
	} else if readable(res) != nil {
		// The decoder's own words name Go types: these name the usual causes.
		res = failed(fmt.Sprintf("%s failed: its server's answer could not be read as a tool result (content of no known type, a member of the wrong type such as an isError that is not true or false, or data that is not base64); the server has a bug, report it to its maintainers", tool))
	}
	c.Content = true
	// The completed result is at most the members Complete adds longer,
	// but for a re-encoded one (rare).
	msg = make([]byte, 0, len(id)+len(res)+len(contentMember)+len(resultTypeMember)+len(c.ServerInfo)+80)
	msg = append(msg, `{"jsonrpc":"2.0","id":`...)
	msg = append(msg, id...)
	msg = append(msg, `,"result":`...)
	head := len(msg)
	msg, isError, cerr := Complete(msg, res, c)
	if cerr != nil {
		// An object Complete cannot complete (a _meta that is not one):
		// the typed path's decoding refuses it too.
		res = failed(fmt.Sprintf("%s failed: its server's answer could not be read: %v; the server has a bug, report it to its maintainers", tool, cerr))
		msg, isError, cerr = Complete(msg[:head], res, c)
		if cerr != nil {
			panic(fmt.Sprintf("relay: completing an error result of its own: %v", cerr)) // a bug here, not the server's
		}
	}
	outcome = OK
	if isError {
		outcome = ToolError
	}
	return append(msg, '}'), outcome
}

// Error is the JSON-RPC error response to the request id (as the client
// sent it), with room for a newline after it: a source's error passed on,
// or the gateway's own (a call that panicked, one the client withdrew).
func Error(id string, e *jsonrpc.Error) []byte {
	body, err := json.Marshal(e)
	if err != nil {
		// Data that does not encode: the code and message still go out.
		body, _ = json.Marshal(&jsonrpc.Error{Code: e.Code, Message: e.Message})
	}
	msg := make([]byte, 0, len(id)+len(body)+40)
	msg = append(msg, `{"jsonrpc":"2.0","id":`...)
	msg = append(msg, id...)
	msg = append(msg, `,"error":`...)
	msg = append(msg, body...)
	return append(msg, '}')
}

// failed is a tool error result saying msg, as the typed path encodes one.
func failed(msg string) json.RawMessage {
	b, _ := json.Marshal(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}, IsError: true})
	return b
}

// isObject reports whether valid JSON is an object.
func isObject(v json.RawMessage) bool {
	for _, c := range v {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c == '{'
	}
	return false
}

// isNull reports whether valid JSON is null.
func isNull(v json.RawMessage) bool {
	return string(bytes.TrimSpace(v)) == "null"
}
