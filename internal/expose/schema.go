package expose

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	fastjson "github.com/segmentio/encoding/json"
)

// schemaInfo is a tool's input schema as exposition keeps it: the JSON
// text only. Its properties are read from the text when a view needs them
// (an error hint, a signature, a grouped tool), and not kept: a catalog of
// thousands of tools would otherwise hold every schema twice, once as
// generic maps.
type schemaInfo struct {
	raw json.RawMessage // the schema as sent on the wire, an object schema
}

// property is one input parameter: its name and its schema's JSON text.
type property struct {
	name string
	raw  json.RawMessage
}

// brief is what a one-line summary of a parameter reads from its schema,
// decoded without building the rest of it.
type brief struct {
	Type        any             `json:"type"`
	Items       json.RawMessage `json:"items"`
	Enum        any             `json:"enum"`
	Description any             `json:"description"`
}

// brief decodes the summary fields of the property's schema; a schema that
// is not an object (a boolean schema, "x": true, is legal) means anything.
func (p property) brief() brief {
	var b brief
	if isObject(p.raw) {
		// One pass (encoding/json checks the text, then decodes it): the
		// search index reads every parameter of every tool this way.
		_ = fastjson.Unmarshal(p.raw, &b)
	}
	return b
}

func (b brief) description() string {
	d, _ := b.Description.(string)
	return d
}

// schema decodes the property's whole schema, for merging parameters.
func (p property) schema() map[string]any {
	var m map[string]any
	if isObject(p.raw) {
		_ = json.Unmarshal(p.raw, &m)
	}
	if m == nil {
		m = map[string]any{}
	}
	return m
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	return len(raw) > 0 && raw[0] == '{'
}

// readSchema normalises any of the shapes an input schema arrives in (raw
// JSON from an upstream, a map, a typed schema from the Go library) to JSON
// text, and checks what exposition relies on: an object schema whose
// properties, if any, are an object and whose required is a list of names.
// JSON text is kept as it is (shared, not copied).
func readSchema(s any) (*schemaInfo, error) {
	raw, err := toRaw(s)
	if err != nil {
		return nil, err
	}
	if string(bytes.TrimSpace(raw)) == "null" {
		// An upstream's "inputSchema": null, kept as its text: no schema,
		// as nil is.
		raw = json.RawMessage(`{"type":"object"}`)
	}
	info := &schemaInfo{raw: raw}
	top, ok := readTop(raw)
	if !ok {
		// The slow way, for what the quick one does not take: the
		// decoder's error names the problem.
		if err := json.Unmarshal(raw, &top); err != nil {
			return nil, fmt.Errorf("input schema is not a JSON object: %w", err)
		}
	}
	switch top.Type {
	case "object":
	case nil:
		// Some servers leave "type" out; clients (and the Go SDK) insist on
		// an object schema, and arguments are an object anyway.
		info.raw = append(json.RawMessage(`{"type":"object",`), bytes.TrimPrefix(bytes.TrimSpace(raw), []byte("{"))...)
		if string(bytes.TrimSpace(raw)) == "{}" {
			info.raw = json.RawMessage(`{"type":"object"}`)
		}
	default:
		return nil, fmt.Errorf("input schema has type %v, but tool arguments are always an object", top.Type)
	}
	if top.Properties != 0 && top.Properties != 'n' && top.Properties != '{' {
		return nil, fmt.Errorf("input schema properties: expected a JSON object")
	}
	return info, nil
}

// topLevel is what readSchema checks of a schema.
type topLevel struct {
	Type       any       `json:"type"`
	Properties firstByte `json:"properties"`
	Required   []string  `json:"required"`
}

// readTop reads a schema's top level as json.Unmarshal into a topLevel
// would, in one scan of the text and without decoding the properties:
// readSchema runs for every tool of the catalog on every build. It gives
// up (false) on anything but a valid object whose "type" and "required"
// decode, leaving the error to the decoder.
func readTop(raw []byte) (topLevel, bool) {
	var top topLevel
	if !isObject(raw) || !json.Valid(raw) {
		return top, false
	}
	var typ, req []byte
	_ = eachMember(raw, func(key, val []byte) {
		switch {
		case keyIs(key, "type"):
			typ = val
		case keyIs(key, "properties"):
			top.Properties = firstByte(val[0])
		case keyIs(key, "required"):
			req = val
		}
	})
	if typ != nil {
		if typ[0] == '"' {
			s, err := unquote(typ)
			if err != nil {
				return top, false
			}
			top.Type = s
		} else if json.Unmarshal(typ, &top.Type) != nil {
			return top, false
		}
	}
	if req != nil && json.Unmarshal(req, &top.Required) != nil {
		return top, false
	}
	return top, true
}

// firstByte records the first byte of a JSON value ('{' for an object, 'n'
// for null) without keeping or copying the value.
type firstByte byte

func (f *firstByte) UnmarshalJSON(b []byte) error {
	*f = firstByte(b[0])
	return nil
}

