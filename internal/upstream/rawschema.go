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
// wire whether its list came from the server or from the cache.

// rawSchemas turns every tool's schemas into compact JSON text, in place.
// A schema that cannot be encoded is left as it is; the exposition reports
// it.
func rawSchemas(tools []*mcp.Tool) {
	for _, t := range tools {
		t.InputSchema = rawSchema(t.InputSchema)
		t.OutputSchema = rawSchema(t.OutputSchema)
	}
}

func rawSchema(s any) any {
	switch v := s.(type) {
	case nil:
		return nil
	case json.RawMessage:
		return compactJSON(v)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return s
	}
	return json.RawMessage(bytes.Clone(bytes.TrimSuffix(b.Bytes(), []byte("\n"))))
}

// compactJSON returns raw without insignificant white space, in a slice of
// its own length (a cache file is indented, and an Unmarshal'd RawMessage
// may share a larger array's capacity). Invalid JSON is returned as it is.
func compactJSON(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.Grow(len(raw))
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	if b.Len() == len(raw) && cap(raw) == len(raw) {
		return raw
	}
	return json.RawMessage(bytes.Clone(b.Bytes()))
}
