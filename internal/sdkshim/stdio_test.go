package sdkshim_test

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSDKStdioSessionEndsOnAMalformedLine: the SDK ends a stdio session on
// the first line it cannot decode, which is why the gateway's ServeStdio
// screens every line first (gateway stdioScreen, frame.go).
func TestSDKStdioSessionEndsOnAMalformedLine(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "bare"}, nil)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ss, err := s.Connect(context.Background(), &mcp.IOTransport{Reader: inR, Writer: outW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inW.Close(); outR.Close() })
	answered := make(chan struct{})
	go func() {
		if line, err := bufio.NewReader(outR).ReadString('\n'); err == nil && strings.Contains(line, `"id":1`) {
			close(answered)
		}
	}()
	ended := make(chan struct{})
	go func() { ss.Wait(); close(ended) }()
	go func() {
		io.WriteString(inW, "this is not JSON\n")
		io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	}()
	select {
	case <-ended:
	case <-answered:
		t.Fatal("the SDK went on after a line it cannot decode; ServeStdio's screen may be unnecessary")
	}
}

// TestSDKStdioClientSessionEndsOnAMalformedLine: a client over stdio
// framing ends its session on a line from the server it cannot decode (a
// banner a server prints on stdout), which is why the upstream package's
// stdioTransport skips lines that are not JSON-RPC instead of using
// CommandTransport.
func TestSDKStdioClientSessionEndsOnAMalformedLine(t *testing.T) {
	write, read := scripted(t, mcp.NewClient(&mcp.Implementation{Name: "pin", Version: "1"}, nil), `{}`)
	if err := write("Server listening on stdio"); err != nil {
		t.Fatal(err)
	}
	// Once the session ended, the ping cannot be written, or it is read by
	// nobody and the client's end closes ("").
	if err := write(`{"jsonrpc":"2.0","id":"p1","method":"ping"}`); err != nil {
		return
	}
	if answer := read(); strings.Contains(answer, `"p1"`) {
		t.Fatalf("the client answered %s after a line it cannot decode; the SDK reads on, so stdioTransport's skipping may be unnecessary", answer)
	}
}
