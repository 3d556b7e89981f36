package relay_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/relay"
	"github.com/toolfold/toolfold/internal/sdkshim"
)

func TestComplete(t *testing.T) {
	both := relay.Completion{Content: true, ResultType: true}
	info := json.RawMessage(`{"name":"s"}`)
	for _, tc := range []struct {
		name, res string
		need      relay.Completion
		want      string
		isError   bool
	}{
		{"empty", `{}`, both, `{"content":[],"resultType":"complete"}`, false},
		{"empty, content only", `{}`, relay.Completion{Content: true}, `{"content":[]}`, false},
		{"nothing needed", ` {"a":1} `, relay.Completion{}, `{"a":1}`, false},
		{"content kept", `{"content":[{"type":"text","text":"x"}]}`, both, `{"content":[{"type":"text","text":"x"}],"resultType":"complete"}`, false},
		{"content added first", `{"structuredContent":{"a":1}}`, both, `{"content":[],"structuredContent":{"a":1},"resultType":"complete"}`, false},
		{"null content replaced", `{"content":null,"isError":true}`, relay.Completion{Content: true}, `{"content":[],"isError":true}`, true},
		{"typed already", `{"content":[],"resultType":"input_required"}`, both, `{"content":[],"resultType":"input_required"}`, false},
		{"asks for input", `{"inputRequests":{}}`, relay.Completion{ResultType: true}, `{"inputRequests":{}}`, false},
		{"a nested resultType is not the result's", `{"structuredContent":{"resultType":"x"}}`, relay.Completion{ResultType: true}, `{"structuredContent":{"resultType":"x"},"resultType":"complete"}`, false},
		{"server info added", `{"content":[]}`, relay.Completion{ResultType: true, ServerInfo: info}, `{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s"}},"content":[],"resultType":"complete"}`, false},
		{"server info into _meta, sorted", `{"_meta":{"z":1,"a":2},"content":[]}`, relay.Completion{ServerInfo: info}, `{"_meta":{"a":2,"io.modelcontextprotocol/serverInfo":{"name":"s"},"z":1},"content":[]}`, false},
		{"server info into a null _meta", `{"_meta":null}`, relay.Completion{ServerInfo: info}, `{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s"}}}`, false},
		{"server info kept", `{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"}}}`, relay.Completion{ServerInfo: info}, `{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"}}}`, false},
		{"white space inside", "{ \"isError\" : true }", both, `{"content":[],"isError" : true,"resultType":"complete"}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, isError, err := relay.Complete([]byte("prefix:"), []byte(tc.res), tc.need)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != "prefix:"+tc.want || isError != tc.isError {
				t.Errorf("Complete(%s) = %s, isError %v; want prefix:%s, %v", tc.res, got, isError, tc.want, tc.isError)
			}
			if !json.Valid(got[len("prefix:"):]) {
				t.Errorf("Complete(%s) = %s: not valid JSON", tc.res, got)
			}
		})
	}
}

func TestCompleteRefusesWhatIsNotAnObject(t *testing.T) {
	for _, tc := range []struct {
		res  string
		want error
	}{
		{`null`, relay.ErrNotObject},
		{`[1]`, relay.ErrNotObject},
		{`"x"`, relay.ErrNotObject},
		{``, relay.ErrNotObject},
		{`{"a":}`, relay.ErrNotObject},
		{`{"_meta":"x"}`, relay.ErrBadMeta},
		{`{"_meta":[]}`, relay.ErrBadMeta},
	} {
		got, _, err := relay.Complete([]byte("p"), []byte(tc.res), relay.Completion{Content: true, ServerInfo: json.RawMessage(`{}`)})
		if !errors.Is(err, tc.want) || string(got) != "p" {
			t.Errorf("Complete(%q) = %q, %v; want nothing appended and %v", tc.res, got, err, tc.want)
		}
	}
}

// TestCompleteMatchesTheTypedPath: the same answer of a source, completed
// by the typed path (decoded as the SDK's client decodes it, marked by
// sdkshim.Complete, encoded by the SDK) and by the byte path (Answer), is
// the same result, byte for byte, where the source wrote its members in
// the SDK's order.
func TestCompleteMatchesTheTypedPath(t *testing.T) {
	for _, answer := range []string{
		`{}`,
		`{"content":[{"type":"text","text":"ok"}]}`,
		`{"content":[],"structuredContent":{"a":1}}`,
		`{"content":[{"type":"text","text":"no"}],"isError":true}`,
		`{"_meta":{"k":"v"},"content":[{"type":"image","mimeType":"image/png","data":"AA=="}]}`,
		`{"structuredContent":{"b":[1,2]}}`,
	} {
		for _, stateless := range []bool{false, true} {
			var res mcp.CallToolResult
			if err := json.Unmarshal([]byte(answer), &res); err != nil {
				t.Fatal(err)
			}
			typedRes := &res
			if stateless {
				typedRes = sdkshim.Complete(typedRes)
			}
			typed, err := json.Marshal(typedRes)
			if err != nil {
				t.Fatal(err)
			}
			msg, _ := relay.Answer("7", "tool", json.RawMessage(answer), nil, relay.Completion{ResultType: stateless})
			var env struct {
				Result json.RawMessage `json:"result"`
			}
			if err := json.Unmarshal(msg, &env); err != nil {
				t.Fatalf("Answer wrote %s: %v", msg, err)
			}
			if string(env.Result) != string(typed) {
				t.Errorf("stateless %v, answer %s:\ntyped: %s\nbytes: %s", stateless, answer, typed, env.Result)
			}
		}
	}
}
