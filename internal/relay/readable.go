package relay

import (
	"bytes"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/rawcall"
)

// readable says why a client cannot decode the JSON object res as a
// CallToolResult, or nil if it can, as the typed path's source decodes its server's answer:
// valid JSON can still hold content of no known type, an isError that is
// not a boolean, or data that is not base64, which the typed path refuses
// and a client could not read.
//
// A walk that decodes nothing accepts the shapes the SDK surely decodes
// (text, image, audio and plain resource links, with string fields); for
// anything else the SDK's own decoding decides, so the byte path refuses
// exactly what the typed path refuses and pays for a decode only where a
// result is unusual.
func readable(res []byte) error {
	if plainResult(res) {
		return nil
	}
	var r mcp.CallToolResult
	return json.Unmarshal(res, &r)
}

// plainResult is the walk: true only for a result the SDK surely decodes.
func plainResult(res []byte) bool {
	plain := true
	err := rawcall.Members(res, func(k, v []byte) bool {
		switch string(k) {
		case "content":
			plain = isNullValue(v) || plainContents(v)
		case "structuredContent":
			// Any JSON decodes into its any.
		case "isError":
			plain = string(v) == "true" || string(v) == "false" || isNullValue(v)
		case "_meta":
			plain = isNullValue(v) || v[0] == '{'
		default:
			// A key the walk does not know, or one encoding/json would
			// also read as a known one ("Content", an escaped key).
			plain = false
		}
		return plain
	})
	return err == nil && plain
}

// plainContents walks a content array whose every element is plain.
func plainContents(v []byte) bool {
	if v[0] != '[' {
		return false // a single object, which the SDK also takes: it decides
	}
	plain := true
	err := rawcall.Elements(v, func(elem []byte) bool {
		plain = plainContent(elem)
		return plain
	})
	return err == nil && plain
}

// plainContent reports whether one content element is an object of a
// plain kind with plain members.
func plainContent(elem []byte) bool {
	plain, typed := true, false
	err := rawcall.Members(elem, func(k, v []byte) bool {
		switch string(k) {
		case "type":
			switch string(v) {
			case `"text"`, `"image"`, `"audio"`, `"resource_link"`:
				typed = true
			default:
				plain = false
			}
		case "text", "mimeType", "uri", "name", "title", "description":
			// The walk found where the value ends, so it is a whole JSON
			// value: any JSON string decodes into a Go string.
			plain = v[0] == '"' || isNullValue(v)
		case "data":
			plain = isNullValue(v) || isBase64String(v)
		case "_meta":
			plain = isNullValue(v) || v[0] == '{'
		default:
			plain = false
		}
		return plain
	})
	return err == nil && plain && typed
}

// isNullValue reports whether a member's value is null.
func isNullValue(v []byte) bool { return string(v) == "null" }

// isBase64String reports whether v, a whole JSON value, is a string of
// padded standard base64 without escapes (the alphabet has no backslash): what encoding/json decodes into a []byte. It
// may say false of text the decoder takes; then the decoder decides.
func isBase64String(v []byte) bool {
	if len(v) < 2 || v[0] != '"' {
		return false
	}
	s := v[1 : len(v)-1] // the walk found the closing quote
	if len(s)%4 != 0 {
		return false
	}
	pad := 0
	switch {
	case bytes.HasSuffix(s, []byte("==")):
		pad = 2
	case bytes.HasSuffix(s, []byte("=")):
		pad = 1
	}
	for _, c := range s[:len(s)-pad] {
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '+', c == '/':
		default:
			return false
		}
	}
	return true
}
