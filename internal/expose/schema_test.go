package expose_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/view"
)

// TestParamsReadFromSchemaText: parameters are read from the schema's
// text, in declared order, whatever shape each property's schema takes.
func TestParamsReadFromSchemaText(t *testing.T) {
	tests := []struct {
		name, schema string
		want         []expose.Param
	}{
		{"none", `{"type":"object"}`, []expose.Param{}},
		{"null properties", `{"type":"object","properties":null}`, []expose.Param{}},
		{"declared order and required", `{"type":"object","properties":{"z":{"type":"string","description":" Last. "},"a":{"type":"integer"}},"required":["a"]}`,
			[]expose.Param{{Name: "z", Type: "string", Description: "Last."}, {Name: "a", Type: "integer", Required: true}}},
		{"enum", `{"type":"object","properties":{"m":{"type":"string","enum":["x",2,true]}}}`,
			[]expose.Param{{Name: "m", Type: "one of x|2|true", Enum: []string{"x", "2", "true"}}}},
		{"array of", `{"type":"object","properties":{"l":{"type":"array","items":{"type":"number"}},"t":{"type":"array","items":[{"type":"number"}]}}}`,
			[]expose.Param{{Name: "l", Type: "array of number"}, {Name: "t", Type: "array"}}},
		{"type list", `{"type":"object","properties":{"n":{"type":["string","null"]}}}`,
			[]expose.Param{{Name: "n", Type: "string or null"}}},
		{"boolean schema and odd description", `{"type":"object","properties":{"any":true,"d":{"description":{"nested":1}}}}`,
			[]expose.Param{{Name: "any"}, {Name: "d"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tl := catalogtest.Tool("x")
			tl.Def.InputSchema = json.RawMessage(tc.schema)
			e, _ := build(t, catalogtest.Build(t, catalog.Spec{Tools: []*catalog.Tool{tl}}), expose.Options{Mode: expose.Flat})
			w, _ := e.Route("x")
			if got := w.Params(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Params = %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

// TestBadPropertiesAreRefused: what exposition cannot read is refused when
// the exposure is built, not when a view first reads it.
func TestBadPropertiesAreRefused(t *testing.T) {
	for _, schema := range []string{
		`{"type":"object","properties":[]}`,
		`{"type":"object","properties":"x"}`,
		`{"type":"object","required":"x"}`,
		`{"type":"object",`,
		`{"type":"object","description":[1,}`,
		`{"type":"object","x":{"y":tru}}`,
		`{"type":"object"} trailing`,
	} {
		tl := catalogtest.Tool("x")
		tl.Def.InputSchema = json.RawMessage(schema)
		space := viewSpace(t, catalogtest.Build(t, catalog.Spec{Tools: []*catalog.Tool{tl}}))
		if _, err := expose.Build(space, &expose.Options{Mode: expose.Flat}); err == nil || !strings.Contains(err.Error(), `tool "x": input schema`) {
			t.Errorf("%s: err = %v", schema, err)
		}
	}
}

// TestNullSchemaIsNoSchema: an upstream's "inputSchema": null, kept as
// its text, is exposed as the empty object schema, as a missing one is;
// before, the type was written in front of it and the list carried
// {"type":"object",null, which no client can read.
func TestNullSchemaIsNoSchema(t *testing.T) {
	for _, schema := range []string{`null`, ` null `} {
		tl := catalogtest.Tool("x")
		tl.Def.InputSchema = json.RawMessage(schema)
		e, _ := build(t, catalogtest.Build(t, catalog.Spec{Tools: []*catalog.Tool{tl}}), expose.Options{Mode: expose.Flat})
		w, ok := e.Route("x")
		if !ok {
			t.Fatalf("%q: no route to x", schema)
		}
		got, err := json.Marshal(w.Tool.InputSchema)
		if err != nil || string(got) != `{"type":"object"}` {
			t.Errorf("%q: the schema went out as %s (%v)", schema, got, err)
		}
	}
}

// TestFlatWiresShareTheSchemaText: a flat wire sends the catalog's schema
// text itself, not a copy, so a large catalog holds each schema once.
func TestFlatWiresShareTheSchemaText(t *testing.T) {
	tl := catalogtest.Tool("x")
	raw := json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)
	tl.Def.InputSchema = raw
	for _, mode := range []expose.Mode{expose.Flat, expose.Search, expose.Groups} {
		e, _ := build(t, catalogtest.Build(t, catalog.Spec{Tools: []*catalog.Tool{tl}}), expose.Options{Mode: mode})
		w, _ := e.Route("x")
		got, ok := w.Tool.InputSchema.(json.RawMessage)
		if !ok || unsafe.SliceData(got) != unsafe.SliceData(raw) {
			t.Errorf("%s: the wire's schema is a copy (%T)", mode, w.Tool.InputSchema)
		}
	}
}

func viewSpace(t testing.TB, cat *catalog.Catalog) *view.Space {
	t.Helper()
	space, err := view.NewSpace(cat, nil)
	if err != nil {
		t.Fatal(err)
	}
	return space
}
