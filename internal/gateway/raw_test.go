package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/rawcall"
)

// fakeSource is a source with a fast path: it records the calls it takes
// and answers each with what answer returns for the tool, from a goroutine
// of its own, as a real source answers from its reading goroutine.
type fakeSource struct {
	mu        sync.Mutex
	taken     []*rawcall.Call
	refuse    bool
	cancelled chan string
	// took, if set, hears each tool whose call the source took; it must
	// have room for every call the test makes.
	took   chan string
	answer func(tool string) (json.RawMessage, error) // nil result and error: never answer
}

func (f *fakeSource) forwarder(tool string) rawcall.Forwarder {
	return func(call *rawcall.Call) (func(), bool) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.refuse {
			return nil, false
		}
		// Arguments live only as long as this call (rawcall.Call).
		kept := *call
		kept.Arguments = bytes.Clone(call.Arguments)
		f.taken = append(f.taken, &kept)
		if f.took != nil {
			f.took <- tool
		}
		if tool == "roots" {
			go call.Done(askRoots(call.Downstream))
			return func() { f.cancelled <- tool }, true
		}
		if res, err := f.answer(tool); res != nil || err != nil {
			go call.Done(res, err)
		}
		return func() { f.cancelled <- tool }, true
	}
}

// askRoots is the roots tool of a fake source: it asks the calling client
// for its roots and answers with their URIs, or with the refusal as a tool
// error.
func askRoots(d rawcall.Downstream) (json.RawMessage, error) {
	text, isError := "", false
	if res, err := d.ListRoots(context.Background(), &mcp.ListRootsParams{}); err != nil {
		text, isError = err.Error(), true
	} else {
		for _, r := range res.Roots {
			text += r.URI + " "
		}
	}
	return json.Marshal(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isError})
}

func (f *fakeSource) calls() []*rawcall.Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*rawcall.Call(nil), f.taken...)
}

// rawGateway serves a flat catalog of fast (a fast path), hang (a fast path
// that never answers), slow (no fast path), checked (a fast path, but a
// source that does not check its own arguments) and roots (a fast path
// that asks the client for its roots). Their typed handler answers "typed
// <tool>".
func rawGateway(t *testing.T, src *fakeSource) *gateway.Gateway {
	t.Helper()
	return specGateway(t, catalog.Spec{Tools: rawTools(src)}, &gateway.Options{Mode: expose.Flat})
}

// rawTools are rawGateway's tools.
func rawTools(src *fakeSource) []*catalog.Tool {
	typed := func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "typed " + req.Params.Name}}}, nil
	}
	var tools []*catalog.Tool
	for _, id := range []string{"fast", "hang", "slow", "checked", "roots"} {
		tl := catalogtest.Tool(id)
		tl.Source = "src"
		tl.Handler = typed
		tl.ChecksArguments = id != "checked"
		if id != "slow" {
			tl.Forward = src.forwarder(id)
		}
		tools = append(tools, tl)
	}
	return tools
}

// rawHTTPServer serves rawGateway over streamable HTTP until the test ends.
func rawHTTPServer(t *testing.T, src *fakeSource) *httptest.Server {
	t.Helper()
	h, err := rawGateway(t, src).HTTPHandler(nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// wire is a client speaking newline-delimited JSON-RPC to ServeStdio.
type wire struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan string
	// served is closed once ServeStdio has returned.
	served chan struct{}
}

func serveWire(t *testing.T, g *gateway.Gateway) *wire {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	w := &wire{t: t, in: inW, lines: make(chan string, 16), served: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		err := g.ServeStdio(context.Background(), inR, outW)
		close(w.served)
		done <- err
		outW.Close()
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			w.lines <- sc.Text()
		}
		close(w.lines)
	}()
	t.Cleanup(func() {
		inW.Close()
		if err := <-done; err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
	})
	return w
}

// close ends the client's stdin and waits until ServeStdio has returned
// (the SDK may close the output before that).
func (w *wire) close() {
	w.in.Close()
	<-w.served
}

