package rawcall

import (
	"bytes"
	"encoding/json"
	"testing"
)

// referenceRequest reads msg the way the byte paths did before
// ParseRequest: Valid, then Members at each level.
func referenceRequest(msg []byte) (r Request, ok bool) {
	if !Valid(msg) {
		return r, false
	}
	if Members(msg, func(k, v []byte) bool { r.member(k, v); return true }) != nil {
		return Request{}, false
	}
	if len(r.Params) > 0 && r.Params[0] == '{' {
		_ = Members(r.Params, func(k, v []byte) bool { r.paramsMember(k, v); return true })
		if len(r.Meta) > 0 && r.Meta[0] == '{' {
			_ = Members(r.Meta, func(k, v []byte) bool { r.metaMember(k, v); return true })
		}
	}
	return r, true
}

var requestSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":[1,2,{"b":null}]}}}`,
	` { "jsonrpc" : "2.0" , "id" : "x\"y" , "method" : "tools/call" , "params" : { "name" : "e" , "_meta" : { "traceparent" : "00-ab" , "io.modelcontextprotocol/protocolVersion" : "2026-07-28" , "progressToken" : 3 } } } `,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"x"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":[1,2],"extra":true}`,
	`{"params":{"name":"a","_meta":{"baggage":"k=v"}},"params":{"arguments":null}}`,
	`{"params":{"_meta":{"tracestate":"t"},"_meta":5}}`,
	`{"params":{"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"c"},"io.modelcontextprotocol/clientCapabilities":{}}}}`,
	`{}`, `[]`, `"s"`, `{"a":1,}`, `{"a":1} x`, `{"params":{"name":"a"`, `{"params":{"_meta":{"x":tru}}}`,
	`{"id":1e5,"method":"\u0074ools/call"}`, `{"a":"\x01"}`, ``, `{"params":{"a":"\q"}}`,
}

// FuzzParseRequest: one pass reads what Valid and Members read at each
// level, and refuses what Valid refuses.
func FuzzParseRequest(f *testing.F) {
	for _, s := range requestSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		got, gotOK := ParseRequest(msg)
		want, wantOK := referenceRequest(msg)
		if gotOK != wantOK {
			t.Fatalf("%q: ParseRequest ok = %v, Valid and Members say %v", msg, gotOK, wantOK)
		}
		if gotOK && (json.Valid(msg) != true || msg[bytes.IndexAny(msg, "{[\"0123456789-tfn")] != '{') {
			t.Fatalf("%q: accepted, but it is not one JSON object", msg)
		}
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if !bytes.Equal(g, w) {
			t.Fatalf("%q:\none pass read %s\nthe walks read %s", msg, g, w)
		}
	})
}

func TestParseRequestReadsTheMembers(t *testing.T) {
	r, ok := ParseRequest([]byte(requestSeeds[1]))
	if !ok {
		t.Fatal("a valid request was refused")
	}
	for _, c := range []struct{ name, got, want string }{
		{"id", string(r.ID), `"x\"y"`},
		{"method", string(r.Method), `"tools/call"`},
		{"name", string(r.Name), `"e"`},
		{"traceparent", string(r.Traceparent), `"00-ab"`},
		{"protocol version", string(r.ProtocolVersion), `"2026-07-28"`},
	} {
		if c.got != c.want {
			t.Errorf("%s = %s, want %s", c.name, c.got, c.want)
		}
	}
	if !r.OtherMeta || r.OtherParams || r.Other {
		t.Errorf("other members: top %v, params %v, meta %v; want only meta's progressToken", r.Other, r.OtherParams, r.OtherMeta)
	}
}

func TestParseRequestAllocatesNothing(t *testing.T) {
	msg := []byte(requestSeeds[1])
	if n := testing.AllocsPerRun(100, func() { ParseRequest(msg) }); n != 0 {
		t.Errorf("ParseRequest allocates %v times, want 0", n)
	}
}
