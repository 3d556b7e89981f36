package rawcall

import (
	"encoding/json"
	"strings"
	"testing"
)

// validCases are texts on both sides of every rule of the grammar.
var validCases = []string{
	``, ` `, `{}`, ` { } `, `[]`, `[ ]`, `""`, `"a"`, `0`, `-0`, `1`, `-12`, `1.5`, `1.`, `.5`, `01`, `-`, `+1`,
	`1e5`, `1E+5`, `1e-5`, `1e`, `1e+`, `1.5e3`, `0.0`, `00`, `-01`, `true`, `false`, `null`, `tru`, `nul`, `truex`,
	`True`, `nan`, `{"a":1}`, `{"a":1,}`, `{,}`, `{"a"}`, `{"a":}`, `{a:1}`, `{"a":1 "b":2}`, `{"a":1}}`, `[1,]`,
	`[,1]`, `[1 2]`, `[1,2]`, `[[[]]]`, `[[[]]`, `{"a":[{"b":null}]}`, `"\""`, `"\\"`, `"\/"`, `"\b\f\n\r\t"`,
	`"\u00e9"`, `"\u00E9"`, `"\u00g9"`, `"\u00e"`, `"\x"`, `"\'"`, "\"a\x01\"", "\"a\x7f\"", "\"\xff\xfe\"", `"abc`,
	`"\`, `"\u`, "\t{\n\"a\"\r:\n1}\t", "{\"a\":1}\x00", `1 2`, `{} {}`, `"a" `, ` [1 , 2 ] `,
	`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"x","arguments":{"t":"hello"}}}`,
	strings.Repeat("[", maxNesting) + strings.Repeat("]", maxNesting),
	strings.Repeat("[", maxNesting+1) + strings.Repeat("]", maxNesting+1),
	strings.Repeat(`{"a":`, maxNesting) + "1" + strings.Repeat("}", maxNesting),
	strings.Repeat(`{"a":`, maxNesting+1) + "1" + strings.Repeat("}", maxNesting+1),
}

// Valid agrees with encoding/json.Valid, which it stands in for.
func TestValidAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range validCases {
		if got, want := Valid([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("Valid(%.60q) = %v, json.Valid says %v", c, got, want)
		}
	}
}

func FuzzValid(f *testing.F) {
	for _, c := range validCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Errorf("Valid(%q) = %v, json.Valid says %v", b, got, want)
		}
	})
}

// BenchmarkValid is a 2026-07-28 client's tools/call line, as the stdio
// byte path checks it, against json.Valid.
func BenchmarkValid(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"s01__echo","arguments":{"text":"hello"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}}}}}`)
	for _, bc := range []struct {
		name  string
		valid func([]byte) bool
	}{{"rawcall", Valid}, {"encoding-json", json.Valid}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				if !bc.valid(line) {
					b.Fatal("the line is valid JSON")
				}
			}
		})
	}
}
