package gateway

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/groupsext"
)

// The gate for what a client puts in a request's params. Every request the
// SDK decodes, on every path into a session's server (stdio, HTTP, the
// per-request server, /mcp/<group>, token-limited views), passes checkParams
// before any handler, so no handler meets a cursor, name or URI that is not
// the shape it expects. The byte paths (raw.go, httpfast.go) forward only
// tools/call, and check its name with the same checkName.

const (
	// maxCursorBytes bounds a cursor: ours are the base64 of one item's
	// key (a name or a URI), or the SDK's gob of one.
	maxCursorBytes = 8 << 10
	// maxNameBytes bounds a tool's or a prompt's name; the protocol asks
	// for 128 characters, a little room is left for upstreams that exceed it.
	maxNameBytes = 1 << 10
	// maxURIBytes bounds a resource URI.
	maxURIBytes = 16 << 10
)

// errCursor is the answer to a cursor no list of the gateway gave.
func errCursor(method string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(
		"invalid cursor for %s: pass the nextCursor of the previous page unchanged, or no cursor for the first page", method)}
}

// checkParams refuses a request whose params are not what its method
// takes, and words the handlers' own refusal of a cursor. Its result is
// never a typed nil beside an error: the middlewares outside it read
// results by type.
func checkParams(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		params := req.GetParams()
		if err := validParams(method, params); err != nil {
			return nil, err
		}
		res, err := next(ctx, method, req)
		if err != nil {
			var rpcErr *jsonrpc.Error
			if cursorOf(params) != "" && errors.As(err, &rpcErr) && rpcErr.Code == jsonrpc.CodeInvalidParams && !strings.Contains(rpcErr.Message, "cursor") {
				// The SDK's lists say only "invalid params".
				err = errCursor(method)
			}
			return nil, err
		}
		return res, nil
	}
}

// validParams checks the client-supplied members every handler relies on.
func validParams(method string, params mcp.Params) error {
	if params == nil || isNilPointer(params) {
		return nil // the SDK refuses missing params where a method needs them
	}
	if c := cursorOf(params); c != "" && !wellFormedCursor(c) {
		return errCursor(method)
	}
	switch p := params.(type) {
	case *mcp.CallToolParamsRaw: // what a server decodes
		return checkName(method, "tool", p.Name, "as tools/list lists it")
	case *mcp.CallToolParams:
		return checkName(method, "tool", p.Name, "as tools/list lists it")
	case *mcp.GetPromptParams:
		return checkName(method, "prompt", p.Name, "as prompts/list lists it")
	case *mcp.ReadResourceParams:
		return checkURI(method, p.URI)
	case *mcp.SubscribeParams:
		return checkURI(method, p.URI)
	case *mcp.UnsubscribeParams:
		return checkURI(method, p.URI)
	}
	return nil
}

func isNilPointer(p mcp.Params) bool {
	v := reflect.ValueOf(p)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// cursorOf is the cursor of a list request, or "".
func cursorOf(params mcp.Params) string {
	switch p := params.(type) {
	case *mcp.ListToolsParams:
		if p != nil {
			return p.Cursor
		}
	case *mcp.ListPromptsParams:
		if p != nil {
			return p.Cursor
		}
	case *mcp.ListResourcesParams:
		if p != nil {
			return p.Cursor
		}
	case *mcp.ListResourceTemplatesParams:
		if p != nil {
			return p.Cursor
		}
	case *groupsext.ListParams:
		if p != nil {
			return p.Cursor
		}
	case *skillListParams:
		if p != nil {
			return p.Cursor
		}
	}
	return ""
}

// wellFormedCursor: every cursor the gateway or the SDK gives is base64 in
// the URL alphabet (padded or not) of a bounded key.
func wellFormedCursor(c string) bool {
	if len(c) > maxCursorBytes {
		return false
	}
	for i := 0; i < len(c); i++ {
		b := c[i]
		switch {
		case 'A' <= b && b <= 'Z', 'a' <= b && b <= 'z', '0' <= b && b <= '9', b == '-', b == '_', b == '=':
		default:
			return false
		}
	}
	if _, err := base64.URLEncoding.DecodeString(c); err == nil {
		return true
	}
	_, err := base64.RawURLEncoding.DecodeString(c)
	return err == nil
}

// checkName refuses a name no list could hold: empty, over long, not
// UTF-8, or with control characters.
func checkName(method, what, name, where string) error {
	switch {
	case name == "":
		return invalidParams("%s needs params.name: the %s to use, %s", method, what, where)
	case len(name) > maxNameBytes:
		return invalidParams("%s: params.name is %d bytes, over the %d a %s name may have; use a name %s", method, len(name), maxNameBytes, what, where)
	case !utf8.ValidString(name) || strings.ContainsFunc(name, isControl):
		return invalidParams("%s: params.name %q is not a %s name (it has control characters or is not UTF-8); use a name %s", method, name, what, where)
	}
	return nil
}

func checkURI(method, uri string) error {
	switch {
	case uri == "":
		return invalidParams("%s needs params.uri: a URI as resources/list lists it", method)
	case len(uri) > maxURIBytes:
		return invalidParams("%s: params.uri is %d bytes, over the %d a resource URI may have; use a URI as resources/list lists it", method, len(uri), maxURIBytes)
	case !utf8.ValidString(uri) || strings.ContainsFunc(uri, isControl):
		return invalidParams("%s: params.uri %q has control characters or is not UTF-8; use a URI as resources/list lists it", method, uri)
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }
