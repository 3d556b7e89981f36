package expose

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// ParamText is what the search index reads of one parameter: its name, its
// description (trimmed) and its enum values as text. It is Param without
// the type and the required flag, which search has no use for and which
// cost a second decode of array items.
type ParamText struct {
	Name        string
	Description string
	Enum        []string // a clipped slice of the vals the caller passed
}

// AppendParamTexts appends a flat wire's parameters, in declared order, to
// texts, and their enum values to vals; each ParamText's Enum is a clipped
// slice of vals. Callers index thousands of tools: passing the same two
// slices for every tool turns two allocations per parameter into a few per
// catalog. A grouped wire appends nothing.
//
// It reads the schema text directly, without decoding values it does not
// use, and yields what Params would: encoding/json's rules (keys matched
// case-insensitively, the last duplicate wins, a description that is not a
// string reads as none) and fmt.Sprint's spelling of enum values.
func (w *Wire) AppendParamTexts(texts []ParamText, vals []string) ([]ParamText, []string) {
	if w.check == nil {
		return texts, vals
	}
	props := w.check.info.propertiesText()
	if len(props) == 0 || props[0] != '{' {
		return texts, vals
	}
	_ = eachMember(props, func(key, raw []byte) {
		name, _ := unquote(key)
		var desc, enum []byte
		if isObject(raw) {
			_ = eachMember(raw, func(key, val []byte) {
				switch {
				case keyIs(key, "description"):
					desc = val
				case keyIs(key, "enum"):
					enum = val
				}
			})
		}
		pt := ParamText{Name: name}
		if len(desc) > 0 && desc[0] == '"' {
			d, _ := unquote(desc)
			pt.Description = strings.TrimSpace(d)
		}
		if len(enum) > 0 && enum[0] == '[' {
			start := len(vals)
			vals = appendEnumTexts(vals, enum)
			if len(vals) > start {
				pt.Enum = vals[start:len(vals):len(vals)]
			}
		}
		texts = append(texts, pt)
	})
	return texts, vals
}

// propertiesText is the text of the schema's "properties" member, nil
// when it has none: what properties reads, without decoding "required".
func (s *schemaInfo) propertiesText() []byte {
	var props []byte
	_ = eachMember(s.raw, func(key, val []byte) {
		if keyIs(key, "properties") {
			props = val
		}
	})
	return props
}

// keyIs matches a member's quoted key against a field name the way
// encoding/json does (case-insensitively).
func keyIs(quoted []byte, name string) bool {
	if len(quoted) < 2 {
		return false
	}
	inner := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return bytes.EqualFold(inner, []byte(name))
	}
	s, err := unquote(quoted)
	return err == nil && strings.EqualFold(s, name)
}

// eachMember calls fn with each member of a JSON object, its key quoted,
// both slices of obj. obj must be valid JSON.
func eachMember(obj []byte, fn func(key, val []byte)) error {
	bad := errNotObject
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return bad
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return nil
	}
	for i < len(obj) && obj[i] == '"' {
		kend := valueEnd(obj, i)
		key := obj[i:kend]
		i = skipSpace(obj, kend)
		if i >= len(obj) || obj[i] != ':' {
			return bad
		}
		i = skipSpace(obj, i+1)
		end := valueEnd(obj, i)
		if end <= i {
			return bad
		}
		fn(key, obj[i:end])
		i = skipSpace(obj, end)
		if i < len(obj) && obj[i] == '}' {
			return nil
		}
		if i >= len(obj) || obj[i] != ',' {
			return bad
		}
		i = skipSpace(obj, i+1)
	}
	return bad
}

// appendEnumTexts appends the text of each element of a JSON array as
// fmt.Sprint spells the value encoding/json decodes it to.
func appendEnumTexts(vals []string, arr []byte) []string {
	i := skipSpace(arr, 1)
	for i < len(arr) && arr[i] != ']' {
		end := valueEnd(arr, i)
		if end <= i {
			return vals
		}
		vals = append(vals, valueText(arr[i:end]))
		i = skipSpace(arr, end)
		if i < len(arr) && arr[i] == ',' {
			i = skipSpace(arr, i+1)
		}
	}
	return vals
}

// valueText spells one JSON value as fmt.Sprint spells its decoded form:
// a string as itself, a number as a float64, null as "<nil>". Objects and
// arrays, rare in enums, go through the decoder.
func valueText(v []byte) string {
	switch v[0] {
	case '"':
		s, _ := unquote(v)
		return s
	case 't', 'f':
		return string(v) // "true" or "false"
	case 'n':
		return "<nil>"
	case '{', '[':
		var x any
		_ = json.Unmarshal(v, &x)
		return fmt.Sprint(x)
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		return string(v)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// enumText spells a decoded enum value as fmt.Sprint does, without
// fmt's reflection for the kinds JSON decodes to.
func enumText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case nil:
		return "<nil>"
	}
	return fmt.Sprint(v)
}
