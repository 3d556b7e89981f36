package sdkshim

import (
	"encoding/json"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/relay"
)

// Complete marks a result as complete ("resultType": "complete"), which
// the 2026-07-28 protocol requires of tools/call, prompts/get and
// resources/read results. The SDK marks the results of the handlers it
// runs itself, but not those a receiving middleware answers
// (TestSDKLeavesMiddlewareResultsUnmarked), and the field is settable only
// through the SDK's own decoding. An SDK that marks results after the
// middleware, or gives them a setter, removes this (docs/sdk-workarounds.md,
// item 4).
//
// R is a pointer type; a nil one encodes as null and is returned as it is.
// A result that asks for input, or one already typed, is left alone.
func Complete[R any](res R) R {
	if r, ok := any(res).(*mcp.CallToolResult); ok && r != nil {
		if out, ok := completeCallResult(r); ok {
			return any(out).(R)
		}
	}
	return completeByRoundTrip(res)
}

// completeMark is the smallest result the SDK decodes as complete: an
// empty one, completed as the byte path completes results.
var completeMark, _, _ = relay.Complete(nil, []byte(`{}`), relay.Completion{Content: true, ResultType: true})

// completeCallResult is Complete for a tools/call result without encoding
// it: the SDK decodes the mark alone into a fresh result and res's exported
// fields are copied onto it, every one, so that a field a later SDK adds is
// kept too. A find_tools answer is kilobytes, and the round trip decoded
// its structured content into maps to encode again.
func completeCallResult(res *mcp.CallToolResult) (*mcp.CallToolResult, bool) {
	if res.NeedsInput() || res.InputRequests != nil {
		return res, true
	}
	out := new(mcp.CallToolResult)
	if err := json.Unmarshal(completeMark, out); err != nil {
		return nil, false
	}
	src, dst := reflect.ValueOf(res).Elem(), reflect.ValueOf(out).Elem()
	for i := range src.NumField() {
		if src.Type().Field(i).IsExported() {
			dst.Field(i).Set(src.Field(i))
		}
	}
	return out, true
}

// completeByRoundTrip is Complete for any result: encoded, marked by
// relay.Complete (the byte path's rule, so that both paths mark alike) and
// decoded by the SDK.
func completeByRoundTrip[R any](res R) R {
	raw, err := json.Marshal(res)
	if err != nil {
		return res
	}
	marked, _, err := relay.Complete(nil, raw, relay.Completion{ResultType: true})
	if err != nil || len(marked) == len(raw) { // not an object, or typed already
		return res
	}
	var out R // Unmarshal allocates what it points to
	if err := json.Unmarshal(marked, &out); err != nil {
		return res
	}
	return out
}