// properties reads the schema's properties in their declared order, so
// grouped tools list parameters the way their authors wrote them, and its
// required names. readSchema checked the shape; a schema that fails here
// anyway reads as having no properties.
func (s *schemaInfo) properties() ([]property, []string) {
	var top struct {
		Properties textRef  `json:"properties"`
		Required   []string `json:"required"`
	}
	if err := fastjson.Unmarshal(s.raw, &top); err != nil {
		return nil, nil
	}
	if len(top.Properties) == 0 || string(top.Properties) == "null" {
		return nil, top.Required
	}
	props, err := objectMembers(top.Properties)
	if err != nil {
		return nil, top.Required
	}
	return props, top.Required
}

// textRef is a JSON value's text inside the schema it was decoded from,
// not a copy: the schema text outlives every use of it.
type textRef []byte

func (t *textRef) UnmarshalJSON(b []byte) error {
	*t = b
	return nil
}

func toRaw(s any) (json.RawMessage, error) {
	switch v := s.(type) {
	case nil:
		return json.RawMessage(`{"type":"object"}`), nil
	case json.RawMessage:
		return v, nil
	case []byte:
		return json.RawMessage(v), nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("input schema cannot be encoded as JSON: %w", err)
	}
	return b, nil
}

// objectMembers lists the members of a JSON object in document order,
// each value's text a slice of obj. obj must be valid JSON (properties
// takes it from a schema that decoded); what is not an object is an error.
// It runs for every tool when the search index is built, so it walks the
// text instead of decoding tokens.
func objectMembers(obj []byte) ([]property, error) {
	bad := errNotObject
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil, bad
	}
	var out []property
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return out, nil
	}
	for i < len(obj) && obj[i] == '"' {
		end := valueEnd(obj, i)
		name, err := unquote(obj[i:end])
		if err != nil {
			return nil, err
		}
		i = skipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return nil, bad
		}
		i = skipSpace(obj, i+1)
		end = valueEnd(obj, i)
		if end <= i {
			return nil, bad
		}
		out = append(out, property{name: name, raw: obj[i:end:end]})
		i = skipSpace(obj, end)
		if i < len(obj) && obj[i] == '}' {
			return out, nil
		}
		if i >= len(obj) || obj[i] != ',' {
			return nil, bad
		}
		i = skipSpace(obj, i+1)
	}
	return nil, bad
}

// errNotObject is made once: objectMembers runs for every tool, and most
// calls never fail.
var errNotObject = errors.New("expected a JSON object")

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// valueEnd is the index just past the JSON value that starts at b[i].
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return len(b)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = valueEnd(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) && strings.IndexByte(",}] \t\r\n", b[j]) < 0 {
		j++
	}
	return j
}

// unquote reads a JSON string's text; most names have no escapes.
func unquote(q []byte) (string, error) {
	if len(q) >= 2 && bytes.IndexByte(q, '\\') < 0 {
		return string(q[1 : len(q)-1]), nil
	}
	var s string
	err := json.Unmarshal(q, &s)
	return s, err
}

// paramSummary renders a tool's parameters for an error message:
// "title (string, required): Issue title; body (string)".
func (s *schemaInfo) paramSummary() string {
	props, required := s.properties()
	if len(props) == 0 {
		return "no parameters"
	}
	var parts []string
	for _, p := range props {
		b := p.brief()
		var attrs []string
		if t := typeOf(b); t != "" {
			attrs = append(attrs, t)
		}
		if slices.Contains(required, p.name) {
			attrs = append(attrs, "required")
		}
		part := p.name
		if len(attrs) > 0 {
			part += " (" + strings.Join(attrs, ", ") + ")"
		}
		if d := b.description(); d != "" {
			part += ": " + firstSentence(d, 80)
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, "; ")
}

func typeOf(b brief) string {
	switch t := b.Type.(type) {
	case string:
		if t == "array" && isObject(b.Items) {
			var items brief
			if fastjson.Unmarshal(b.Items, &items) == nil {
				if it := typeOf(items); it != "" {
					return "array of " + it
				}
			}
		}
		if enum, ok := b.Enum.([]any); ok && len(enum) > 0 {
			vals := make([]string, 0, len(enum))
			for _, e := range enum {
				vals = append(vals, enumText(e))
			}
			return "one of " + strings.Join(vals, "|")
		}
		return t
	case []any:
		var ts []string
		for _, e := range t {
			ts = append(ts, fmt.Sprint(e))
		}
		return strings.Join(ts, " or ")
	}
	return ""
}

// firstSentence cuts prose to its first sentence (see sentenceEnd) or line,
// at most max bytes (on a rune boundary), for one-line summaries.
func firstSentence(s string, max int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\n"); i >= 0 {
		s = s[:i]
	}
	if i := sentenceEnd(s); i >= 0 {
		s = s[:i]
	}
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8Start(s[cut]) {
			cut--
		}
		s = strings.TrimSpace(s[:cut]) + "…"
	}
	return s
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// canonical encodes a schema with sorted keys and without its description,
// so that two actions declaring the same parameter compare equal.
func canonical(schema map[string]any) string {
	c := make(map[string]any, len(schema))
	for k, v := range schema {
		if k != "description" {
			c[k] = v
		}
	}
	b, _ := json.Marshal(c)
	return string(b)
}
