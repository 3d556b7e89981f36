package relay

import (
	"strings"

	"encoding/json"
	"github.com/toolfold/toolfold/internal/rawcall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// readableCases are results and whether the walk alone should accept them
// (the common shapes, which must not pay for a decode).
var readableCases = []struct {
	res   string
	plain bool
}{
	{`{}`, true},
	{`{"content":[]}`, true},
	{`{"content":null,"isError":true}`, true},
	{`{"content":[{"type":"text","text":"ok"}]}`, true},
	{`{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`, true},
	{`{"content":[{"type":"audio","data":"","mimeType":"audio/wav"}]}`, true},
	{`{"content":[{"type":"resource_link","uri":"file:///a","name":"a"}],"structuredContent":{"a":[1]},"_meta":{"x":1}}`, true},
	// What the SDK refuses.
	{`{"content":[{}]}`, false},
	{`{"content":[{"type":"nope"}]}`, false},
	{`{"content":[{"type":"text","text":1}]}`, false},
	{`{"content":[{"type":"image","data":"A"}]}`, false},
	{`{"content":[{"type":"image","data":"!!!!"}]}`, false},
	{`{"isError":"yes"}`, false},
	{`{"content":[1]}`, false},
	{`{"content":"text"}`, false},
	{`{"content":[{"type":"text","type":"nope"}]}`, false},
	// What the SDK takes, but the walk leaves to it.
	{`{"content":{"type":"text","text":"one"}}`, false},
	{`{"Content":[{"type":"text","text":"ok"}]}`, false},
	{`{"content":[{"type":"text","text":"ok","annotations":{"priority":1}}]}`, false},
	{`{"content":[{"type":"image","data":"A\u0041=="}]}`, false},
	{`{"content":[{"type":"text","text":"ok"}],"extra":1}`, false},
}

// TestReadableAgreesWithTheSDK: the byte path refuses exactly the results
// the SDK's client cannot decode, and the walk takes the common shapes by
// itself.
func TestReadableAgreesWithTheSDK(t *testing.T) {
	for _, tc := range readableCases {
		var r mcp.CallToolResult
		want := json.Unmarshal([]byte(tc.res), &r) == nil
		if got := readable([]byte(tc.res)) == nil; got != want {
			t.Errorf("readable(%s) = %v; the SDK decodes it: %v", tc.res, got, want)
		}
		if got := plainResult([]byte(tc.res)); got != tc.plain {
			t.Errorf("the walk takes %s: %v, want %v", tc.res, got, tc.plain)
		}
	}
}

// FuzzReadableAgreesWithTheSDK: for any JSON object, readable says what
// the SDK's decoding says, and the walk never takes what it refuses.
func FuzzReadableAgreesWithTheSDK(f *testing.F) {
	for _, tc := range readableCases {
		f.Add(tc.res)
	}
	f.Fuzz(func(t *testing.T, res string) {
		if !json.Valid([]byte(res)) || !isObject([]byte(res)) {
			return
		}
		var r mcp.CallToolResult
		sdk := json.Unmarshal([]byte(res), &r) == nil
		if plainResult([]byte(res)) && !sdk {
			t.Fatalf("the walk takes %s, which the SDK refuses", res)
		}
		if (readable([]byte(res)) == nil) != sdk {
			t.Fatalf("readable(%s) disagrees with the SDK (%v)", res, sdk)
		}
	})
}

// BenchmarkReadable is the walk's cost beside rawcall.Valid's, which every
// byte-path answer already pays, on a result of one text of 1 KB and on one
// image of 64 KB.
func BenchmarkReadable(b *testing.B) {
	text := `{"content":[{"type":"text","text":"` + strings.Repeat("a", 1024) + `"}]}`
	image := `{"content":[{"type":"image","mimeType":"image/png","data":"` + strings.Repeat("AAAA", 16384) + `"}]}`
	for _, tc := range []struct{ name, res string }{{"text-1KB", text}, {"image-64KB", image}} {
		res := []byte(tc.res)
		b.Run(tc.name+"/valid", func(b *testing.B) {
			b.SetBytes(int64(len(res)))
			for b.Loop() {
				if !rawcall.Valid(res) {
					b.Fatal("not valid")
				}
			}
		})
		b.Run(tc.name+"/readable", func(b *testing.B) {
			b.SetBytes(int64(len(res)))
			b.ReportAllocs()
			for b.Loop() {
				if readable(res) != nil || !plainResult(res) {
					b.Fatal("not read by the walk")
				}
			}
		})
	}
}
