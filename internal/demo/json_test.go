package demo

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestJSONValidate(t *testing.T) {
	c := newClient(t)
	tests := []struct {
		doc  string
		want jsonValidateOutput
	}{
		{`{"a": [1, {"b": null}]}`, jsonValidateOutput{Valid: true, Type: "object", Depth: 3}},
		{`42`, jsonValidateOutput{Valid: true, Type: "number"}},
		{`{"a": 1, "b": {"c": 1, "c": 2}, "a": 3}`, jsonValidateOutput{Valid: true, Type: "object", Depth: 2, DuplicateKeys: []string{"b.c", "a"}}},
		{"{\n  \"a\": 1,\n  \"b\": tru\n}", jsonValidateOutput{Error: "invalid character '\\n' in literal true (expecting 'e')", Line: 3, Column: 11}},
		{`{"a": 1,}`, jsonValidateOutput{Error: "invalid character '}' looking for beginning of object key string", Line: 1, Column: 9}},
		{`[1, 2`, jsonValidateOutput{Error: "the text ends before the JSON value does: a closing bracket, brace or quote is missing", Line: 1, Column: 6}},
		{`{} {}`, jsonValidateOutput{Error: "there is more text after the first JSON value: pass a single document (wrap several in an array)", Line: 1, Column: 4}},
		{``, jsonValidateOutput{Error: "the document is empty", Line: 1, Column: 1}},
	}
	for _, tt := range tests {
		got := callOK[jsonValidateOutput](c, "json_validate", map[string]any{"document": tt.doc})
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("json_validate(%q) =\n%+v\nwant\n%+v", tt.doc, got, tt.want)
		}
	}
}

func TestJSONFormat(t *testing.T) {
	c := newClient(t)
	doc := `{"b": 1.50, "a": [1, "<x>"], "c": {}}`
	tests := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"document": doc}, "{\n  \"b\": 1.50,\n  \"a\": [\n    1,\n    \"<x>\"\n  ],\n  \"c\": {}\n}"},
		{map[string]any{"document": doc, "indent": 0}, `{"b":1.50,"a":[1,"<x>"],"c":{}}`},
		{map[string]any{"document": doc, "indent": 0, "sort_keys": true}, `{"a":[1,"<x>"],"b":1.50,"c":{}}`},
		{map[string]any{"document": doc, "indent": 4, "sort_keys": true}, "{\n    \"a\": [\n        1,\n        \"<x>\"\n    ],\n    \"b\": 1.50,\n    \"c\": {}\n}"},
	}
	for _, tt := range tests {
		if got := callOK[jsonFormatOutput](c, "json_format", tt.args); got.Result != tt.want || got.Bytes != len(tt.want) {
			t.Errorf("json_format(%v) =\n%s\nwant\n%s", tt.args, got.Result, tt.want)
		}
	}
	c.callErr("json_format", map[string]any{"document": `{"a" 1}`}, "not valid JSON", "line 1, column 6")
	c.callErr("json_format", map[string]any{"document": `{}`, "indent": 9}, "0 (compact) to 8")
}

