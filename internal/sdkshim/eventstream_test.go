package sdkshim_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/sdkshim"
)

// TestEventStreamWritesBetweenTheSDKsEvents: an event sent before a
// listen stream is open follows the SDK's acknowledgement, one sent later
// arrives whole beside the SDK's own events, and after Close nothing is
// written.
func TestEventStreamWritesBetweenTheSDKsEvents(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "bare"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "a"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true})
	streams := make(chan *sdkshim.EventStream, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		es := sdkshim.NewEventStream(w, []byte(`{"jsonrpc":"2.0","method":"notifications/x/changed"}`), false)
		es.Send() // before the acknowledgement: held back
		streams <- es
		defer es.Close()
		sdk.ServeHTTP(es, r)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},`+modernMeta+`}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	es := <-streams
	sc := bufio.NewScanner(resp.Body)
	var methods []string
	for len(methods) < 4 && sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var msg struct {
			Method string `json:"method"`
		}
		if err := json.Unmarshal([]byte(data), &msg); err != nil {
			t.Fatalf("an event is not one JSON-RPC message: %q", data)
		}
		methods = append(methods, msg.Method)
		if len(methods) == 2 {
			// The acknowledgement and the held event came: now one of
			// each side at once.
			server.AddTool(&mcp.Tool{Name: "b", InputSchema: json.RawMessage(`{"type":"object"}`)}, noArgs)
			es.Send()
		}
	}
	if len(methods) < 4 || methods[1] != "notifications/x/changed" || !strings.Contains(strings.Join(methods[2:], ","), "notifications/x/changed") ||
		!strings.Contains(strings.Join(methods[2:], ","), "notifications/tools/list_changed") {
		t.Fatalf("the stream carried %q; want the acknowledgement, the held event, then the SDK's list change and the event", methods)
	}
}

// TestEventStreamLeavesOtherAnswersAlone: an answer that is no event
// stream (an error) gets no event, and a closed stream writes nothing.
func TestEventStreamLeavesOtherAnswersAlone(t *testing.T) {
	rec := httptest.NewRecorder()
	es := sdkshim.NewEventStream(rec, []byte(`{}`), true)
	es.Header().Set("Content-Type", "text/plain")
	es.WriteHeader(http.StatusOK)
	es.Send()
	if rec.Body.Len() != 0 {
		t.Errorf("an answer that is no event stream got %q", rec.Body)
	}
	rec = httptest.NewRecorder()
	es = sdkshim.NewEventStream(rec, []byte(`{}`), true)
	es.Header().Set("Content-Type", "text/event-stream")
	es.WriteHeader(http.StatusOK)
	es.Close()
	es.Send()
	if rec.Body.Len() != 0 {
		t.Errorf("a closed stream got %q", rec.Body)
	}
	es = sdkshim.NewEventStream(httptest.NewRecorder(), []byte(`{}`), true)
	es.Header().Set("Content-Type", "text/event-stream")
	es.Send()
	es.WriteHeader(http.StatusOK)
	if got := es.ResponseWriter.(*httptest.ResponseRecorder).Body.String(); got != "event: message\ndata: {}\n\n" {
		t.Errorf("a standalone stream opened by its header got %q, want the held event", got)
	}
}
