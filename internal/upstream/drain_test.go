package upstream

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/relay"
)

func TestIsQuestion(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"message":"Name?","requestedSchema":{"type":"object"}}}`, true},
		{`{"jsonrpc":"2.0","id":"s-2","method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}`, true},
		{`{"method":"roots/list","id":3,"jsonrpc":"2.0"}`, true}, // params may be left out
		{`  {"jsonrpc":"2.0","id":-4,"method":"roots/list","params":{}}`, true},
		// What the SDK would not hand to the middleware is not counted.
		{`{"jsonrpc":"2.0","method":"elicitation/create","params":{}}`, false},                   // a notification
		{`{"jsonrpc":"2.0","id":{},"method":"elicitation/create","params":{}}`, false},           // an id of no kind
		{`{"jsonrpc":"2.0","id":5,"method":"sampling/createMessage"}`, false},                    // params required
		{`{"jsonrpc":"2.0","id":6,"method":"elicitation/create","params":null}`, false},          // null params
		{`{"jsonrpc":"2.0","id":7,"method":"elicitation/create","params":{"message":5}}`, false}, // params that do not decode
		{`{"jsonrpc":"2.0","id":8,"method":"elicitation/create","params":{}`, false},             // not JSON
		{`[{"jsonrpc":"2.0","id":9,"method":"roots/list"}]`, false},                              // a batch
		// Not a request for input.
		{`{"jsonrpc":"2.0","id":10,"method":"ping"}`, false},
		{`{"jsonrpc":"2.0","id":11,"result":{"content":[{"type":"text","text":"\"method\":\"roots/list\""}]}}`, false},
	} {
		if got := isQuestion([]byte(tc.line)); got != tc.want {
			t.Errorf("isQuestion(%s) = %v, want %v", tc.line, got, tc.want)
		}
	}
}

// The reader counts the requests for input it hands on, and drains only
// when no complete line is left in hand: two questions the server wrote
// at once keep the intake unsettled until both were received, where two
// written apart let it settle between them (the second goes in the next
// round). A synctest bubble makes "the reader is waiting on the pipe" an
// event (synctest.Wait), not a guess.
func TestRawLinesDrainsBetweenWritesNotWithinOne(t *testing.T) {
	const q1 = `{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"message":"Name?"}}` + "\n"
	const q2 = `{"jsonrpc":"2.0","id":2,"method":"roots/list"}` + "\n"
	for _, tc := range []struct {
		name   string
		writes []string
		// settled is whether the intake is settled once the first
		// question was received and the reader waits for more.
		settled bool
	}{
		{"one write", []string{q1 + q2}, false},
		{"two writes", []string{q1, q2}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				pr, pw := io.Pipe()
				in := &relay.Intake{}
				r := &rawLines{src: pr, raw: &rawConn{}, intake: in}
				lines := make(chan string)
				go func() {
					buf := make([]byte, 4096)
					for {
						n, err := r.Read(buf)
						if err != nil {
							close(lines)
							return
						}
						lines <- string(buf[:n])
					}
				}()
				write := func(w string) { go func() { _, _ = pw.Write([]byte(w)) }() }
				write(tc.writes[0])
				if got := <-lines; got != q1 {
					t.Fatalf("first line %q, want %q", got, q1)
				}
				h1 := in.Handoff()
				h1.Received()
				synctest.Wait() // the reader waits: on the pipe, or to hand q2 on
				if got := closed(in.Settled()); got != tc.settled {
					t.Errorf("settled after the first question was received = %v, want %v", got, tc.settled)
				}
				if len(tc.writes) > 1 {
					write(tc.writes[1]) // the server writes again, later
				}
				if got := <-lines; got != q2 {
					t.Fatalf("second line %q, want %q", got, q2)
				}
				synctest.Wait()
				if closed(in.Settled()) {
					t.Error("settled with the second question in transit")
				}
				in.Handoff().Received()
				synctest.Wait()
				if !closed(in.Settled()) {
					t.Error("not settled once every question was received and the reader waits")
				}
				pw.Close()
				if _, ok := <-lines; ok {
					t.Error("a line after the end")
				}
			})
		})
	}
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// holdingDownstream holds the questions it is asked, as the gateway's
// pending call does (relay.Holder), and records how many it held when
// their source settled.
type holdingDownstream struct {
	mu        sync.Mutex
	held      int
	atSettled []int
	noHandoff bool
}

func (*holdingDownstream) HoldsQuestions() {}

func (d *holdingDownstream) hold(ctx context.Context) {
	h := relay.HandoffFrom(ctx)
	d.mu.Lock()
	d.held++
	d.noHandoff = d.noHandoff || h == nil
	d.mu.Unlock()
	h.Received()
	select {
	case <-h.Settled():
	case <-ctx.Done():
	}
	d.mu.Lock()
	d.atSettled = append(d.atSettled, d.held)
	d.mu.Unlock()
}

func (d *holdingDownstream) Elicit(ctx context.Context, _ *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	d.hold(ctx)
	return &mcp.ElicitResult{Action: "decline"}, nil
}

func (d *holdingDownstream) ListRoots(ctx context.Context, _ *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	d.hold(ctx)
	return &mcp.ListRootsResult{}, nil
}

func (*holdingDownstream) CreateMessage(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	return nil, errors.New("not asked in this test")
}

func (*holdingDownstream) CreateMessageWithTools(context.Context, *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	return nil, errors.New("not asked in this test")
}

// A real stdio server that writes two questions in one write: through
// the SDK's dispatch and the connection's middleware, each reaches the
// Downstream with its Handoff, and the connection settles only once both
// are held, so the gateway sends them in one round.
func TestQuestionsWrittenTogetherSettleTogether(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	m := newTestManager(t, map[string]config.ServerConfig{"fx": fixture(t, "bulk", nil)},
		&Options{ProtocolVersion: "2025-11-25", Forward: Forwarding{Elicitation: true, Roots: true}})
	askTwiceSettlesTogether(t, m)
}

