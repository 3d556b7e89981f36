package relay_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/relay"
)

func TestAnswer(t *testing.T) {
	for _, tc := range []struct {
		name, res string
		err       error
		stateless bool
		outcome   string
		// want is the whole message, or "" where the text says why.
		want, says string
	}{
		{name: "ok", res: `{"content":[]}`, outcome: relay.OK, want: `{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`},
		{name: "stateless", res: `{"content":[]}`, stateless: true, outcome: relay.OK, want: `{"jsonrpc":"2.0","id":7,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}},"content":[],"resultType":"complete"}}`},
		{name: "tool error", res: `{"isError":true}`, outcome: relay.ToolError, want: `{"jsonrpc":"2.0","id":7,"result":{"content":[],"isError":true}}`},
		{name: "JSON-RPC error", err: &jsonrpc.Error{Code: -32602, Message: "bad"}, outcome: relay.Refused, want: `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"bad"}}`},
		{name: "invalid JSON", res: `{"content":[nope}]`, outcome: relay.ToolError, says: "tool failed: its server's answer was not valid JSON (18 bytes); the server has a bug, report it to its maintainers"},
		{name: "invalid JSON, stateless", res: `{"content":[{"type":"text","text":"a\qb"}]}`, stateless: true, outcome: relay.ToolError, says: "its server's answer was not valid JSON"},
		{name: "not an object", res: `[1]`, outcome: relay.ToolError, says: "its server's answer was not a JSON object"},
		{name: "null, read as the SDK reads it", res: ` null `, outcome: relay.OK, want: `{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`},
		{name: "a number", res: `1`, outcome: relay.ToolError, says: "not a JSON object"},
		{name: "empty", res: ``, outcome: relay.ToolError, says: "not valid JSON (0 bytes)"},
		{name: "a _meta that is not an object", res: `{"_meta":"x"}`, stateless: true, outcome: relay.ToolError, says: "could not be read as a tool result"},
		{name: "content of no known type", res: `{"content":[{}]}`, outcome: relay.ToolError, says: "could not be read as a tool result (content of no known type"},
		{name: "an isError that is not a boolean", res: `{"isError":"yes"}`, outcome: relay.ToolError, says: "an isError that is not true or false"},
		{name: "a Go error", err: errors.New("boom"), outcome: relay.ToolError, says: "tool failed: boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg, outcome := relay.Answer("7", "tool", json.RawMessage(tc.res), tc.err, relay.Completion{ResultType: tc.stateless, ServerInfo: serverInfo(tc.stateless)})
			if outcome != tc.outcome {
				t.Errorf("outcome %q, want %q", outcome, tc.outcome)
			}
			if !json.Valid(msg) {
				t.Fatalf("Answer wrote %s: not valid JSON", msg)
			}
			if tc.want != "" {
				if string(msg) != tc.want {
					t.Errorf("Answer wrote %s, want %s", msg, tc.want)
				}
				return
			}
			var env struct {
				ID     int                `json:"id"`
				Result mcp.CallToolResult `json:"result"`
			}
			if err := json.Unmarshal(msg, &env); err != nil {
				t.Fatalf("Answer wrote %s: %v", msg, err)
			}
			text := ""
			if len(env.Result.Content) == 1 {
				if c, ok := env.Result.Content[0].(*mcp.TextContent); ok {
					text = c.Text
				}
			}
			if env.ID != 7 || !env.Result.IsError || !strings.Contains(text, tc.says) {
				t.Errorf("Answer wrote %s; want a tool error for id 7 saying %q", msg, tc.says)
			}
			if tc.stateless && !strings.HasSuffix(string(msg), `"resultType":"complete"}}`) {
				t.Errorf("Answer wrote %s; a 2026-07-28 error result is complete too", msg)
			}
		})
	}
}

// serverInfo is a server's info, for a 2026-07-28 request.
func serverInfo(stateless bool) json.RawMessage {
	if !stateless {
		return nil
	}
	return json.RawMessage(`{"name":"s","version":"1"}`)
}

func TestError(t *testing.T) {
	for _, tc := range []struct {
		name string
		id   string
		err  *jsonrpc.Error
		want string
	}{
		{"number id", "7", &jsonrpc.Error{Code: -32603, Message: "boom"}, `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"boom"}}`},
		{"string id", `"a"`, &jsonrpc.Error{Code: -32602, Message: "bad \"x\""}, `{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"bad \"x\""}}`},
		{"data kept", "1", &jsonrpc.Error{Code: 1, Message: "m", Data: json.RawMessage(`{"k":1}`)}, `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":{"k":1}}}`},
		{"data that does not encode dropped", "1", &jsonrpc.Error{Code: 1, Message: "m", Data: json.RawMessage(`{nope`)}, `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(relay.Error(tc.id, tc.err)); got != tc.want {
				t.Errorf("Error = %s, want %s", got, tc.want)
			}
		})
	}
}