func (w *wire) send(format string, args ...any) {
	w.t.Helper()
	if _, err := fmt.Fprintf(w.in, format+"\n", args...); err != nil {
		w.t.Fatal(err)
	}
}

// recv returns the next message the gateway wrote.
func (w *wire) recv() string {
	w.t.Helper()
	select {
	case line, ok := <-w.lines:
		if !ok {
			w.t.Fatal("the gateway closed stdout")
		}
		return line
	case <-time.After(10 * time.Second): // a hang guard, not a speed bet
		w.t.Fatal("no message from the gateway within 10s")
	}
	return ""
}

func (w *wire) initialize(protocol string) {
	w.t.Helper()
	w.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{"elicitation":{}},"clientInfo":{"name":"wire","version":"1"}}}`, protocol)
	if got := w.recv(); !strings.Contains(got, `"id":1,"result"`) {
		w.t.Fatalf("initialize answered %s", got)
	}
	w.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

func answerText(text string) func(string) (json.RawMessage, error) {
	return func(tool string) (json.RawMessage, error) {
		if tool == "hang" {
			return nil, nil
		}
		return json.RawMessage(`{"content":[{"type":"text","text":"` + text + `"}]}`), nil
	}
}

// TestFastPathOnASessionClient: a call that needs nothing of the SDK is
// answered by the source's bytes; every call that does takes the typed path.
func TestFastPathOnASessionClient(t *testing.T) {
	src := &fakeSource{answer: answerText("raw"), cancelled: make(chan string, 1)}
	w := serveWire(t, rawGateway(t, src))
	w.initialize("2025-11-25")

	w.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fast","arguments":{"x":"1"}}}`)
	if got, want := w.recv(), `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"raw"}]}}`; got != want {
		t.Errorf("fast path answer:\n got %s\nwant %s", got, want)
	}
	calls := src.calls()
	if len(calls) != 1 || string(calls[0].Arguments) != `{"x":"1"}` || !calls[0].Capabilities.FormElicitation || calls[0].Downstream == nil {
		t.Fatalf("the source took %d calls; the first: %+v", len(calls), calls)
	}

	typedCalls := []struct{ name, params string }{
		{"a progress token", `{"name":"fast","_meta":{"progressToken":"p1"}}`},
		{"a tool's own _meta", `{"name":"fast","_meta":{"example.com/key":1}}`},
		{"a source without a fast path", `{"name":"slow"}`},
		{"a source that does not check its arguments", `{"name":"checked","arguments":{"x":"1"}}`},
		{"a name with escapes", `{"name":"f\u0061st"}`},
		{"arguments that are not an object", `{"name":"fast","arguments":[1]}`},
	}
	for i, tc := range typedCalls {
		id := 10 + i
		w.send(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, id, tc.params)
		got := w.recv()
		if !strings.Contains(got, fmt.Sprintf(`"id":%d,`, id)) || (!strings.Contains(got, `typed `) && !strings.Contains(got, `"error"`)) {
			t.Errorf("%s: answered %s, want the typed path's answer", tc.name, got)
		}
	}
	if n := len(src.calls()); n != 1 {
		t.Errorf("the source's fast path took %d calls, want only the first", n)
	}

	// A source that cannot take the call now leaves it to the typed path.
	src.mu.Lock()
	src.refuse = true
	src.mu.Unlock()
	w.send(`{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"fast"}}`)
	if got := w.recv(); !strings.Contains(got, `"id":30,`) || !strings.Contains(got, "typed fast") {
		t.Errorf("refused by the source: %s", got)
	}
}

// TestFastPathCancellation: a cancelled call is withdrawn at its source and
// never answered; the session goes on.
func TestFastPathCancellation(t *testing.T) {
	src := &fakeSource{answer: answerText("raw"), cancelled: make(chan string, 1)}
	w := serveWire(t, rawGateway(t, src))
	w.initialize("2025-11-25")
	w.send(`{"jsonrpc":"2.0","id":"h-1","method":"tools/call","params":{"name":"hang"}}`)
	w.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"h-1","reason":"changed my mind"}}`)
	select {
	case tool := <-src.cancelled:
		if tool != "hang" {
			t.Errorf("cancelled %q", tool)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the source never heard of the cancellation")
	}
	w.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fast"}}`)
	if got := w.recv(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":3,`) {
		t.Errorf("after the cancellation the next message is %s, want the answer to id 3 (and none to h-1)", got)
	}
}