// askTwiceSettlesTogether calls fx's ask2, whose two questions go out in
// one write, and checks that both were held when the server settled, each
// with its Handoff.
func askTwiceSettlesTogether(t *testing.T, m *Manager) {
	t.Helper()
	d := &holdingDownstream{}
	res, err := m.CallTool(t.Context(), "fx", &mcp.CallToolParams{Name: "ask2", Arguments: map[string]any{}}, &CallOptions{Downstream: d})
	if err != nil {
		t.Fatalf("ask2: %v", err)
	}
	if res.IsError {
		t.Fatalf("ask2 answered with an error: %v", res.Content)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.noHandoff {
		t.Error("a question reached the Downstream without its Handoff")
	}
	if !slices.Equal(d.atSettled, []int{2, 2}) {
		t.Errorf("questions held when the server settled: %v, want [2 2] (both, for each)", d.atSettled)
	}
}

// An event stream's body is an HTTP server's reader: the SDK reads it
// again only once it has handed on every whole event, so that read is
// the stream's drain, and the requests for input among its data lines
// are counted as they pass. Two questions in one write keep the intake
// unsettled until both were received; written apart, it settles between
// them. A line split across reads is still read whole.
func TestStreamIntakeDrainsBetweenWritesNotWithinOne(t *testing.T) {
	const q1 = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"elicitation/create\",\"params\":{\"message\":\"Name?\"}}\n\n"
	const q2 = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"roots/list\"}\n\n"
	for _, tc := range []struct {
		name    string
		writes  []string
		settled bool // once the first question was received and the SDK reads on
	}{
		{"one write", []string{q1 + q2}, false},
		{"two writes", []string{q1, q2}, true},
		{"a question split across writes", []string{q1[:40], q1[40:], q2}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				pr, pw := io.Pipe()
				in := &relay.Intake{}
				body := &streamIntake{ReadCloser: pr, intake: in}
				// The SDK's reader: a buffered line reader, an event at a
				// blank line.
				events := make(chan string)
				go func() {
					defer close(events)
					br := bufio.NewReader(body)
					var evt strings.Builder
					for {
						line, err := br.ReadString('\n')
						if err != nil {
							return
						}
						evt.WriteString(line)
						if line == "\n" {
							events <- evt.String()
							evt.Reset()
						}
					}
				}()
				writes := slices.Clone(tc.writes)
				write := func() {
					w := writes[0]
					writes = writes[1:]
					go func() { _, _ = pw.Write([]byte(w)) }()
				}
				write()
				for len(writes) > 1 { // the first question in pieces
					synctest.Wait()
					write()
				}
				if got := <-events; got != q1 {
					t.Fatalf("first event %q, want %q", got, q1)
				}
				in.Handoff().Received()
				synctest.Wait()
				if got := closed(in.Settled()); got != tc.settled {
					t.Errorf("settled after the first question was received = %v, want %v", got, tc.settled)
				}
				if len(writes) > 0 {
					write()
				}
				if got := <-events; got != q2 {
					t.Fatalf("second event %q, want %q", got, q2)
				}
				synctest.Wait()
				if closed(in.Settled()) {
					t.Error("settled with the second question in transit")
				}
				in.Handoff().Received()
				synctest.Wait()
				if !closed(in.Settled()) {
					t.Error("not settled once every question was received and the SDK reads on")
				}
				pw.Close()
				if _, ok := <-events; ok {
					t.Error("an event after the end")
				}
			})
		})
	}
}

// askTwiceOverHTTP is a hand-written streamable HTTP server (2025-11-25)
// whose tool ask2 answers on an event stream that carries an elicitation
// and a roots/list in one write, then its result once the client has
// posted both answers.
func askTwiceOverHTTP(t *testing.T) *httptest.Server {
	answered := make(chan struct{}, 2)
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed) // no standalone stream
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		result := func(res string) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, res)
		}
		switch {
		case msg.ID == nil: // a notification
			w.WriteHeader(http.StatusAccepted)
		case msg.Method == "": // the client's answer to a question
			answered <- struct{}{}
			w.WriteHeader(http.StatusAccepted)
		case msg.Method == "initialize":
			result(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"ask2","version":"1"}}`)
		case msg.Method == "tools/list":
			result(`{"tools":[{"name":"ask2","inputSchema":{"type":"object"}}]}`)
		case msg.Method == "tools/call":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"q1\",\"method\":\"elicitation/create\",\"params\":{\"message\":\"Name?\",\"requestedSchema\":{\"type\":\"object\"}}}\n\n"+
				"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"q2\",\"method\":\"roots/list\"}\n\n")
			w.(http.Flusher).Flush()
			for range 2 {
				select {
				case <-answered:
				case <-r.Context().Done():
					return
				}
			}
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"both answered\"}]}}\n\n", msg.ID)
		default:
			result(`{}`)
		}
	}))
}

// The same over streamable HTTP: the two questions of one write on the
// call's event stream settle together, through the SDK's own reading of
// the stream.
func TestHTTPQuestionsWrittenTogetherSettleTogether(t *testing.T) {
	srv := askTwiceOverHTTP(t)
	defer srv.Close()
	m := newTestManager(t, map[string]config.ServerConfig{"fx": {URL: srv.URL, Transport: config.TransportHTTP, Timeout: config.Duration(time.Minute)}},
		&Options{ProtocolVersion: "2025-11-25", Forward: Forwarding{Elicitation: true, Roots: true}})
	askTwiceSettlesTogether(t, m)
}
