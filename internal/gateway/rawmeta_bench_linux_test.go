package gateway

import (
	"encoding/json"

	"context"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/view"
)

// BenchmarkFindBytePath is toolfold's whole share of a find_tools call on
// the stdio byte path at 20,000 tools in the search mode, from the line
// read to the answer written: reading the request, the session, ranking,
// the answer's text and its one encoding. A 2026-07-28 client asks, as the
// bench's does.
//
//	go test -run '^$' -bench FindBytePath -benchmem ./internal/gateway/
func BenchmarkFindBytePath(b *testing.B) {
	space, err := view.NewSpace(catalogtest.Build(b, catalogtest.Scaled(b, 20000)), nil)
	if err != nil {
		b.Fatal(err)
	}
	g, err := New(space, &Options{Mode: expose.Search})
	if err != nil {
		b.Fatal(err)
	}
	out := &countingWriter{}
	screen := newStdioScreen(strings.NewReader(""), out, g.log)
	s := g.sessionFor(ClientInfo{ProtocolVersion: statelessProtocol, Stateless: true}, true)
	edge := newRawEdge(context.Background(), g, s, screen)
	queries := []string{"list the open pull requests on github", "send a message to a slack channel", "create a calendar event", "search files in the drive", "query the database table"}
	lines := make([][]byte, len(queries))
	for i, q := range queries {
		lines[i] = []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"tools/call","params":{"name":"find_tools","arguments":{"query":` + strconv.Quote(q) + `},` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},` +
			`"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}}}}}`)
	}
	// On one locked thread, whose CPU time is what the call costs: on a
	// shared machine wall time counts the other processes too. The
	// collector's background work is not counted; B/op tells of it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	start := threadCPU(b)
	for i := 0; b.Loop(); i++ {
		if !edge.take(lines[i%len(lines)]) {
			b.Fatal("the byte path left find_tools to the SDK")
		}
	}
	b.ReportMetric(float64((threadCPU(b)-start).Microseconds())/float64(b.N), "cpu-µs/op")
	if out.messages != b.N {
		b.Fatalf("%d answers written for %d calls", out.messages, b.N)
	}
}

// threadCPU is the CPU time the calling OS thread has used.
func threadCPU(tb testing.TB) time.Duration {
	const rusageThread = 1
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		tb.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFindAnswerClientDecode is what the Go SDK's client spends
// reading one find_tools answer at 20,000 tools (the response's envelope,
// then the result as CallToolResult.UnmarshalJSON reads it), against a
// ping's empty result: the share of a call's wall time that is the
// client's, beyond a round trip. answer-B/op is the answer's size.
func BenchmarkFindAnswerClientDecode(b *testing.B) {
	space, err := view.NewSpace(catalogtest.Build(b, catalogtest.Scaled(b, 20000)), nil)
	if err != nil {
		b.Fatal(err)
	}
	g, err := New(space, &Options{Mode: expose.Search})
	if err != nil {
		b.Fatal(err)
	}
	s := g.sessionFor(ClientInfo{ProtocolVersion: statelessProtocol, Stateless: true}, true)
	out := &keepingWriter{}
	edge := newRawEdge(context.Background(), g, s, newStdioScreen(strings.NewReader(""), out, g.log))
	var answers [][]byte
	for i, q := range []string{"list the open pull requests on github", "send a message to a slack channel", "create a calendar event", "search files in the drive", "query the database table"} {
		line := []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"tools/call","params":{"name":"find_tools","arguments":{"query":` + strconv.Quote(q) + `},` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`)
		if !edge.take(line) {
			b.Fatal("the byte path left find_tools to the SDK")
		}
		answers = append(answers, out.last)
	}
	ping := [][]byte{[]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)}
	for _, c := range []struct {
		name    string
		answers [][]byte
	}{{"ping", ping}, {"find", answers}} {
		b.Run("answer="+c.name, func(b *testing.B) {
			size := 0
			for _, a := range c.answers {
				size += len(a)
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				var env struct {
					Result json.RawMessage `json:"result"`
				}
				if err := json.Unmarshal(c.answers[i%len(c.answers)], &env); err != nil {
					b.Fatal(err)
				}
				if c.name == "find" {
					var res mcp.CallToolResult
					if err := res.UnmarshalJSON(env.Result); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(size)/float64(len(c.answers)), "answer-B/op")
		})
	}
}

// keepingWriter keeps a copy of the last message written.
type keepingWriter struct{ last []byte }

func (k *keepingWriter) Write(p []byte) (int, error) {
	k.last = append([]byte(nil), p...)
	return len(p), nil
}