// TestFastPathStatelessClient: a 2026-07-28 request gets its result marked
// complete, as the typed path marks it; one whose client declared
// elicitation takes the typed path, which can ask it through results.
func TestFastPathStatelessClient(t *testing.T) {
	src := &fakeSource{answer: answerText("raw"), cancelled: make(chan string, 1)}
	w := serveWire(t, rawGateway(t, src))
	meta := func(caps string) string {
		return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"wire","version":"1"},"io.modelcontextprotocol/clientCapabilities":` + caps + `}`
	}
	w.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fast",%s}}`, meta(`{"elicitation":{}}`))
	if got := w.recv(); !strings.Contains(got, "typed fast") || !strings.Contains(got, `"resultType":"complete"`) {
		t.Errorf("a client that takes elicitation: %s, want the typed path", got)
	}
	w.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fast","arguments":{},%s}}`, meta(`{"roots":{}}`))
	if got, want := w.recv(), `{"jsonrpc":"2.0","id":2,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"toolfold","version":""}},"content":[{"type":"text","text":"raw"}],"resultType":"complete"}}`; got != want {
		t.Errorf("fast path answer:\n got %s\nwant %s", got, want)
	}
	calls := src.calls()
	if len(calls) != 1 || calls[0].Capabilities != (rawcall.Capabilities{Roots: true}) {
		t.Fatalf("the source took %+v", calls)
	}
	// A source asking such a client anyway is refused, as the typed path
	// refuses an undeclared capability.
	if _, err := calls[0].Downstream.Elicit(context.Background(), &mcp.ElicitParams{Message: "?"}); err == nil || !strings.Contains(err.Error(), "did not declare") {
		t.Errorf("eliciting from a client that declared no elicitation: %v", err)
	}
}

// TestFastPathAnswersLikeTheTypedPath: what a source answers is completed
// as the typed path completes it, and a protocol error reaches the client
// as one.
func TestFastPathAnswersLikeTheTypedPath(t *testing.T) {
	tests := []struct {
		name   string
		answer json.RawMessage
		err    error
		want   string
	}{
		{"no content", json.RawMessage(`{"structuredContent":{"a":1}}`), nil, `"result":{"content":[],"structuredContent":{"a":1}}`},
		{"null content", json.RawMessage(`{"content":null,"isError":true}`), nil, `"result":{"content":[],"isError":true}`},
		{"empty result", json.RawMessage(` {} `), nil, `"result":{"content":[]}`},
		{"a tool error passes through", json.RawMessage(`{"content":[],"isError":true,"_meta":{"k":"v"}}`), nil, `"result":{"content":[],"isError":true,"_meta":{"k":"v"}}`},
		{"protocol error", nil, &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: "needs sampling"}, `"error":{"code":-32021,"message":"needs sampling"}`},
		// A hostile or broken server's bytes never reach the client as
		// they are: what goes out is valid JSON, and says what went wrong.
		{"malformed result", json.RawMessage(`{"content":[nope}]`), nil, `not valid JSON`},
		{"malformed string", json.RawMessage(`{"content":[{"type":"text","text":"a\qb"}]}`), nil, `not valid JSON`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &fakeSource{cancelled: make(chan string, 1), answer: func(string) (json.RawMessage, error) { return tt.answer, tt.err }}
			w := serveWire(t, rawGateway(t, src))
			w.initialize("2025-11-25")
			w.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"fast"}}`)
			got := w.recv()
			if !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":5,`) || !strings.Contains(got, tt.want) {
				t.Errorf("answered %s\nwant it to contain %s", got, tt.want)
			}
			if !json.Valid([]byte(got)) {
				t.Errorf("answered invalid JSON: %s", got)
			}
			if len(src.calls()) != 1 {
				t.Errorf("the fast path took %d calls", len(src.calls()))
			}
		})
	}
}

