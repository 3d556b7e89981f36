// Package jsondepth bounds how deeply JSON text nests, in one cheap pass,
// before a decoder that recurses without a bound reads it: text nested
// millions deep would overflow the decoder's stack, which ends the process
// rather than failing the one read.
package jsondepth

// Max is how deep encoding/json lets a value nest; text that passes
// [Within] at Max decodes wherever encoding/json would.
const Max = 10000

// Within reports whether the JSON text data nests objects and arrays at
// most max deep. It only tracks brackets outside strings: the decoder
// checks everything else.
func Within(data []byte, max int) bool {
	depth, inString, escaped := 0, false, false
	for _, c := range data {
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
		case c == '{' || c == '[':
			if depth++; depth > max {
				return false
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return true
}
