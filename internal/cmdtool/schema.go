package cmdtool

import (
	"bytes"
	"encoding/json"
)

// InputSchema returns the JSON Schema of the action's arguments: an object
// with one property per parameter (in declared order), "required", and
// "additionalProperties": false. Keys are written in a fixed order so the
// same action always yields the same bytes (golden tests, stable token
// counts, cache keys).
//
// Patterns are emitted anchored ("^(?:p)$"), because JSON Schema patterns
// are unanchored searches while BuildArgv requires the whole value to
// match; clients that validate then agree with BuildArgv.
func (a Action) InputSchema() json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	for i, prm := range a.Params {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSONString(&b, prm.Name)
		b.WriteByte(':')
		prm.writeSchema(&b)
	}
	b.WriteByte('}')
	if len(a.Required) > 0 {
		b.WriteString(`,"required":`)
		writeJSON(&b, a.Required)
	}
	b.WriteString(`,"additionalProperties":false}`)
	return json.RawMessage(b.Bytes())
}

func (prm Param) writeSchema(b *bytes.Buffer) {
	typ := prm.typeOrDefault()
	b.WriteString(`{"type":`)
	writeJSONString(b, string(typ))
	if prm.Description != "" {
		b.WriteString(`,"description":`)
		writeJSONString(b, prm.Description)
	}
	if typ == TypeArray {
		b.WriteString(`,"items":`)
		writeStringSchema(b, prm.Enum, prm.Pattern)
		return
	}
	if typ == TypeString {
		writeConstraints(b, prm.Enum, prm.Pattern)
	}
	b.WriteByte('}')
}

func writeStringSchema(b *bytes.Buffer, enum []string, pattern string) {
	b.WriteString(`{"type":"string"`)
	writeConstraints(b, enum, pattern)
	b.WriteString(`}}`)
}

func writeConstraints(b *bytes.Buffer, enum []string, pattern string) {
	if len(enum) > 0 {
		b.WriteString(`,"enum":`)
		writeJSON(b, enum)
	}
	if pattern != "" {
		b.WriteString(`,"pattern":`)
		writeJSONString(b, anchorPattern(pattern))
	}
}

func writeJSONString(b *bytes.Buffer, s string) { writeJSON(b, s) }

// writeJSON encodes strings and string slices, which cannot fail.
// HTML escaping is off so "<n>" in a description stays readable.
func writeJSON(b *bytes.Buffer, v any) {
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("cmdtool: encoding strings cannot fail: " + err.Error())
	}
	b.Write(bytes.TrimSuffix(out.Bytes(), []byte("\n")))
}
