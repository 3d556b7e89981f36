package expose

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// schemaInfo is what exposition needs to know about a tool's input schema:
// its properties in their declared order and which are required.
type schemaInfo struct {
	raw      json.RawMessage // the schema as sent on the wire
	props    []property
	required []string
}

type property struct {
	name   string
	schema map[string]any
}

// readSchema normalises any of the shapes an input schema arrives in (raw
// JSON from an upstream, a map, a typed schema from the Go library) and
// reads its properties, keeping their order so grouped tools list
// parameters the way their authors wrote them.
func readSchema(s any) (*schemaInfo, error) {
	raw, err := toRaw(s)
	if err != nil {
		return nil, err
	}
	info := &schemaInfo{raw: raw}
	var top struct {
		Type       any             `json:"type"`
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("input schema is not a JSON object: %w", err)
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
	info.required = top.Required
	if len(top.Properties) == 0 || string(top.Properties) == "null" {
		return info, nil
	}
	names, err := objectKeys(top.Properties)
	if err != nil {
		return nil, fmt.Errorf("input schema properties: %w", err)
	}
	var schemas map[string]map[string]any
	if err := json.Unmarshal(top.Properties, &schemas); err != nil {
		// A property given as a boolean schema ("x": true) is legal; treat
		// it as "anything".
		var loose map[string]any
		if err2 := json.Unmarshal(top.Properties, &loose); err2 != nil {
			return nil, fmt.Errorf("input schema properties: %w", err)
		}
		schemas = map[string]map[string]any{}
		for k, v := range loose {
			if m, ok := v.(map[string]any); ok {
				schemas[k] = m
			} else {
				schemas[k] = map[string]any{}
			}
		}
	}
	for _, n := range names {
		info.props = append(info.props, property{name: n, schema: schemas[n]})
	}
	return info, nil
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

// objectKeys lists the keys of a JSON object in document order.
func objectKeys(obj json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("expected a JSON object")
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// paramSummary renders a tool's parameters for an error message:
// "title (string, required): Issue title; body (string)".
func (s *schemaInfo) paramSummary() string {
	if len(s.props) == 0 {
		return "no parameters"
	}
	var parts []string
	for _, p := range s.props {
		var attrs []string
		if t := typeOf(p.schema); t != "" {
			attrs = append(attrs, t)
		}
		if slices.Contains(s.required, p.name) {
			attrs = append(attrs, "required")
		}
		part := p.name
		if len(attrs) > 0 {
			part += " (" + strings.Join(attrs, ", ") + ")"
		}
		if d, _ := p.schema["description"].(string); d != "" {
			part += ": " + firstSentence(d, 80)
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, "; ")
}

func typeOf(schema map[string]any) string {
	switch t := schema["type"].(type) {
	case string:
		if t == "array" {
			if items, ok := schema["items"].(map[string]any); ok {
				if it := typeOf(items); it != "" {
					return "array of " + it
				}
			}
		}
		if enum, ok := schema["enum"].([]any); ok && len(enum) > 0 {
			vals := make([]string, 0, len(enum))
			for _, e := range enum {
				vals = append(vals, fmt.Sprint(e))
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
