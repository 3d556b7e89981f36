package tokens

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

// Encoding names the tokenizer every count in this package uses.
const Encoding = "o200k_base"

// sharedCodec is built lazily: constructing the o200k vocabulary costs tens
// of milliseconds and megabytes, which a process that never counts tokens
// should not pay. After the first call it is read-only.
var sharedCodec = sync.OnceValues(func() (tokenizer.Codec, error) {
	return tokenizer.Get(tokenizer.O200kBase)
})

// Count returns the number of o200k_base tokens in text. Special-token
// markers such as "<|endoftext|>" are counted as ordinary text, which is what
// they are when they appear inside a tool description.
func Count(text string) int {
	codec, err := sharedCodec()
	if err != nil {
		// The vocabulary is compiled in; failure here is a build defect,
		// not a runtime condition a caller could handle.
		panic(fmt.Sprintf("tokens: o200k_base codec unavailable: %v", err))
	}
	n, err := codec.Count(text)
	if err != nil {
		// Count only fails in the codec's strict UTF-8 mode, which we
		// never enable; keep the invariant loud rather than silently 0.
		panic(fmt.Sprintf("tokens: counting failed: %v", err))
	}
	return n
}

// ToolsCost returns the tokens a tools/list result carrying tools costs: the
// o200k count of the compact JSON {"tools":[...]}, written as JavaScript's
// JSON.stringify writes it.
//
// tools may be raw JSON of the array (json.RawMessage, []byte or string),
// whose key order is then preserved, or any value encoding/json can marshal
// to an array (for example []*mcp.Tool or []map[string]any), whose key order
// is then the one encoding/json produces. A value that is not an array is an
// error.
func ToolsCost(tools any) (int, error) {
	raw, err := rawJSON(tools)
	if err != nil {
		return 0, err
	}
	if first := firstNonSpace(raw); first != '[' {
		return 0, fmt.Errorf("tokens: tools must be a JSON array, got %s", describeStart(first))
	}
	var out bytes.Buffer
	out.Grow(len(raw) + 16)
	out.WriteString(`{"tools":`)
	if err := writeJSCompact(&out, raw); err != nil {
		return 0, fmt.Errorf("tokens: tools are not valid JSON: %w", err)
	}
	out.WriteByte('}')
	return Count(out.String()), nil
}

// JSONCost returns the tokens of any JSON value written compactly as
// JavaScript's JSON.stringify writes it. Use it for one tool definition or a
// meta-tool result; v follows the same rules as ToolsCost's argument.
func JSONCost(v any) (int, error) {
	raw, err := rawJSON(v)
	if err != nil {
		return 0, err
	}
	compact, err := CompactJSON(raw)
	if err != nil {
		return 0, err
	}
	return Count(compact), nil
}

// CompactJSON rewrites raw JSON the way JavaScript's JSON.stringify(JSON.parse(raw))
// would: no insignificant white space, object keys in their original order,
// strings with only the escapes JavaScript emits, numbers in JavaScript's
// shortest form.
func CompactJSON(raw []byte) (string, error) {
	var out bytes.Buffer
	out.Grow(len(raw))
	if err := writeJSCompact(&out, raw); err != nil {
		return "", fmt.Errorf("tokens: invalid JSON: %w", err)
	}
	return out.String(), nil
}

// rawJSON turns the accepted argument forms into JSON bytes.
func rawJSON(v any) ([]byte, error) {
	switch x := v.(type) {
	case json.RawMessage:
		return x, nil
	case []byte:
		return x, nil
	case string:
		return []byte(x), nil
	case nil:
		return nil, fmt.Errorf("tokens: nil value")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// JSON.stringify does not escape <, > and &; neither may we, or
	// descriptions containing them would cost more tokens than they do.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("tokens: cannot encode %T as JSON: %w", v, err)
	}
	return buf.Bytes(), nil
}

func firstNonSpace(b []byte) byte {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c
	}
	return 0
}

func describeStart(c byte) string {
	switch c {
	case 0:
		return "nothing"
	case '{':
		return "an object"
	case '"':
		return "a string"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}
