package expose

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
)

// decodedTexts is what AppendParamTexts must yield, the slow way it was
// once computed: each property decoded by the JSON library, enum values
// spelled by fmt.Sprint.
func decodedTexts(t *testing.T, info *schemaInfo) []ParamText {
	t.Helper()
	props, _ := info.properties()
	var out []ParamText
	for _, p := range props {
		b := p.brief()
		pt := ParamText{Name: p.name, Description: strings.TrimSpace(b.description())}
		if vals, ok := b.Enum.([]any); ok {
			for _, v := range vals {
				pt.Enum = append(pt.Enum, fmt.Sprint(v))
			}
		}
		out = append(out, pt)
	}
	return out
}

func paramTexts(t *testing.T, schema json.RawMessage) (got, want []ParamText) {
	t.Helper()
	info, err := readSchema(schema)
	if err != nil {
		t.Fatalf("schema %s: %v", schema, err)
	}
	w := &Wire{check: &validator{info: info}}
	got, _ = w.AppendParamTexts(nil, nil)
	return got, decodedTexts(t, info)
}

// TestParamTextsMatchDecoding: reading the schema text yields what
// decoding it did, on the edge cases encoding/json defines.
func TestParamTextsMatchDecoding(t *testing.T) {
	for _, schema := range []string{
		`{"type":"object"}`,
		`{"type":"object","properties":{"a":true,"b":false,"c":{}}}`,
		`{"type":"object","properties":{"a":{"Description":"Upper case key.","ENUM":["x"]}}}`,
		`{"type":"object","properties":{"a":{"description":"first","description":{"not":"a string"}}}}`,
		`{"type":"object","properties":{"a":{"description":7,"description":" last wins "}}}`,
		`{"type":"object","properties":{"a":{"enum":[]},"b":{"enum":"x"},"c":{"enum":null}}}`,
		`{"type":"object","properties":{"a":{"enum":[1,1.0,-0,1e6,1e21,123456789012,0.000001,1e-7,2.5e-3,true,false,null]}}}`,
		`{"type":"object","properties":{"a":{"enum":["t\u00e9\"q\\",{"k":[1,"v"]},[1,[2]]]}}}`,
		`{"type":"object","properties":{"a\"b":{"descr\u0069ption":"escaped key"}}}`,
		`{ "type" : "object" , "properties" : { "a" : { "enum" : [ "x" , 2 ] , "description" : "spaced" } } }`,
		`{"type":"object","properties":{"a":{"type":"object","properties":{"description":"nested, not ours"}}}}`,
	} {
		got, want := paramTexts(t, json.RawMessage(schema))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("schema %s\n got %#v\nwant %#v", schema, got, want)
		}
	}
}

// TestParamTextsMatchDecodingOnRecordedCatalogs: every recorded server's
// tools, schemas as their servers sent them, read the same both ways, so
// the search index's input is unchanged.
func TestParamTextsMatchDecodingOnRecordedCatalogs(t *testing.T) {
	tools, params := 0, 0
	for _, s := range catalogtest.SharedServers(t) {
		for _, raw := range s.Tools {
			var def struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"inputSchema"`
			}
			if err := json.Unmarshal(raw, &def); err != nil {
				t.Fatal(err)
			}
			got, want := paramTexts(t, def.InputSchema)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s/%s:\n got %#v\nwant %#v", s.Name, def.Name, got, want)
			}
			tools++
			params += len(got)
		}
	}
	if tools < 800 || params < 3000 {
		t.Fatalf("read only %d tools, %d parameters: the recorded catalogs are missing", tools, params)
	}
}

// TestEnumTextIsSprint: enum values are spelled as fmt.Sprint spells them.
func TestEnumTextIsSprint(t *testing.T) {
	for _, v := range []any{"s", "", true, false, nil, 0.0, math.Copysign(0, -1), 1.0, 1.5, 1e6, 1e20, 1e21, 123456789012.0, 1e-4, 1e-5, 0.1, math.Inf(1), math.NaN(),
		map[string]any{"k": 1.0}, []any{1.0, "x"}} {
		if got, want := enumText(v), fmt.Sprint(v); got != want {
			t.Errorf("enumText(%#v) = %q, want %q", v, got, want)
		}
	}
}

// TestParamTextsShareArenas: enum values of successive tools land in the
// caller's slice without one tool's append overwriting another's.
func TestParamTextsShareArenas(t *testing.T) {
	var texts []ParamText
	var vals []string
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"enum":["x","y"]}}}`,
		`{"type":"object","properties":{"b":{"enum":["z"]},"c":{"description":"no enum"}}}`,
	} {
		info, err := readSchema(json.RawMessage(s))
		if err != nil {
			t.Fatal(err)
		}
		texts, vals = (&Wire{check: &validator{info: info}}).AppendParamTexts(texts, vals)
	}
	want := []ParamText{{Name: "a", Enum: []string{"x", "y"}}, {Name: "b", Enum: []string{"z"}}, {Name: "c", Description: "no enum"}}
	if !reflect.DeepEqual(texts, want) || len(vals) != 3 {
		t.Fatalf("texts = %#v (vals %q), want %#v", texts, vals, want)
	}
}

// TestReadTopMatchesDecoding: readSchema's one-scan reading of a schema's
// top level agrees with the decoder wherever it answers, and leaves to the
// decoder what it cannot read.
func TestReadTopMatchesDecoding(t *testing.T) {
	schemas := []string{
		`{"type":"object"}`, `{}`, `{"TYPE":"object","Properties":{"a":{}},"REQUIRED":["a"]}`,
		`{"type":"string","type":"object"}`, `{"type":["object","null"]}`, `{"type":null,"properties":null}`,
		`{"properties":[],"required":["a","b"]}`, `{"type":"ob\u006aect"}`, `{"required":null}`,
	}
	for _, s := range catalogtest.SharedServers(t) {
		for _, raw := range s.Tools {
			var def struct {
				InputSchema json.RawMessage `json:"inputSchema"`
			}
			if err := json.Unmarshal(raw, &def); err != nil {
				t.Fatal(err)
			}
			schemas = append(schemas, string(def.InputSchema))
		}
	}
	for _, s := range schemas {
		got, ok := readTop([]byte(s))
		var want topLevel
		if err := json.Unmarshal([]byte(s), &want); err != nil || !ok {
			t.Errorf("%s: readTop answered %v, the decoder %v", s, ok, err)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %#v\nwant %#v", s, got, want)
		}
	}
	for _, s := range []string{`[]`, `null`, `{"type":"object",`, `{"required":"a"}`, `{"required":[1]}`, `"x"`} {
		if _, ok := readTop([]byte(s)); ok {
			t.Errorf("readTop(%s) answered; the decoder should", s)
		}
	}
}
