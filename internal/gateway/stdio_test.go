package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/logtest"
)

// stdioPeer drives ServeStdio over pipes, as a client on the other end of
// toolfold's stdin and stdout would.
type stdioPeer struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Reader
	logs *logtest.Buffer
	done chan error
}

func startStdio(t *testing.T, g *gateway.Gateway, logs *logtest.Buffer) *stdioPeer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &stdioPeer{t: t, in: inW, out: bufio.NewReaderSize(outR, 1<<20), logs: logs, done: make(chan error, 1)}
	go func() {
		err := g.ServeStdio(context.Background(), inR, outW)
		// Whatever the client still writes or reads now fails at once.
		inR.CloseWithError(errors.New("toolfold's stdio session has ended"))
		outW.Close()
		p.done <- err
	}()
	t.Cleanup(func() {
		inW.Close()
		go io.Copy(io.Discard, outR) // let the session finish writing
		if err := <-p.done; err != nil {
			t.Errorf("ServeStdio returned %v after stdin closed; want nil", err)
		}
	})
	return p
}

func (p *stdioPeer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("writing to toolfold's stdin: %v", err)
	}
}

type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// recv reads the next message toolfold writes, skipping notifications.
func (p *stdioPeer) recv() rpcReply {
	p.t.Helper()
	for {
		line, err := p.out.ReadBytes('\n')
		if err != nil {
			p.t.Fatalf("reading toolfold's stdout: %v (the session ended?)", err)
		}
		var m struct {
			Method string `json:"method"`
			rpcReply
		}
		if err := json.Unmarshal(line, &m); err != nil {
			p.t.Fatalf("toolfold wrote a line that is not JSON: %q", line)
		}
		if m.Method == "" {
			return m.rpcReply
		}
	}
}

func (p *stdioPeer) initialize() {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"pipes","version":"1"}}}`)
	if r := p.recv(); r.Error != nil || string(r.ID) != `"init"` {
		p.t.Fatalf("initialize: %+v", r)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// alive checks that the session still serves requests.
func (p *stdioPeer) alive(id string) {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":"` + id + `","method":"tools/list"}`)
	r := p.recv()
	if r.Error != nil || string(r.ID) != `"`+id+`"` || !bytes.Contains(r.Result, []byte(`"tools"`)) {
		p.t.Fatalf("tools/list after a malformed message: %+v (result %s); the session should go on", r, r.Result)
	}
}

