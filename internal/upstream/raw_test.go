package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/rawcall"
)

// rawOutcome is what a fast-path call's Done was given.
type rawOutcome struct {
	result json.RawMessage
	err    error
}

// forwardRaw sends a fast-path call and returns its outcome channel.
func forwardRaw(t *testing.T, m *Manager, server, tool, args string, caps rawcall.Capabilities, d rawcall.Downstream) (<-chan rawOutcome, func()) {
	t.Helper()
	out := make(chan rawOutcome, 1)
	cancel, ok := m.ForwardRaw(server, tool, &rawcall.Call{
		Arguments: json.RawMessage(args), Capabilities: caps, Downstream: d,
		// The result is valid only until Done returns.
		Done: func(res json.RawMessage, err error) { out <- rawOutcome{bytes.Clone(res), err} },
	})
	if !ok {
		t.Fatalf("ForwardRaw(%s, %s) refused a call to a running server", server, tool)
	}
	return out, cancel
}

func rawText(t *testing.T, o rawOutcome) string {
	t.Helper()
	if o.err != nil {
		t.Fatalf("fast-path call failed: %v", o.err)
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(o.result, &res); err != nil {
		t.Fatalf("fast-path result %s: %v", o.result, err)
	}
	return text(&res)
}

func TestForwardRawTakesOnlyRunningServers(t *testing.T) {
	fx := fixture(t, "serve", nil)
	fx.Exclude = []string{"env"}
	m := newTestManager(t, map[string]config.ServerConfig{"fx": fx}, nil)
	call := &rawcall.Call{Done: func(json.RawMessage, error) { t.Error("Done called for a call that was refused") }}
	if _, ok := m.ForwardRaw("fx", "add", call); ok {
		t.Fatal("ForwardRaw took a call for a server that is not started; the typed path must start it")
	}
	if _, ok := m.ForwardRaw("nobody", "add", call); ok {
		t.Fatal("ForwardRaw took a call for an unknown server")
	}
	mustCall(t, m, "fx", "pid", nil)
	if _, ok := m.ForwardRaw("fx", "env", call); ok {
		t.Fatal("ForwardRaw took a call of an excluded tool; the typed path must refuse it with its reason")
	}
	out, _ := forwardRaw(t, m, "fx", "add", `{"a":20,"b":22}`, rawcall.Capabilities{}, nil)
	if got := rawText(t, <-out); got != "42" {
		t.Errorf("add = %q, want 42", got)
	}
	// No arguments at all still reach the server as an object.
	out, _ = forwardRaw(t, m, "fx", "pid", ``, rawcall.Capabilities{}, nil)
	if got := rawText(t, <-out); got == "" {
		t.Error("pid answered nothing")
	}
	if st := statusOf(m, "fx"); st.State != StateReady {
		t.Errorf("after fast-path calls the server is %q", st.State)
	}
}

// TestForwardRawTimeoutsShareOneTimer: the connection's one timer ends
// every call that outlives the timeout, whatever was answered in between,
// and is armed again for calls made after it went quiet.
func TestForwardRawTimeoutsShareOneTimer(t *testing.T) {
	fx := fixture(t, "serve", nil)
	fx.Timeout = config.Duration(300 * time.Millisecond)
	m := newTestManager(t, map[string]config.ServerConfig{"fx": fx}, nil)
	mustCall(t, m, "fx", "pid", nil)
	for round := range 2 { // the second round finds the timer disarmed
		first, _ := forwardRaw(t, m, "fx", "hang", `{}`, rawcall.Capabilities{}, nil)
		answered, _ := forwardRaw(t, m, "fx", "add", `{"a":1,"b":1}`, rawcall.Capabilities{}, nil)
		second, _ := forwardRaw(t, m, "fx", "hang", `{}`, rawcall.Capabilities{}, nil)
		if got := rawText(t, <-answered); got != "2" {
			t.Errorf("round %d: add = %q while two calls hang", round, got)
		}
		for i, out := range []<-chan rawOutcome{first, second} {
			select {
			case o := <-out:
				if !errors.Is(o.err, ErrTimeout) {
					t.Errorf("round %d, hanging call %d: %v, want the server's timeout", round, i, o.err)
				}
			case <-time.After(time.Minute): // a hang guard: the timeout is 300 ms
				t.Fatalf("round %d, hanging call %d: never ended; the timer was not armed", round, i)
			}
		}
	}
}

func TestForwardRawErrorsAreWordedLikeCallTool(t *testing.T) {
	events := newEventLog(t)
	fx := fixture(t, "serve", map[string]string{"FIXTURE_EVENT_LOG": events.path})
	fx.Timeout = config.Duration(700 * time.Millisecond)
	m := newTestManager(t, map[string]config.ServerConfig{"fx": fx}, nil)
	mustCall(t, m, "fx", "pid", nil)

	out, _ := forwardRaw(t, m, "fx", "no_such_tool", `{}`, rawcall.Capabilities{}, nil)
	o := <-out
	if o.err == nil || !strings.Contains(errorOf(o.err), `upstream "fx" answered tools/call "no_such_tool" with an error`) {
		t.Errorf("unknown tool: %v", o.err)
	}

	out, _ = forwardRaw(t, m, "fx", "hang", `{}`, rawcall.Capabilities{}, nil)
	o = <-out
	if want := `upstream "fx" did not answer tools/call "hang" within 700ms`; !errors.Is(o.err, ErrTimeout) || errorOf(o.err) != want {
		t.Errorf("timeout: got %v, want %s", o.err, want)
	}
	events.wait(t, "cancelled hang")

	out, _ = forwardRaw(t, m, "fx", "crash", `{}`, rawcall.Capabilities{}, nil)
	o = <-out
	if want := `upstream "fx" exited during tools/call "crash" (exit status 1): panic: boom: out of cheese; it will be restarted on the next call`; !errors.Is(o.err, ErrExited) || errorOf(o.err) != want {
		t.Errorf("crash: got %v, want %s", o.err, want)
	}
	// The typed path restarts it, and the fast path takes calls again.
	mustCall(t, m, "fx", "pid", nil)
	out, _ = forwardRaw(t, m, "fx", "add", `{"a":1,"b":2}`, rawcall.Capabilities{}, nil)
	if got := rawText(t, <-out); got != "3" {
		t.Errorf("add after the restart = %q", got)
	}
}

func TestForwardRawCancelReachesUpstream(t *testing.T) {
	events := newEventLog(t)
	m := newTestManager(t, map[string]config.ServerConfig{"fx": fixture(t, "serve", map[string]string{"FIXTURE_EVENT_LOG": events.path})}, nil)
	mustCall(t, m, "fx", "pid", nil)
	out, cancel := forwardRaw(t, m, "fx", "hang", `{}`, rawcall.Capabilities{}, nil)
	// A cancellation that overtakes its request is ignored by the server's
	// SDK: cancel once the server is serving the call.
	events.wait(t, "started hang")
	cancel()
	events.wait(t, "cancelled hang")
	// Done is not called for a withdrawn call; the connection goes on.
	select {
	case o := <-out:
		t.Errorf("Done was called for a cancelled call: %s %v", o.result, o.err)
	default:
	}
	if got := mustCall(t, m, "fx", "add", map[string]any{"a": 2, "b": 3}); got != "5" {
		t.Errorf("add after a cancel = %q", got)
	}
}

func TestForwardRawCloseFailsCallsInFlight(t *testing.T) {
	m := New(map[string]config.ServerConfig{"fx": fixture(t, "serve", nil)}, &Options{DisableCache: true})
	mustCall(t, m, "fx", "pid", nil)
	out, _ := forwardRaw(t, m, "fx", "sleep", `{"ms":20000}`, rawcall.Capabilities{}, nil)
	m.Close()
	if o := <-out; !errors.Is(o.err, ErrClosed) || !strings.Contains(errorOf(o.err), "toolfold is shutting down") {
		t.Errorf("call in flight at Close: %v", o.err)
	}
}

// The server's requests during a fast-path call reach that call's
// Downstream, and a second round that comes back as a result carrying
// inputRequests is asked and sent again, as CallTool does.
func TestForwardRawAsksTheCallsDownstream(t *testing.T) {
	m := newTestManager(t, map[string]config.ServerConfig{"fx": fixture(t, "serve", nil)},
		&Options{Forward: Forwarding{Elicitation: true}, ProtocolVersion: "2025-11-25"})
	mustCall(t, m, "fx", "pid", nil)
	caps := rawcall.Capabilities{FormElicitation: true}
	out, _ := forwardRaw(t, m, "fx", "ask", `{}`, caps, &fakeDownstream{name: "alice"})
	if got := rawText(t, <-out); got != "hello alice (accept)" {
		t.Errorf("ask = %q", got)
	}
	out, _ = forwardRaw(t, m, "fx", "twostep", `{}`, caps, &fakeDownstream{name: "bob"})
	if got := rawText(t, <-out); got != "bob likes bob" {
		t.Errorf("twostep = %q", got)
	}
}

func TestRawRequest(t *testing.T) {
	got := string(appendParams(nil, "e\"cho", &rawcall.Call{Arguments: json.RawMessage(` {"text":"hi"} `), Capabilities: rawcall.Capabilities{Sampling: true, FormElicitation: true}}))
	want := `{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"sampling":{},"elicitation":{"form":{}}}},"name":"e\"cho","arguments":{"text":"hi"}}`
	if got != want {
		t.Errorf("appendParams =\n%s\nwant\n%s", got, want)
	}
	if !json.Valid([]byte(got)) {
		t.Error("appendParams made invalid JSON")
	}
	if got := string(rawRequest("toolfold-raw-1", "pid", &rawcall.Call{Arguments: json.RawMessage(`null`)})); !strings.HasSuffix(got, `"name":"pid","arguments":{}}}`+"\n") || !json.Valid([]byte(got)) {
		t.Errorf("null arguments: %s", got)
	}
	tp := `"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"`
	got = string(appendParams(nil, "pid", &rawcall.Call{Meta: []byte(tp)}))
	if want := `{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},` + tp + `},"name":"pid","arguments":{}}`; got != want {
		t.Errorf("with a trace context, appendParams =\n%s\nwant\n%s", got, want)
	}
}

// A result far larger than one read of stdout is taken off whole.
func TestForwardRawLargeResult(t *testing.T) {
	big := strings.Repeat("0123456789", 10000) // an environment variable cannot be much longer
	m := newTestManager(t, map[string]config.ServerConfig{"fx": fixture(t, "serve", map[string]string{"BIG": big})}, nil)
	mustCall(t, m, "fx", "pid", nil)
	for range 2 { // the second reuses the line buffer
		out, _ := forwardRaw(t, m, "fx", "env", `{"name":"BIG"}`, rawcall.Capabilities{}, nil)
		if got := rawText(t, <-out); got != big {
			t.Fatalf("env BIG came back with %d bytes, want %d", len(got), len(big))
		}
	}
	if got := mustCall(t, m, "fx", "env", map[string]any{"name": "BIG"}); got != big {
		t.Errorf("the typed path after large fast-path answers got %d bytes", len(got))
	}
}

// rawLines hands the SDK every line but the answers to fast-path calls,
// in order, whatever their size.
func TestRawLinesPassesOnAllButFastPathAnswers(t *testing.T) {
	long := `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + strings.Repeat("toolfold-raw ", 1000) + `"}}` + "\n"
	input := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" +
		`{"jsonrpc":"2.0","id":"toolfold-raw-7","result":{"content":[]}}` + "\n" + // withdrawn: nobody waits
		long +
		`{"jsonrpc":"2.0","id":"toolfold-raw-8","method":"ping"}` + "\n" + // a request of the server's, odd id and all
		`{"result":{},"jsonrpc":"2.0","id":"toolfold-raw-9"}` + "\n"
	r := &rawLines{src: strings.NewReader(input), raw: &rawConn{}}
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" + long + `{"jsonrpc":"2.0","id":"toolfold-raw-8","method":"ping"}` + "\n"
	if string(got) != want {
		t.Errorf("the SDK read:\n%.300s\nwant:\n%.300s", got, want)
	}
}

// An upstream may write its answers as a batch line, or its ids with
// escapes: the typed path reads both, so the byte path must take them too
// (else its calls wait for their timeouts).
func TestRawLinesTakesBatchesAndEscapedIDs(t *testing.T) {
	server := `{"jsonrpc":"2.0","id":"toolfold-raw-3","method":"ping"}`
	tests := []struct{ name, line, want string }{
		{"escaped id", `{"jsonrpc":"2.0","id":"toolfold\u002draw-1","result":{}}`, ""},
		{"batch", `[{"jsonrpc":"2.0","id":"toolfold-raw-1","result":{}},{"jsonrpc":"2.0","id":"toolfold\u002Draw-2","result":{}}]`, ""},
		// The SDK reads its own messages of a batch, as a smaller batch.
		{"batch with a request of the server's", `[{"jsonrpc":"2.0","id":"toolfold-raw-1","result":{}},` + server + `]`,
			`[` + server + `]` + "\n"},
		{"escaped other id", `{"jsonrpc":"2.0","id":"other\u002d1","result":{}}`, `{"jsonrpc":"2.0","id":"other\u002d1","result":{}}` + "\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &rawLines{src: strings.NewReader(tc.line + "\n"), raw: &rawConn{}}
			got, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("the SDK read %q, want %q", got, tc.want)
			}
		})
	}
}
