package expose

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// tokenMembers is objectMembers the slow, obvious way, with a decoder.
func tokenMembers(t *testing.T, obj string) []property {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(obj)))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	out := []property{}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatal(err)
		}
		out = append(out, property{name: k.(string), raw: raw})
	}
	return out
}

// TestObjectMembersWalksLikeADecoder: the text walk finds the members a
// JSON decoder finds, names unescaped, values' text exact, in order.
func TestObjectMembersWalksLikeADecoder(t *testing.T) {
	for _, obj := range []string{
		`{}`,
		` { } `,
		`{"a":{"type":"string"}}`,
		"{ \"z\" : 1 ,\n\t\"a\":[1,{\"b\":\"}]\"}] , \"c\" : true,\"d\":null,\"e\":-1.5e3}",
		`{"q\"uote":{"description":"a \\\" b } ]"},"\u00e9t\u00e9":"x","s":"\\"}`,
		`{"nested":{"properties":{"x":{"enum":["{","[","\""]}}}}`,
	} {
		got, err := objectMembers([]byte(obj))
		if err != nil {
			t.Fatalf("%s: %v", obj, err)
		}
		if got == nil {
			got = []property{}
		}
		if want := tokenMembers(t, obj); !reflect.DeepEqual(got, want) {
			t.Errorf("objectMembers(%s) = %q\nwant %q", obj, got, want)
		}
	}
	for _, notObject := range []string{`[]`, `"x"`, `true`, `12`, ``} {
		if _, err := objectMembers([]byte(notObject)); err == nil {
			t.Errorf("objectMembers(%s) took it for an object", notObject)
		}
	}
}