func TestStdioMalformedFramesKeepTheSession(t *testing.T) {
	deep := strings.Repeat("[", 1001) + strings.Repeat("]", 1001)
	deepInParams := `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"x":` + deep + `}}`
	huge := `{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"x":"` + strings.Repeat("a", 16<<20) + `"}}`
	tests := []struct {
		name, line string
		code       int64
		id         string
		says       string
	}{
		{"invalid JSON", `{"jsonrpc":"2.0",`, -32700, "null", "not valid JSON"},
		{"empty object", `{}`, -32600, "null", `"jsonrpc": "2.0"`},
		{"bare string", `"hello"`, -32600, "null", "not a bare JSON value"},
		{"bare number", `42`, -32600, "null", "not a bare JSON value"},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, -32600, "null", "batches"},
		{"empty batch", `[]`, -32600, "null", "batches"},
		{"version 1.0", `{"jsonrpc":"1.0","id":3,"method":"ping"}`, -32600, "3", `"jsonrpc": "2.0"`},
		{"no version", `{"id":"x","method":"ping"}`, -32600, `"x"`, `"jsonrpc": "2.0"`},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600, "null", "string or an integer"},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, -32600, "null", "string or an integer"},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, -32600, "null", "not null"},
		{"numeric method", `{"jsonrpc":"2.0","id":4,"method":42}`, -32600, "4", "method must be a string"},
		{"response without id", `{"jsonrpc":"2.0","result":{}}`, -32600, "null", "not a valid JSON-RPC"},
		{"response with result and error", `{"jsonrpc":"2.0","id":"s1","result":{},"error":{"code":1,"message":"x"}}`, -32600, `"s1"`, "exactly one"},
		{"NUL byte", "{\"jsonrpc\":\"2.0\",\"id\":5,\x00\"method\":\"ping\"}", -32700, "null", "NUL byte"},
		{"NUL in a string", "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"pi\x00ng\"}", -32700, "null", "NUL byte"},
		{"two messages on a line", `{"jsonrpc":"2.0","id":1,"method":"ping"} {"jsonrpc":"2.0","id":2,"method":"ping"}`, -32700, "null", "not valid JSON"},
		{"nesting over 1000", deep, -32700, "null", "more than 1000 deep"},
		{"nesting over 1000 in params", deepInParams, -32700, "null", "more than 1000 deep"},
		{"line over 16 MiB", huge, -32700, "null", "16 MiB"},
	}
	logs := &logtest.Buffer{}
	g := newGateway(t, gateway.Options{Mode: expose.Flat, Logger: logs.Logger(slog.LevelInfo)}, nil)
	p := startStdio(t, g, logs)
	p.initialize()
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p.t = t
			before := strings.Count(logs.String(), "malformed")
			p.send(tt.line)
			r := p.recv()
			if r.Error == nil || r.Error.Code != tt.code || string(r.ID) != tt.id || !strings.Contains(r.Error.Message, tt.says) {
				t.Errorf("got id %s error %+v, want id %s, code %d, a message with %q", r.ID, r.Error, tt.id, tt.code, tt.says)
			}
			p.alive(string(rune('a' + i)))
			if logged := strings.Count(logs.String(), "malformed") - before; logged != 1 {
				t.Errorf("%d log lines about one malformed message, want 1:\n%s", logged, logs.String())
			}
		})
	}
}

func TestStdioRequestsBeforeInitializeGetAnError(t *testing.T) {
	g := newGateway(t, gateway.Options{Mode: expose.Flat}, nil)
	p := startStdio(t, g, nil)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	r := p.recv()
	if r.Error == nil || r.Error.Code != -32600 || string(r.ID) != "1" || !strings.Contains(r.Error.Message, "send initialize first") {
		t.Fatalf("tools/list before initialize: id %s error %+v; want -32600 naming initialize", r.ID, r.Error)
	}
	// ping needs no initialize.
	p.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if r := p.recv(); r.Error != nil || string(r.ID) != "2" {
		t.Fatalf("ping before initialize: %+v", r)
	}
	p.initialize()
	p.alive("after")
	// The SDK's own refusals that carry no code (a second initialize) get
	// the internal error code, never 0.
	p.send(`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"pipes","version":"1"}}}`)
	if r := p.recv(); r.Error == nil || r.Error.Code != -32603 || string(r.ID) != "3" {
		t.Fatalf("a second initialize: id %s error %+v; want -32603", r.ID, r.Error)
	}
	p.alive("still")
}

func TestStdioReusedIDInFlightGetsAnError(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	slow := catalogtest.Tool("slow")
	slow.Handler = func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		started <- struct{}{}
		<-release
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
	}
	g := specGateway(t, catalog.Spec{Tools: []*catalog.Tool{slow}}, &gateway.Options{Mode: expose.Flat})
	p := startStdio(t, g, nil)
	p.initialize()
	call := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"slow","arguments":{}}}`
	p.send(call)
	<-started
	p.send(call)
	r := p.recv()
	if r.Error == nil || r.Error.Code != -32600 || string(r.ID) != "9" || !strings.Contains(r.Error.Message, "still in flight") {
		t.Fatalf("a second request with the id of one in flight: id %s error %+v; want -32600", r.ID, r.Error)
	}
	close(release)
	if r := p.recv(); r.Error != nil || string(r.ID) != "9" || !bytes.Contains(r.Result, []byte("done")) {
		t.Fatalf("the first request's result: %+v %s", r, r.Result)
	}
	// Once answered, the id may be used again.
	p.send(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`)
	if r := p.recv(); r.Error != nil || string(r.ID) != "9" {
		t.Fatalf("reusing an answered id: %+v", r)
	}
}
