package gateway_test

// The SDK behaviours the gateway works around or relies on, one named test
// each, against the bare SDK. When an SDK upgrade changes one, its test
// fails here, in one place, and names the workaround to revisit:
//
//	SDK behaviour                                   workaround (file)
//	a plain handler error is sent with code 0       withErrorCodes (rpcerrors.go): TestSDKSendsCodeZeroForPlainErrors (errors_test.go)
//	tools/list_changed is sent by the SDK itself,   the sending middleware drops it and the gateway
//	  through the sending middleware                  announces changes itself (session.go)
//	prompts/list_changed is sent only when the      a placeholder prompt added and removed (listchanged.go)
//	  server's own registry changes (resources too)
//	AddSendingMiddleware hands the middleware its   session.send keeps it to announce past the filter
//	  next handler at once                            (session.go)
//	a server cannot send a notification the SDK     groups/list_changed is written between the SDK's
//	  does not know; each SSE event is one Write,     events of a listen stream (groupstream.go):
//	  flushed through FlushError                      TestSDKWritesOneEventPerWrite (groupstream_test.go)
//	an HTTP session ends on DELETE through the      idle sessions are closed by a DELETE handed to the
//	  handler                                         handler (http.go closeSession)
//	a session opened with a token is refused to     the session table judges the same before any path
//	  another token (403 "session user mismatch")     (sessions.go)
//	a stdio session ends on a line it cannot        ServeStdio screens every line first (frame.go)
//	  decode
//	a session keeps its initialize params           the HTTP front hands the SDK a compact copy
//	                                                  (initialize.go)
//	a session's tools/list is marked public         the middleware sets the list's cacheScope (session.go)
//	a server copies ServerOptions.Capabilities       every session's server shares the gateway's
//	  before adding to them                           (session.go serverCapabilities)
//	AddTool keeps the definition it is given,       the groups mode's sessions share their meta-tools'
//	  neither copied nor changed                      definitions (session.go metaTools)
//	a json.RawMessage schema is sent as it is;      upstream schemas are kept as JSON text, never maps
//	  a client gets schemas as map[string]any         (upstream/rawschema.go, expose/schema.go)

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"sync"
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

// TestSDKStdioSessionEndsOnAMalformedLine: the SDK ends a stdio session on
// the first line it cannot decode, which is why ServeStdio screens lines.
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

// TestSDKMarksSessionListsPublic: the SDK answers a session's tools/list
// itself with cacheScope public, whoever asks; the gateway's middleware
// says private where the list depends on the caller.
func TestSDKMarksSessionListsPublic(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "bare"}, nil)
	s.AddTool(&mcp.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}, noArgs)
	cs, _ := bareServer(t, s, nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.CacheScope != "public" || res.TTLMs != 0 {
		t.Fatalf("the SDK's own tools/list says cacheScope %q, ttlMs %d; revisit the gateway's override", res.CacheScope, res.TTLMs)
	}
}

// TestSDKAddToolKeepsTheDefinitionAsGiven: AddTool neither changes the
// definition it is given nor needs one of its own per server, so the
// sessions of the groups mode, a server each, share their meta-tools'
// definitions, and each lists them as they were made.
func TestSDKAddToolKeepsTheDefinitionAsGiven(t *testing.T) {
	tool := &mcp.Tool{Name: "shared", Description: "one definition, many servers", InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)}
	want, err := json.Marshal(tool)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		s := mcp.NewServer(&mcp.Implementation{Name: "bare"}, nil)
		s.AddTool(tool, noArgs)
		cs, _ := bareServer(t, s, nil)
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Tools) != 1 {
			t.Fatalf("server %d listed %d tools, want 1", i, len(res.Tools))
		}
		listed, _ := json.Marshal(res.Tools[0])
		var got, given any
		if json.Unmarshal(listed, &got) != nil || json.Unmarshal(want, &given) != nil || !reflect.DeepEqual(got, given) {
			t.Errorf("server %d listed %s, want the definition as given, %s", i, listed, want)
		}
		if after, _ := json.Marshal(tool); string(after) != string(want) {
			t.Fatalf("AddTool changed the definition it was given: %s, was %s", after, want)
		}
	}
}

// TestSDKCopiesTheServerCapabilities: a server adds what it serves (here a
// prompt) to a copy of the capabilities it was given, so one value can be
// given to every session's server.
func TestSDKCopiesTheServerCapabilities(t *testing.T) {
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}
	caps.AddExtension("io.example/ext", map[string]any{})
	want, _ := json.Marshal(caps)
	withPrompt := mcp.NewServer(&mcp.Implementation{Name: "bare"}, &mcp.ServerOptions{Capabilities: caps})
	withPrompt.AddPrompt(&mcp.Prompt{Name: "p"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	})
	cs, _ := bareServer(t, withPrompt, nil)
	if cs.InitializeResult().Capabilities.Prompts == nil {
		t.Fatal("the server with a prompt does not advertise prompts")
	}
	if after, _ := json.Marshal(caps); string(after) != string(want) {
		t.Fatalf("the server changed the capabilities it was given: %s, was %s", after, want)
	}
	plain, _ := bareServer(t, mcp.NewServer(&mcp.Implementation{Name: "bare"}, &mcp.ServerOptions{Capabilities: caps}), nil)
	if got := plain.InitializeResult().Capabilities; got.Prompts != nil || got.Extensions["io.example/ext"] == nil {
		t.Fatalf("a server sharing the capabilities advertises %+v, want the extension and no prompts", got)
	}
}

// lockedBuffer is a bytes.Buffer for a transport's log, written by the
// session's reading goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestSDKSendsRawSchemasAsTheyAre: a tool whose input schema is a
// json.RawMessage goes out byte for byte (key order and "<" kept), and a
// client reads schemas back as generic maps. The gateway relies on the
// first to keep every upstream schema as JSON text (a fraction of the
// memory of the maps), and converts the second once, as a list arrives.
func TestSDKSendsRawSchemasAsTheyAre(t *testing.T) {
	const schema = `{"type":"object","properties":{"z":{"type":"string","description":"a <b> & c"},"a":{"type":"integer"}}}`
	s := mcp.NewServer(&mcp.Implementation{Name: "bare"}, nil)
	s.AddTool(&mcp.Tool{Name: "t", InputSchema: json.RawMessage(schema)}, noArgs)
	ct, st := mcp.NewInMemoryTransports()
	if _, err := s.Connect(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	var log lockedBuffer
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "pin", Version: "1"}, nil).Connect(context.Background(), &mcp.LoggingTransport{Transport: ct, Writer: &log}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) != 1 {
		t.Fatalf("ListTools = %v, %v", res, err)
	}
	if !strings.Contains(log.String(), `"inputSchema":`+schema) {
		t.Errorf("the SDK no longer sends a json.RawMessage schema as it is; the wire shows:\n%s", log.String())
	}
	if _, ok := res.Tools[0].InputSchema.(map[string]any); !ok {
		t.Errorf("the client now gives an input schema as %T, not map[string]any; revisit rawSchemas", res.Tools[0].InputSchema)
	}
}
