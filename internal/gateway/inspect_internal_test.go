package gateway

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// bigResult is a response with a result of about n bytes, as the SDK
// writes it: "jsonrpc", "id", then "result".
func bigResult(id string, n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":` + id + `,"result":{"tools":[`)
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"name":"tool","description":"` + strings.Repeat("d", 200) + `","inputSchema":{"type":"object"}}`)
	}
	b.WriteString("]}}\n")
	return b.Bytes()
}

// The writer reads what the SDK sends only as far as its id: the id of a
// response frees its request, and nothing after the "result" key is
// walked. The cut message shows it: its result is not even JSON, and its
// request is freed all the same (before, the whole message was decoded,
// failed, and the request's id stayed taken). Errors are still read
// whole, and requests of the gateway's own are left alone.
func TestStdioWriterReadsOnlyToTheID(t *testing.T) {
	for _, tc := range []struct {
		name      string
		msg       string
		key       string // the request it answers
		freed     bool
		wantError bool // the screen hears it failed
	}{
		{"result", `{"jsonrpc":"2.0","id":7,"result":{}}` + "\n", "int64:7", true, false},
		{"result cut short", `{"jsonrpc":"2.0","id":7,"result":{"tools":[{"na`, "int64:7", true, false},
		{"result not walked", `{"jsonrpc":"2.0","id":7,"result":nope,"error":{"code":0}}`, "int64:7", true, false},
		{"string id", `{"jsonrpc":"2.0","id":"a\u002d1","result":{}}`, "string:a-1", true, false},
		{"error", `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"no"}}`, "int64:7", true, true},
		{"request of the gateway's", `{"jsonrpc":"2.0","id":7,"method":"ping"}`, "int64:7", false, false},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`, "int64:7", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStdioScreen(strings.NewReader(""), io.Discard, slog.New(slog.DiscardHandler))
			s.inflight[tc.key] = "tools/list"
			got := s.out.inspect([]byte(tc.msg))
			if string(got) != tc.msg {
				t.Errorf("inspect changed the message: %s", got)
			}
			if _, left := s.inflight[tc.key]; left == tc.freed {
				t.Errorf("request %s freed: %v, want %v", tc.key, !left, tc.freed)
			}
		})
	}
}

// The cost of reading a 1 MB tools/list answer's id. Before: about the
// cost of decoding the message (encoding/json scans it whole, twice);
// now the prefix up to "result".
func BenchmarkStdioWriterInspect(b *testing.B) {
	msg := bigResult("7", 1<<20)
	s := newStdioScreen(strings.NewReader(""), io.Discard, slog.New(slog.DiscardHandler))
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		s.inflight["int64:7"] = "tools/list"
		s.out.inspect(msg)
	}
}
