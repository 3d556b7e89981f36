package sdkshim_test

// The helpers the pin tests share: a bare SDK server and client, and raw
// requests to a bare streamable HTTP handler.

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bareServer connects a client to a bare SDK server over in-memory
// transports, on the 2025-11-25 protocol.
func bareServer(t *testing.T, s *mcp.Server, opts *mcp.ClientOptions) (*mcp.ClientSession, *mcp.ServerSession) {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "pin", Version: "1"}, opts).Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, ss
}

func noArgs(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{}, nil
}

// post sends one message to a streamable handler with the given headers
// (Content-Type and Accept are set) and returns the status and the body.
func post(t *testing.T, url, body string, headers map[string]string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw), resp.Header
}

// modernMeta is the _meta of a 2026-07-28 request.
const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"pin","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

// modernCall is a 2026-07-28 tools/call of tool, its body and headers.
func modernCall(tool string) (string, map[string]string) {
	args, _ := json.Marshal(tool)
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":` + string(args) + `,"arguments":{},` + modernMeta + `}}`,
		map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool}
}

// scripted connects c to a server scripted line by line over stdio
// framing: it answers initialize (the server's capabilities as given) and
// reads notifications/initialized, then hands the test a function that
// writes a line to the client and a function that reads the client's next
// line ("" once the client closed its end).
func scripted(t *testing.T, c *mcp.Client, serverCaps string) (write func(string) error, read func() string) {
	t.Helper()
	toClient, serverOut := io.Pipe()
	serverIn, fromClient := io.Pipe()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(serverIn)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	ready := make(chan error, 1)
	go func() {
		var init struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal([]byte(<-lines), &init); err != nil {
			ready <- err
			return
		}
		_, err := io.WriteString(serverOut, `{"jsonrpc":"2.0","id":`+string(init.ID)+`,"result":{"protocolVersion":"2025-11-25","capabilities":`+serverCaps+`,"serverInfo":{"name":"scripted","version":"1"}}}`+"\n")
		<-lines // notifications/initialized
		ready <- err
	}()
	cs, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: toClient, Writer: fromClient}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-ready; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); serverOut.Close(); fromClient.Close() })
	write = func(line string) error {
		_, err := io.WriteString(serverOut, line+"\n")
		return err
	}
	read = func() string { return <-lines }
	return write, read
}
