package gateway

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// FuzzCheckFrame feeds arbitrary lines to the stdio screen: it must never
// panic, must pass only messages the SDK decodes, each decoded as the SDK
// decodes it (decodeRequest), and must answer every other line with a
// JSON-RPC error the client can read.
func FuzzCheckFrame(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"a","result":{}}`,
		`{"jsonrpc":"2.0","id":"a","error":{"code":-1,"message":"no"}}`,
		`{"jsonrpc":"2.0",`, `{}`, `"hello"`, `[]`, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"1.0","id":3,"method":"ping"}`, `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`,
		`{"jsonrpc":"2.0","id":4,"method":42}`, "{\"jsonrpc\":\"2.0\",\x00}", `{"jsonrpc":"2.0","id":null,"method":"x"}`,
		`{"jsonrpc":"2.0","id":1e3,"method":"x"}`, `{"jsonrpc":"2.0","id":1.5,"method":"x"}`,
		`{"jsonrpc":"2.0","ID":1,"method":"x"}`, `{"jsonrpc":"2.0","id":1,"id":"b","method":"x"}`,
		`{"jsonrpc":"2.0","id":"a\u0062","method":"p\u0069ng","params":null}`, `{"jsonrpc":"2.0","id":-0,"method":"x","params" : [ 1 ,2 ] }`,
		`{"jsonrpc":"2.0","id":9007199254740993,"method":"x","Params":{}}`, `{"jsonrpc":"2.0","method":"x","params":1,"params":{"a":"\ud800"}}`,
		strings.Repeat("[", 1001) + strings.Repeat("]", 1001),
		`{"jsonrpc":"2.0","id":1,"method":"x","params":` + strings.Repeat(`{"a":`, 999) + `1` + strings.Repeat(`}`, 999) + `}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		fr, ferr := checkFrame(line)
		if ferr != nil {
			if ferr.code != codeParseError && ferr.code != codeInvalidRequest {
				t.Fatalf("code %d is neither -32700 nor -32600", ferr.code)
			}
			if !json.Valid(ferr.id) || ferr.message == "" {
				t.Fatalf("the answer's id %q is not JSON, or its message is empty", ferr.id)
			}
			return
		}
		if !json.Valid(fr.line) {
			t.Fatalf("passed a line that is not JSON: %q", line)
		}
		want, err := jsonrpc.DecodeMessage(fr.line)
		if err != nil {
			t.Fatalf("passed a line the SDK refuses (%v): %q", err, line)
		}
		// The SDK is handed fr.msg instead of decoding the line: they
		// must be the same message.
		if !reflect.DeepEqual(fr.msg, want) {
			t.Fatalf("the screen decoded %#v, the SDK decodes %#v: %q", fr.msg, want, line)
		}
	})
}
