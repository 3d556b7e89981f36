package gateway

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/rawcall"
	"github.com/toolfold/toolfold/internal/view"
)

// BenchmarkStdioFastPath is the gateway's share of one forwarded tools/call
// on stdio: reading the client's line, routing it, handing it to the
// source (here one that answers at once) and writing the answer. The
// source's share is BenchmarkForwardRaw in internal/upstream; together they
// are what toolfold spends per forwarded call.
//
//	go test -run '^$' -bench StdioFastPath -benchmem ./internal/gateway/
func BenchmarkStdioFastPath(b *testing.B) {
	answer := json.RawMessage(`{"content":[{"type":"text","text":"hello"}]}`)
	tool := catalogtest.Tool("s01__echo")
	tool.ChecksArguments = true
	tool.Forward = func(call *rawcall.Call) (func(), bool) {
		call.Done(answer, nil)
		return func() {}, true
	}
	space, err := view.NewSpace(catalogtest.Build(b, catalog.Spec{Tools: []*catalog.Tool{tool}}), nil)
	if err != nil {
		b.Fatal(err)
	}
	g, err := New(space, &Options{Mode: expose.Flat})
	if err != nil {
		b.Fatal(err)
	}
	line := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"s01__echo","arguments":{"text":"hello"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}}}}}` + "\n")
	out := &countingWriter{}
	screen := newStdioScreen(strings.NewReader(""), out, g.log)
	screen.initialized = true
	edge := newRawEdge(g, g.shared[expose.Flat], screen)
	line = line[:len(line)-1] // the screen hands lines on without their newline
	b.ReportAllocs()
	for b.Loop() {
		if !edge.take(line) {
			b.Fatal("the fast path left the call to the SDK")
		}
	}
	if out.messages != b.N {
		b.Fatalf("%d answers written for %d calls", out.messages, b.N)
	}
}

type countingWriter struct{ messages int }

func (c *countingWriter) Write(p []byte) (int, error) { c.messages++; return len(p), nil }
func (c *countingWriter) Close() error                { return nil }
