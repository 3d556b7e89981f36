package upstream

import (
	"bytes"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Schemas are kept as compact JSON text (json.RawMessage), not as the
// map[string]any the SDK client decodes them into: a catalog of thousands of
// tools spent most of its memory on those maps, while the gateway only
// passes schemas on and reads a few top-level fields. mcp.Tool.InputSchema
// is `any`, and the SDK sends a json.RawMessage there as it is.
//
// The text is what encoding the map would give (sorted keys, no HTML
// escaping, as the SDK writes messages), so a tool reads the same on the
// wire whether its list came from the server or from the cache. A list's
// schemas share one array (see packer): thousands of small texts would each
// round up to an allocation size and be one more object for the collector.

// rawSchemas turns every tool's schemas into compact JSON text, in place.
// A schema that cannot be encoded is left as it is; the exposition reports
// it.
func rawSchemas(tools []*mcp.Tool) {
	var p packer
	for _, t := range tools {
		p.addValue(t.InputSchema)
		p.addValue(t.OutputSchema)
	}
	texts := p.texts()
	for i, t := range tools {
		if in := texts[2*i]; in != nil {
			t.InputSchema = in
		}
		if out := texts[2*i+1]; out != nil {
			t.OutputSchema = out
		}
	}
}

// packer packs JSON texts, compacted, into one array.
type packer struct {
	buf  bytes.Buffer
	ends []int // by text: its end in buf, or -1 for none
}

// addRaw adds raw, compacted (or as it is, if it is not valid JSON); nil
// adds no text.
func (p *packer) addRaw(raw []byte) {
	if raw == nil {
		p.ends = append(p.ends, -1)
		return
	}
	if err := json.Compact(&p.buf, raw); err != nil {
		p.buf.Write(raw) // Compact leaves buf as it was
	}
	p.ends = append(p.ends, p.buf.Len())
}

// addValid adds raw, which the caller's decoder has already checked is
// valid JSON, compacted in one cheap pass (see appendCompactValid); nil
// adds no text.
func (p *packer) addValid(raw []byte) {
	if raw == nil {
		p.ends = append(p.ends, -1)
		return
	}
	p.buf.Grow(len(raw))
	b := appendCompactValid(p.buf.AvailableBuffer(), raw)
	p.buf.Write(b)
	p.ends = append(p.ends, p.buf.Len())
}

// appendCompactValid appends src to dst without the whitespace outside its
// strings: what json.Compact gives for valid JSON, without Compact's
// validating state machine, which a cached start would otherwise run over
// every schema a second time. src must be valid JSON.
func appendCompactValid(dst, src []byte) []byte {
	inString, escaped := false, false
	start := 0 // of the run of src not yet copied
	for i, c := range src {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			dst = append(dst, src[start:i]...)
			start = i + 1
		}
	}
	return append(dst, src[start:]...)
}

// addValue adds v encoded as the SDK would send it; nil, and a value that
// cannot be encoded, add no text.
func (p *packer) addValue(v any) {
	switch v := v.(type) {
	case nil:
		p.ends = append(p.ends, -1)
		return
	case json.RawMessage:
		p.addRaw(v)
		return
	}
	start := p.buf.Len()
	enc := json.NewEncoder(&p.buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		p.buf.Truncate(start)
		p.ends = append(p.ends, -1)
		return
	}
	p.buf.Truncate(p.buf.Len() - 1) // Encode's newline
	p.ends = append(p.ends, p.buf.Len())
}

// texts returns the texts added, in order, nil where none was; they share
// an array of their total length, each with no room to grow into the next.
func (p *packer) texts() []json.RawMessage {
	arena := p.buf.Bytes()
	if cap(arena) > len(arena)+len(arena)/16 {
		arena = bytes.Clone(arena)
	}
	out := make([]json.RawMessage, len(p.ends))
	start := 0
	for i, end := range p.ends {
		if end < 0 {
			continue
		}
		out[i] = arena[start:end:end]
		start = end
	}
	return out
}
