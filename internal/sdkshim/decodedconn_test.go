package sdkshim_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolfold/toolfold/internal/sdkshim"
)

// TestSDKDecodedMessageOwnsItsBytes: jsonrpc.DecodeMessage's message keeps
// no reference to the bytes it was decoded from, which DecodedConn relies
// on: the stdio screen reuses its line buffer for the next line while the
// SDK still holds the message.
func TestSDKDecodedMessageOwnsItsBytes(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`)
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		t.Fatal(err)
	}
	for i := range line {
		line[i] = 'x'
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		t.Fatalf("decoded %T, want a request", msg)
	}
	if req.Method != "tools/call" || string(req.Params) != `{"name":"echo","arguments":{"text":"hello"}}` {
		t.Errorf("after the line was overwritten: method %q, params %s", req.Method, req.Params)
	}
}

// TestSDKServesADecodedConn: a bare SDK server serves a session over a
// DecodedConn, which implements nothing beyond mcp.Connection; it answers
// what it is handed, one line per message, and ends its session when the
// connection ends.
func TestSDKServesADecodedConn(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "bare"}, nil)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	conn := sdkshim.NewDecodedConn(inR, outW)
	ss, err := s.Connect(context.Background(), conn.Transport(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer inW.Close()
	lines := bufio.NewReader(outR)
	for _, m := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping"}`,
	} {
		msg, err := jsonrpc.DecodeMessage([]byte(m))
		if err != nil {
			t.Fatal(err)
		}
		if !conn.Hand(msg) {
			t.Fatal("the connection closed before the SDK read a message")
		}
	}
	for _, want := range []string{`"id":1`, `"id":2`} {
		line, err := lines.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(line, want) || strings.Count(line, "\n") != 1 {
			t.Errorf("answer %q: want one line with %s", line, want)
		}
	}
	conn.End(nil)
	if err := ss.Wait(); err != nil && !errors.Is(err, io.EOF) {
		t.Errorf("the session ended with %v after the connection ended", err)
	}
}