// TestFastPathOverHTTP: a 2026-07-28 request with no session that the
// SDK's handler would accept is answered with the source's bytes as plain
// JSON; anything the SDK must judge goes to it.
func TestFastPathOverHTTP(t *testing.T) {
	src := &fakeSource{answer: answerText("raw"), cancelled: make(chan string, 1)}
	srv := rawHTTPServer(t, src)
	body := func(name, caps string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + name + `","arguments":{"x":"1"},"_meta":{` +
			`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"h","version":"1"},` +
			`"io.modelcontextprotocol/clientCapabilities":` + caps + `}}}`
	}
	post := func(body string, header map[string]string) (int, string, string) {
		t.Helper()
		code, ct, got, _ := postMCP(t, srv.URL, body, map[string]string{
			"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "fast"}, header)
		return code, ct, got
	}

	code, ct, got := post(body("fast", `{}`), nil)
	if want := `{"jsonrpc":"2.0","id":7,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"toolfold","version":""}},"content":[{"type":"text","text":"raw"}],"resultType":"complete"}}`; code != 200 || ct != "application/json" || got != want {
		t.Errorf("fast path: %d %s %s\nwant 200 application/json %s", code, ct, got, want)
	}
	if calls := src.calls(); len(calls) != 1 || string(calls[0].Arguments) != `{"x":"1"}` {
		t.Fatalf("the source took %+v", calls)
	}

	for _, tc := range []struct {
		name   string
		body   string
		header map[string]string
	}{
		{"no Mcp-Name header", body("fast", `{}`), map[string]string{"Mcp-Name": ""}},
		{"an Mcp-Name that is not the body's", body("fast", `{}`), map[string]string{"Mcp-Name": "slow"}},
		{"an argument bound to a header", body("fast", `{}`), map[string]string{"Mcp-Param-X": "1"}},
		{"a client that takes elicitation", body("fast", `{"elicitation":{}}`), nil},
		{"an Accept without event streams", body("fast", `{}`), map[string]string{"Accept": "application/json"}},
		{"a tool without a fast path", body("slow", `{}`), map[string]string{"Mcp-Name": "slow"}},
		{"a session protocol", body("fast", `{}`), map[string]string{"Mcp-Protocol-Version": "2025-11-25"}},
	} {
		code, _, got := post(tc.body, tc.header)
		if strings.Contains(got, `"text":"raw"`) {
			t.Errorf("%s: took the fast path (%d %s)", tc.name, code, got)
		}
	}
	if n := len(src.calls()); n != 1 {
		t.Errorf("the source's fast path took %d calls, want only the first", n)
	}
}

// TestFastPathOverHTTPErrorStatus: a protocol error gets the HTTP status
// the SDK gives it on the 2026-07-28 protocol (SEP-2575).
func TestFastPathOverHTTPErrorStatus(t *testing.T) {
	src := &fakeSource{cancelled: make(chan string, 1), answer: func(string) (json.RawMessage, error) {
		return nil, &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: "sampling capability required"}
	}}
	srv := rawHTTPServer(t, src)
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fast","_meta":{`+
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "fast"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(raw), `"code":-32021`) || len(src.calls()) != 1 {
		t.Errorf("a missing capability: %d %s (fast path took %d calls)", resp.StatusCode, raw, len(src.calls()))
	}
}

// The fast path keys a request's id as the stdio screen does.
func TestScreenKeyMatchesTheScreen(t *testing.T) {
	for _, raw := range []string{`7`, `-3`, `0`, `"abc"`, `"a\"b"`, `1e3`, `12.0`, `123456789012345678`, `-0`} {
		got, ok := gateway.ScreenKeyForTest([]byte(raw))
		want, wok := gateway.IDKeyForTest([]byte(raw))
		if ok != wok || got != want {
			t.Errorf("id %s: fast path keys it %q (%v), the screen %q (%v)", raw, got, ok, want, wok)
		}
	}
}

// httpSessionClient speaks raw streamable HTTP to a gateway as a client of
// the 2025-11-25 protocol that holds a session.
type httpSessionClient struct {
	t       *testing.T
	url, id string
}

