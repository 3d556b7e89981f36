package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
)

// FuzzTypedAndBytePathsAgree sends the same tools/call, answered by the same
// upstream bytes, down the typed path (byte forwarding off) and the byte
// path, and requires the same answer as a client reads it: valid JSON both
// times, the same id, the same error code, or results that decode to the
// same CallToolResult. The typed path's source decodes the answer as the
// SDK's client would; a malformed one is a tool error on both paths.
func FuzzTypedAndBytePathsAgree(f *testing.F) {
	seeds := []struct{ tool, args, answer string }{
		{"fast", `{"x":"a"}`, `{"content":[{"type":"text","text":"ok"}]}`},
		{"fast", `{}`, `{"structuredContent":{"a":1}}`},
		{"fast", `null`, `{"content":null,"isError":true}`},
		{"checked", `{"x":1}`, `{"content":[]}`},
		{"checked", `{"x":"a"}`, `{"content":[{"type":"text","text":"a\u0000b"}]}`},
		{"fast", `{"x":"a"}`, `{"content":[nope}]`},
		{"fast", `{"x":"a"}`, `{"content":[{"type":"text","text":"a\qb"}]}`},
		{"fast", `[1]`, `{}`},
		{"nope", `{}`, `{}`},
		{"fast", `{"x":"\ud800"}`, `{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`},
	}
	for _, s := range seeds {
		f.Add(s.tool, s.args, s.answer)
	}
	f.Fuzz(func(t *testing.T, tool, args, answer string) {
		if !json.Valid([]byte(args)) {
			// A line that is not JSON is the framing's concern (see
			// FuzzCheckFrame); here both paths must see one call.
			return
		}
		name, _ := json.Marshal(tool)
		line := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":%s,"arguments":%s}}`, name, args)
		typed := differentialAnswer(t, line, answer, true)
		bytePath := differentialAnswer(t, line, answer, false)
		if !sameAnswer(typed, bytePath) {
			t.Errorf("the paths disagree on %s answered by %q:\ntyped: %s\nbytes: %s", line, answer, typed, bytePath)
		}
	})
}

// differentialAnswer serves one line over stdio to a gateway of two tools
// whose source answers with answer, and returns what the client read.
func differentialAnswer(t *testing.T, line, answer string, noBytes bool) string {
	t.Helper()
	src := &fakeSource{cancelled: make(chan string, 4), answer: func(string) (json.RawMessage, error) { return json.RawMessage(answer), nil }}
	typed := func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var res mcp.CallToolResult
		if err := json.Unmarshal([]byte(answer), &res); err != nil {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the server's answer was not valid JSON"}}}, nil
		}
		return &res, nil
	}
	var tools []*catalog.Tool
	for _, id := range []string{"fast", "checked"} {
		tl := catalogtest.Tool(id)
		tl.Source = "src"
		tl.Handler = typed
		tl.ChecksArguments = id == "fast"
		tl.Forward = src.forwarder(id)
		tools = append(tools, tl)
	}
	g := specGateway(t, catalog.Spec{Tools: tools}, &gateway.Options{Mode: expose.Flat, NoByteForwarding: noBytes})
	w := serveWire(t, g)
	w.initialize("2025-11-25")
	w.send("%s", line)
	got := w.recv()
	w.close()
	return got
}

// sameAnswer compares two JSON-RPC answers as a client reads them.
func sameAnswer(a, b string) bool {
	type answer struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	var x, y answer
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	if string(x.ID) != string(y.ID) || (x.Error == nil) != (y.Error == nil) {
		return false
	}
	if x.Error != nil {
		return x.Error.Code == y.Error.Code
	}
	var rx, ry mcp.CallToolResult
	if json.Unmarshal(x.Result, &rx) != nil || json.Unmarshal(y.Result, &ry) != nil {
		return false
	}
	if rx.IsError || ry.IsError {
		// Error texts are each path's own words; that it failed is the
		// contract.
		return rx.IsError == ry.IsError
	}
	return reflect.DeepEqual(rx, ry)
}
