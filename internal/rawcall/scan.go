package rawcall

import (
	"errors"
)

// errSyntax is what the scanner reports for anything that is not JSON it
// can walk; the caller then leaves the message to the typed path, whose
// decoder names the problem.
var errSyntax = errors.New("rawcall: malformed JSON")

// maxDepth bounds nesting, so a hostile message cannot make the scanner
// recurse without end (it does not recurse, but counts).
const maxDepth = 10000

// Members calls fn with each member of the JSON object obj, in order: its
// key as it appears between the quotes (escapes left as they are) and its
// value's bytes, untouched. It stops early when fn returns false. It
// decodes nothing and allocates nothing; it returns an error if obj is not
// one JSON object (surrounding white space aside).
func Members(obj []byte, fn func(key, value []byte) bool) error {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return errSyntax
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		if skipSpace(obj, i+1) != len(obj) {
			return errSyntax
		}
		return nil
	}
	for {
		if i >= len(obj) || obj[i] != '"' {
			return errSyntax
		}
		end, err := skipString(obj, i)
		if err != nil {
			return err
		}
		key := obj[i+1 : end-1]
		i = skipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return errSyntax
		}
		i = skipSpace(obj, i+1)
		vend, err := skipValue(obj, i)
		if err != nil {
			return err
		}
		if !fn(key, obj[i:vend]) {
			return nil
		}
		i = skipSpace(obj, vend)
		if i >= len(obj) {
			return errSyntax
		}
		switch obj[i] {
		case ',':
			i = skipSpace(obj, i+1)
		case '}':
			if skipSpace(obj, i+1) != len(obj) {
				return errSyntax
			}
			return nil
		default:
			return errSyntax
		}
	}
}

// Elements calls fn with each element of the JSON array arr, in order, as
// its bytes, untouched. It stops early when fn returns false. Like Members
// it decodes and allocates nothing, and returns an error if arr is not one
// JSON array (surrounding white space aside).
func Elements(arr []byte, fn func(value []byte) bool) error {
	i := skipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return errSyntax
	}
	i = skipSpace(arr, i+1)
	if i < len(arr) && arr[i] == ']' {
		if skipSpace(arr, i+1) != len(arr) {
			return errSyntax
		}
		return nil
	}
	for {
		vend, err := skipValue(arr, i)
		if err != nil {
			return err
		}
		if !fn(arr[i:vend]) {
			return nil
		}
		i = skipSpace(arr, vend)
		if i >= len(arr) {
			return errSyntax
		}
		switch arr[i] {
		case ',':
			i = skipSpace(arr, i+1)
		case ']':
			if skipSpace(arr, i+1) != len(arr) {
				return errSyntax
			}
			return nil
		default:
			return errSyntax
		}
	}
}

// Head calls fn with the members of the JSON object obj in order, as
// Members does, until it meets one whose key stop accepts: it returns that
// key (as Members gives keys) without walking its value or anything after
// it. It is for reading the head of a message (its "id") when a large
// value follows (a 29 MB "result"). With no such key it walks obj whole
// and returns nil; its error is Members'.
func Head(obj []byte, stop func(key []byte) bool, fn func(key, value []byte)) ([]byte, error) {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil, errSyntax
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return nil, nil
	}
	for {
		if i >= len(obj) || obj[i] != '"' {
			return nil, errSyntax
		}
		end, err := skipString(obj, i)
		if err != nil {
			return nil, err
		}
		key := obj[i+1 : end-1]
		if stop(key) {
			return key, nil
		}
		i = skipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return nil, errSyntax
		}
		i = skipSpace(obj, i+1)
		vend, err := skipValue(obj, i)
		if err != nil {
			return nil, err
		}
		fn(key, obj[i:vend])
		i = skipSpace(obj, vend)
		if i >= len(obj) {
			return nil, errSyntax
		}
		switch obj[i] {
		case ',':
			i = skipSpace(obj, i+1)
		case '}':
			return nil, nil
		default:
			return nil, errSyntax
		}
	}
}

// Member returns the value of the first member named key (compared with
// the key as written, escapes and all), or nil.
func Member(obj []byte, key string) []byte {
	var out []byte
	_ = Members(obj, func(k, v []byte) bool {
		if string(k) == key {
			out = v
			return false
		}
		return true
	})
	return out
}

// String returns the content of a JSON string value without escapes, and
// whether it is one; a string with escapes is reported as not one, which
// sends its message to the typed path.
func String(v []byte) (string, bool) {
	inner, ok := Unquote(v)
	return string(inner), ok
}

// Unquote is String without the copy: the content of v, which it shares.
func Unquote(v []byte) ([]byte, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return nil, false
	}
	inner := v[1 : len(v)-1]
	for _, c := range inner {
		if c == '\\' || c == '"' || c < 0x20 {
			return nil, false
		}
	}
	return inner, true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index just past the string starting at b[i] == '"'.
func skipString(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '\\':
			j++ // the escaped byte; \uXXXX's digits are plain bytes
		case c == '"':
			return j + 1, nil
		case c < 0x20:
			return 0, errSyntax
		}
	}
	return 0, errSyntax
}

// skipValue returns the index just past the value starting at b[i]. Nested
// values are walked with a depth count, not recursion; their members are
// checked only as far as finding where they end needs.
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errSyntax
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '{' || c == '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, err := skipString(b, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
				if depth > maxDepth {
					return 0, errSyntax
				}
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errSyntax
	case c == 't' || c == 'f' || c == 'n' || c == '-' || (c >= '0' && c <= '9'):
		j := i
		for j < len(b) {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				if j == i {
					return 0, errSyntax
				}
				return j, nil
			}
			j++
		}
		return j, nil
	}
	return 0, errSyntax
}
