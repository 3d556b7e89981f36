package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
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
// stateless sends the call as a 2026-07-28 request, whose result says
// "resultType" and names the server in its _meta.
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
		f.Add(s.tool, s.args, s.answer, false)
		f.Add(s.tool, s.args, s.answer, true)
	}
	f.Add("fast", `{}`, `{"_meta":{"z":1}}`, true)
	f.Add("fast", `{}`, `{"_meta":null,"content":null}`, true)
	f.Add("fast", `{}`, `{"_meta":"x"}`, true)
	f.Fuzz(func(t *testing.T, tool, args, answer string, stateless bool) {
		if !json.Valid([]byte(args)) {
			// A line that is not JSON is the framing's concern (see
			// FuzzCheckFrame); here both paths must see one call.
			return
		}
		name, _ := json.Marshal(tool)
		version, meta := "2025-11-25", ""
		if stateless {
			version, meta = "", ","+statelessMeta
		}
		line := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":%s,"arguments":%s%s}}`, name, args, meta)
		typed, _ := differentialAnswer(t, line, answer, version, true)
		bytePath, _ := differentialAnswer(t, line, answer, version, false)
		if !sameAnswer(typed, bytePath) {
			t.Errorf("the paths disagree on %s answered by %q:\ntyped: %s\nbytes: %s", line, answer, typed, bytePath)
		}
	})
}

// differentialAnswer serves one line over stdio to a gateway of two tools
// whose source answers with answer, to a client that initialized with
// version ("": none, a 2026-07-28 client), and returns what the client read
// and how many calls the byte path's source took.
func differentialAnswer(t *testing.T, line, answer, version string, noBytes bool) (string, int) {
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
	if version != "" {
		w.initialize(version)
	} else {
		// The first line always reaches the SDK (ServeStdio): the call is
		// the second.
		w.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{%s}}`, statelessMeta)
		w.recv()
	}
	w.send("%s", line)
	got := w.recv()
	w.close()
	return got, len(src.calls())
}

// statelessMeta is the _meta of a 2026-07-28 request that the byte path
// can take.
const statelessMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"wire","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

// TestTypedAndBytePathsCompleteAlike: the same answer of a source reaches
// the client byte for byte the same down the typed path and the byte
// path, for a session client and a 2026-07-28 one (whose result says
// "resultType"), where the source wrote its members in the SDK's order:
// both paths complete results through relay.Complete.
func TestTypedAndBytePathsCompleteAlike(t *testing.T) {
	clients := []struct{ name, version, line string }{
		{"session", "2025-11-25", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"fast","arguments":{"x":"a"}}}`},
		{"2026-07-28", "", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"fast","arguments":{"x":"a"},` + statelessMeta + `}}`},
	}
	answers := []string{
		`{}`,
		`{"content":[{"type":"text","text":"ok"}]}`,
		`{"content":[],"structuredContent":{"a":1}}`,
		`{"content":[{"type":"text","text":"no"}],"isError":true}`,
		`{"_meta":{"k":"v"},"content":[{"type":"image","mimeType":"image/png","data":"AA=="}]}`,
		`{"structuredContent":{"b":[1,2]}}`,
	}
	for _, c := range clients {
		for _, answer := range answers {
			t.Run(c.name+"/"+answer, func(t *testing.T) {
				typed, typedCalls := differentialAnswer(t, c.line, answer, c.version, true)
				bytePath, byteCalls := differentialAnswer(t, c.line, answer, c.version, false)
				if typedCalls != 0 || byteCalls != 1 {
					t.Fatalf("the byte path's source took %d calls with byte forwarding off, %d with it on; want 0 and 1", typedCalls, byteCalls)
				}
				if typed != bytePath {
					t.Errorf("the paths differ:\ntyped: %s\nbytes: %s", typed, bytePath)
				}
			})
		}
	}
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
	// Compared as the SDK writes them again: a decoded value can differ
	// where no client can tell ("data":"" decodes to an empty slice, an
	// absent data member to nil; both are written "data":"").
	ex, errX := json.Marshal(&rx)
	ey, errY := json.Marshal(&ry)
	return errX == nil && errY == nil && string(ex) == string(ey)
}
