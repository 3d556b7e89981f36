package sdkshim_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/sdkshim"
)

// TestSDKLeavesMiddlewareResultsUnmarked: on 2026-07-28 the SDK marks the
// result of a tools/call its own handler answers "resultType":"complete",
// and leaves unmarked one a receiving middleware answers, as the gateway's
// does; which is why sdkshim.Complete marks them. When the second half
// fails, the SDK marks results after the middleware and Complete may go.
func TestSDKLeavesMiddlewareResultsUnmarked(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "bare"}, nil)
	s.AddTool(&mcp.Tool{Name: "own", InputSchema: json.RawMessage(`{"type":"object"}`)}, noArgs)
	s.AddTool(&mcp.Tool{Name: "middle", InputSchema: json.RawMessage(`{"type":"object"}`)}, noArgs)
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if r, ok := req.(*mcp.CallToolRequest); ok && r.Params.Name == "middle" {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "from the middleware"}}}, nil
			}
			return next(ctx, method, req)
		}
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	body, headers := modernCall("own")
	if code, got, _ := post(t, srv.URL, body, headers); code != http.StatusOK || !strings.Contains(got, `"resultType":"complete"`) {
		t.Fatalf("the SDK's own tools/call on 2026-07-28: %d %s; want it marked complete (else this pin tests nothing)", code, got)
	}
	body, headers = modernCall("middle")
	code, got, _ := post(t, srv.URL, body, headers)
	if code != http.StatusOK || !strings.Contains(got, "from the middleware") {
		t.Fatalf("the middleware's tools/call on 2026-07-28: %d %s", code, got)
	}
	if strings.Contains(got, `"resultType"`) {
		t.Fatalf("the SDK now marks a result the middleware answered: %s; sdkshim.Complete may go", got)
	}
}

func TestCompleteForTheStatelessProtocol(t *testing.T) {
	res := sdkshim.Complete(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}, Meta: mcp.Meta{"k": "v"}})
	raw, _ := json.Marshal(res)
	for _, want := range []string{`"resultType":"complete"`, `"text":"hi"`, `"k":"v"`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("%s lacks %s", raw, want)
		}
	}
	var nilResult *mcp.GetPromptResult
	if got := sdkshim.Complete(nilResult); got != nil {
		t.Errorf("a nil result came back as %v", got)
	}
	prompt, _ := json.Marshal(sdkshim.Complete(&mcp.GetPromptResult{Messages: []*mcp.PromptMessage{}}))
	if !strings.Contains(string(prompt), `"resultType":"complete"`) {
		t.Errorf("a prompts/get result was not marked: %s", prompt)
	}
}

// TestCompleteAgreesWithTheRoundTrip: tools/call results are marked
// complete without being encoded and decoded, and must reach the wire as
// the round trip through the SDK's encoding would send them; a result
// already marked, or asking for input, is left alone by both.
func TestCompleteAgreesWithTheRoundTrip(t *testing.T) {
	var inputRequired mcp.CallToolResult
	if err := json.Unmarshal([]byte(`{"resultType":"input_required","content":[],"requestState":"s"}`), &inputRequired); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		res  *mcp.CallToolResult
		want []string // in the encoded result
	}{
		{"text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, []string{`"resultType":"complete"`, `"text":"hi"`}},
		{"structured, an error, meta", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, IsError: true, Meta: mcp.Meta{"k": "v"},
			StructuredContent: json.RawMessage(`{"tools":[{"name":"a","score":1}],"next":"call"}`)}, []string{`"resultType":"complete"`, `"isError":true`, `"name":"a"`}},
		{"structured, a map", &mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: map[string]any{"n": 1.5}, RequestState: "r"}, []string{`"resultType":"complete"`, `"requestState":"r"`}},
		{"asking for input", &inputRequired, []string{`"resultType":"input_required"`}},
		{"input requests", &mcp.CallToolResult{Content: []mcp.Content{}, InputRequests: mcp.InputRequestMap{}}, []string{`"inputRequests":{}`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			encode := func(r *mcp.CallToolResult) any {
				raw, err := json.Marshal(r)
				if err != nil {
					t.Fatal(err)
				}
				for _, w := range tt.want {
					if !strings.Contains(string(raw), w) {
						t.Errorf("%s lacks %s", raw, w)
					}
				}
				var v any
				if err := json.Unmarshal(raw, &v); err != nil {
					t.Fatal(err)
				}
				return v
			}
			got, want := encode(sdkshim.Complete(tt.res)), encode(sdkshim.CompleteByRoundTripForTest(tt.res))
			if !reflect.DeepEqual(got, want) {
				t.Errorf("marked without encoding: %v\nby the round trip: %v", got, want)
			}
		})
	}
}
