package sdkshim_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/sdkshim"
)

// checkedHandler serves a bare stateless SDK handler with one tool,
// "own", and, if verdicts is not nil, tells it for each request whether
// HandlerWouldServe passed it and what the SDK answered.
func checkedHandler(t *testing.T, verdicts chan<- [2]int) (url string) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "bare"}, nil)
	s.AddTool(&mcp.Tool{Name: "own", InputSchema: json.RawMessage(`{"type":"object"}`)}, noArgs)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mirror := 0
		if sdkshim.HandlerWouldServe(r) {
			mirror = 1
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if verdicts != nil {
			verdicts <- [2]int{mirror, rec.Code}
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestSDKHandlerChecksAsMirrored: for each Host, Content-Type and Accept
// below, the SDK's streamable handler serves a valid 2026-07-28 call
// exactly when HandlerWouldServe says it would (the byte paths of the
// gateway, httpfast.go, take only such requests). A failure names the
// header where the SDK and the mirror now disagree.
func TestSDKHandlerChecksAsMirrored(t *testing.T) {
	verdicts := make(chan [2]int, 1)
	url := checkedHandler(t, verdicts)
	body, headers := modernCall("own")
	for _, tt := range []struct {
		name, header, value string
	}{
		{"as sent", "", ""},
		{"a foreign Host on loopback", "Host", "rebinding.invalid"},
		{"localhost", "Host", "localhost"},
		{"a loopback IPv6 Host", "Host", "[::1]:9"},
		{"text content", "Content-Type", "text/plain"},
		{"JSON with a charset", "Content-Type", "application/json; charset=utf-8"},
		{"JSON in capitals", "Content-Type", "Application/JSON"},
		{"JSON only", "Accept", "application/json"},
		{"events only", "Accept", "text/event-stream"},
		{"anything", "Accept", "*/*"},
		{"wildcard subtypes", "Accept", "application/*, text/*"},
		{"with qualities", "Accept", "application/json;q=0.9, text/event-stream;q=0.5"},
		{"no Accept", "Accept", "-"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range headers {
				req.Header.Set(k, v)
			}
			switch {
			case tt.header == "Host":
				req.Host = tt.value
			case tt.value == "-":
				req.Header.Del(tt.header)
			case tt.header != "":
				req.Header.Set(tt.header, tt.value)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			v := <-verdicts
			if served := v[1] == http.StatusOK; served != (v[0] == 1) {
				t.Errorf("the SDK answered %d; HandlerWouldServe said %v", v[1], v[0] == 1)
			}
		})
	}
}

// TestSDKErrorStatusAsMirrored: the status the SDK's handler gives a
// 2026-07-28 answer is the one ErrorStatus gives its error (the gateway's
// byte path answers with it).
func TestSDKErrorStatusAsMirrored(t *testing.T) {
	url := checkedHandler(t, nil)
	for _, tt := range []struct{ name, method, params string }{
		{"a call", "tools/call", `"name":"own","arguments":{},`},
		{"an unknown tool", "tools/call", `"name":"nope","arguments":{},`},
		{"an unknown method", "nope/nope", ``},
		{"an unknown prompt", "prompts/get", `"name":"nope",`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"jsonrpc":"2.0","id":1,"method":"` + tt.method + `","params":{` + tt.params + modernMeta + `}}`
			headers := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": tt.method}
			if tt.method == "tools/call" || tt.method == "prompts/get" {
				var p struct{ Name string }
				json.Unmarshal([]byte(`{`+strings.TrimSuffix(tt.params, ",")+`}`), &p)
				headers["Mcp-Name"] = p.Name
			}
			code, answer, _ := post(t, url, body, headers)
			var msg struct {
				Error *jsonrpc.Error `json:"error"`
			}
			// One message, as plain JSON or as one event of a stream.
			if i := strings.Index(answer, "data: "); i >= 0 {
				answer = strings.TrimSpace(answer[i+len("data: "):])
			}
			if err := json.Unmarshal([]byte(answer), &msg); err != nil {
				t.Fatalf("the answer %d %q is not one JSON-RPC message: %v", code, answer, err)
			}
			var err error
			if msg.Error != nil {
				err = msg.Error
			}
			if want := sdkshim.ErrorStatus(err); code != want {
				t.Errorf("the SDK answered %d %s; ErrorStatus says %d", code, answer, want)
			}
		})
	}
}