func openHTTPSession(t *testing.T, url, caps string) *httpSessionClient {
	t.Helper()
	c := &httpSessionClient{t: t, url: url}
	code, _, body, header := c.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"clientInfo":{"name":"h","version":"1"}}}`, nil)
	c.id = header.Get("Mcp-Session-Id")
	if code != http.StatusOK || c.id == "" {
		t.Fatalf("initialize: %d %s (session %q)", code, body, c.id)
	}
	return c
}

func (c *httpSessionClient) initialized() {
	c.t.Helper()
	if code, _, body, _ := c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil); code != http.StatusAccepted {
		c.t.Fatalf("notifications/initialized: %d %s", code, body)
	}
}

// post sends one message; header entries override (or, empty, remove) the
// ones a client sends.
func (c *httpSessionClient) post(body string, header map[string]string) (int, string, string, http.Header) {
	c.t.Helper()
	var session map[string]string
	if c.id != "" {
		session = map[string]string{"Mcp-Session-Id": c.id, "Mcp-Protocol-Version": "2025-11-25"}
	}
	return postMCP(c.t, c.url, body, session, header)
}

// postMCP posts one JSON-RPC message as a streamable HTTP client does,
// with the headers of each map set in turn (an empty value removes one),
// and returns the status, Content-Type, body and headers of the answer.
func postMCP(t *testing.T, url, body string, headers ...map[string]string) (int, string, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for _, h := range headers {
		for k, v := range h {
			if v == "" {
				req.Header.Del(k)
			} else {
				req.Header.Set(k, v)
			}
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(raw), resp.Header
}

// TestFastPathOnAnHTTPSession: a session client's call that needs nothing
// of the SDK is answered with the source's bytes as plain JSON, once the
// session is initialized; every call that does goes to the SDK.
func TestFastPathOnAnHTTPSession(t *testing.T) {
	src := &fakeSource{answer: answerText("raw"), cancelled: make(chan string, 1)}
	srv := rawHTTPServer(t, src)
	call := func(id int, params string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, id, params)
	}

	c := openHTTPSession(t, srv.URL, `{"roots":{"listChanged":true}}`)
	if _, _, got, _ := c.post(call(2, `{"name":"fast"}`), nil); strings.Contains(got, `"text":"raw"`) {
		t.Errorf("a call before notifications/initialized took the fast path: %s", got)
	}
	c.initialized()
	code, ct, got, _ := c.post(call(3, `{"name":"fast","arguments":{"x":"1"}}`), nil)
	if want := `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"raw"}]}}`; code != 200 || ct != "application/json" || got != want {
		t.Errorf("fast path: %d %s %s\nwant 200 application/json %s", code, ct, got, want)
	}
	calls := src.calls()
	if len(calls) != 1 || string(calls[0].Arguments) != `{"x":"1"}` || calls[0].Capabilities != (rawcall.Capabilities{Roots: true}) {
		t.Fatalf("the source took %+v", calls)
	}
	if _, err := calls[0].Downstream.Elicit(context.Background(), &mcp.ElicitParams{Message: "?"}); err == nil || !strings.Contains(err.Error(), "did not declare") {
		t.Errorf("eliciting from a client that declared no elicitation: %v", err)
	}

	for i, tc := range []struct {
		name, params string
		header       map[string]string
	}{
		{"a progress token", `{"name":"fast","_meta":{"progressToken":"p1"}}`, nil},
		{"a source without a fast path", `{"name":"slow"}`, nil},
		{"another protocol version in the header", `{"name":"fast"}`, map[string]string{"Mcp-Protocol-Version": "2025-06-18"}},
		{"no protocol version in the header", `{"name":"fast"}`, map[string]string{"Mcp-Protocol-Version": ""}},
		{"an Accept without event streams", `{"name":"fast"}`, map[string]string{"Accept": "application/json"}},
	} {
		if _, _, got, _ := c.post(call(10+i, tc.params), tc.header); strings.Contains(got, `"text":"raw"`) {
			t.Errorf("%s: took the fast path: %s", tc.name, got)
		}
	}
	if n := len(src.calls()); n != 1 {
		t.Errorf("the source's fast path took %d calls, want only one", n)
	}

	// A client that answers elicitation keeps the SDK's path for its calls.
	e := openHTTPSession(t, srv.URL, `{"elicitation":{}}`)
	e.initialized()
	if _, _, got, _ := e.post(call(2, `{"name":"fast"}`), nil); !strings.Contains(got, "typed fast") {
		t.Errorf("a client that takes elicitation: %s, want the typed path", got)
	}
	// A session the gateway does not know is the SDK's to refuse.
	stale := &httpSessionClient{t: t, url: srv.URL, id: "no-such-session"}
	if code, _, got, _ := stale.post(call(2, `{"name":"fast"}`), nil); code != http.StatusNotFound {
		t.Errorf("an unknown session: %d %s, want 404", code, got)
	}
	if n := len(src.calls()); n != 1 {
		t.Errorf("the source's fast path took %d calls, want only one", n)
	}
}

// TestFastPathCancellationOnAnHTTPSession: a session client cancels a call
// on the fast path: the source is told, the cancellation is accepted, and
// the hanging request ends.
func TestFastPathCancellationOnAnHTTPSession(t *testing.T) {
	src := &fakeSource{answer: answerText("raw"), cancelled: make(chan string, 1), took: make(chan string, 2)}
	srv := rawHTTPServer(t, src)
	c := openHTTPSession(t, srv.URL, `{}`)
	c.initialized()
	hung := make(chan string, 1)
	go func() {
		_, _, got, _ := c.post(`{"jsonrpc":"2.0","id":"h-1","method":"tools/call","params":{"name":"hang"}}`, nil)
		hung <- got
	}()
	// The call is in flight once the source has taken it.
	select {
	case <-src.took:
	case got := <-hung:
		t.Fatalf("the hanging call ended before it was cancelled: %s", got)
	}
	if code, _, got, _ := c.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"h-1"}}`, nil); code != http.StatusAccepted {
		t.Errorf("notifications/cancelled: %d %s", code, got)
	}
	select {
	case tool := <-src.cancelled:
		if tool != "hang" {
			t.Errorf("cancelled %q", tool)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the source never heard of the cancellation")
	}
	select {
	case got := <-hung:
		if !strings.Contains(got, `"id":"h-1","error"`) {
			t.Errorf("the cancelled request ended with %s, want an error", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled request did not end")
	}
	if _, _, got, _ := c.post(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"fast"}}`, nil); !strings.Contains(got, `"text":"raw"`) {
		t.Errorf("after the cancellation: %s", got)
	}
}

// TestFastPathRootsOnAnHTTPSession: a source that asks for roots during a
// session's fast call reaches the client that declared them, through its
// session, and is refused for one that did not.
func TestFastPathRootsOnAnHTTPSession(t *testing.T) {
	src := &fakeSource{answer: answerText("raw"), cancelled: make(chan string, 1)}
	srv := rawHTTPServer(t, src)
	ctx := context.Background()

	// The Go SDK client declares roots and answers roots/list.
	client := mcp.NewClient(&mcp.Implementation{Name: "rooted", Version: "1"}, nil)
	client.AddRoots(&mcp.Root{URI: "file:///work/project", Name: "project"})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "roots"})
	if err != nil {
		t.Fatal(err)
	}
	if got := callText(res); res.IsError || !strings.Contains(got, "file:///work/project") {
		t.Errorf("roots asked of a client that declared them: %q (isError %v)", got, res.IsError)
	}
	if n := len(src.calls()); n != 1 {
		t.Fatalf("the source's fast path took %d calls, want the roots call", n)
	}

	c := openHTTPSession(t, srv.URL, `{}`)
	c.initialized()
	if _, _, got, _ := c.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"roots"}}`, nil); !strings.Contains(got, `did not declare`) || !strings.Contains(got, `"isError":true`) {
		t.Errorf("roots asked of a client that did not declare them: %s", got)
	}
}