func TestJSONQuery(t *testing.T) {
	c := newClient(t)
	doc := `{"user": {"name": "Ann", "emails": ["a@x.org", "ann@y.com"], "odd.key": {"]": true}},
	         "items": [{"id": 1, "tags": ["x"]}, {"id": 2}, {"name": "no id"}], "n": 12345678901234567890}`
	tests := []struct {
		path    string
		value   any
		typ     string
		matches int
	}{
		{"user.name", "Ann", "string", 1},
		{"$.user.emails[1]", "ann@y.com", "string", 1},
		{"user.emails[-1]", "ann@y.com", "string", 1},
		{`user["odd.key"]["]"]`, true, "boolean", 1},
		{"items[0].tags", []any{"x"}, "array", 1},
		{"items[*].id", []any{1.0, 2.0}, "array", 2},
		{"user.*", nil, "array", 3},
		{"n", 12345678901234567890.0, "number", 1},
		{"", nil, "object", 1},
	}
	for _, tt := range tests {
		got := callOK[jsonQueryOutput](c, "json_query", map[string]any{"document": doc, "path": tt.path})
		if got.Type != tt.typ || got.Matches != tt.matches {
			t.Errorf("json_query(%q) = %+v, want type %s with %d matches", tt.path, got, tt.typ, tt.matches)
			continue
		}
		if tt.value != nil && !reflect.DeepEqual(got.Value, tt.value) {
			t.Errorf("json_query(%q) = %#v, want %#v", tt.path, got.Value, tt.value)
		}
	}
	// Big integers keep every digit on the wire.
	res := c.call("json_query", map[string]any{"document": doc, "path": "n"})
	if text := resultText(res); !json.Valid([]byte(text)) || !strings.Contains(text, "12345678901234567890") {
		t.Errorf("json_query lost precision: %s", text)
	}

	errs := []struct{ path, want string }{
		{"user.age", `key "age" is not in user; its keys are: emails, name, odd.key`},
		{"items[3]", "index [3] is out of range at items, which has 3 elements"},
		{"user.name[0]", "user.name is a string, not an array"},
		{"items.id", `items is a array, not an object, so it has no key "id"`},
		{"items[x]", "neither an index nor a quoted key"},
		{"items[0", "[ without ]"},
		{"user..name", "empty key"},
	}
	for _, e := range errs {
		c.callErr("json_query", map[string]any{"document": doc, "path": e.path}, e.want)
	}
	c.callErr("json_query", map[string]any{"document": "{nope}", "path": "a"}, "document is not valid JSON")
}

func TestJSONDiff(t *testing.T) {
	c := newClient(t)
	before := `{"name": "toolfold", "version": 1.0, "tags": ["mcp", "go"], "owner": {"id": 1, "team": "core"}, "gone": null}`
	after := `{"version": 1, "name": "toolfold!", "tags": ["mcp"], "owner": {"id": "1", "team": "core"}, "new": {"x": 1}}`
	got := callOK[jsonDiffOutput](c, "json_diff", map[string]any{"before": before, "after": after})
	type diff struct {
		Path, Change  string
		Before, After any
	}
	var simple []diff
	for _, d := range got.Differences {
		x := diff{Path: d.Path, Change: d.Change}
		if d.Before != nil {
			x.Before = *d.Before
		}
		if d.After != nil {
			x.After = *d.After
		}
		simple = append(simple, x)
	}
	want := []diff{
		{"gone", "removed", nil, nil},
		{"name", "changed", "toolfold", "toolfold!"},
		{"new", "added", nil, map[string]any{"x": 1.0}},
		{"owner.id", "changed", 1.0, "1"},
		{"tags[1]", "removed", "go", nil},
	}
	if !reflect.DeepEqual(simple, want) || got.Count != 5 || got.Equal {
		t.Errorf("json_diff =\n%+v\nwant\n%+v", simple, want)
	}
	// "gone" was null: the difference still says what it was.
	raw := resultText(c.call("json_diff", map[string]any{"before": before, "after": after}))
	if !strings.Contains(raw, `{"path":"gone","change":"removed","before":null}`) {
		t.Errorf("a removed null value lost its before: %s", raw)
	}

	same := callOK[jsonDiffOutput](c, "json_diff", map[string]any{"before": `{"a": [1, 2.0], "b": 1e2}`, "after": `{"b": 100, "a": [1.0, 2]}`})
	if !same.Equal || same.Count != 0 {
		t.Errorf("equal documents: %+v", same)
	}
	root := callOK[jsonDiffOutput](c, "json_diff", map[string]any{"before": `[1]`, "after": `{"a": 1}`})
	if root.Count != 1 || root.Differences[0].Path != "$" || root.Differences[0].Change != "changed" {
		t.Errorf("type change at the root: %+v", root)
	}
	c.callErr("json_diff", map[string]any{"before": `{}`, "after": `{`}, "after is not valid JSON")
}
