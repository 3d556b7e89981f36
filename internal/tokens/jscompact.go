package tokens

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// writeJSCompact writes raw (which must be one valid JSON value) to out as
// JSON.stringify(JSON.parse(raw)) would. It walks the bytes instead of
// decoding into Go maps so that object key order survives, which matters:
// the token count of {"a":1,"b":2} and {"b":2,"a":1} can differ.
//
// Known divergence from JavaScript: an object with a duplicated key keeps
// both members here, where JSON.parse keeps only the last value. Tool
// definitions with duplicate keys are malformed anyway.
func writeJSCompact(out *bytes.Buffer, raw []byte) error {
	if !json.Valid(raw) {
		return errors.New("not a single valid JSON value")
	}
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '"':
			end := stringEnd(raw, i)
			writeJSString(out, decodeJSONString(raw[i+1:end-1]))
			i = end
		case c == '-' || (c >= '0' && c <= '9'):
			end := i + 1
			for end < len(raw) && isNumberByte(raw[end]) {
				end++
			}
			f, err := strconv.ParseFloat(string(raw[i:end]), 64)
			if err != nil && !errors.Is(err, strconv.ErrRange) {
				return err
			}
			out.WriteString(formatJSNumber(f))
			i = end
		default:
			// Structural characters and the literals true, false, null
			// are already in their only form.
			out.WriteByte(c)
			i++
		}
	}
	return nil
}

func isNumberByte(c byte) bool {
	return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}

// stringEnd returns the index just past the closing quote of the JSON string
// that starts at raw[start] (a quote). raw is known to be valid JSON.
func stringEnd(raw []byte, start int) int {
	for i := start + 1; i < len(raw); i++ {
		switch raw[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(raw)
}

// decodeJSONString decodes the body of a JSON string into UTF-16 code units,
// the representation JavaScript works with; lone surrogates survive this
// way and are escaped on output exactly as JSON.stringify escapes them.
// Invalid UTF-8 bytes become U+FFFD, as Node's UTF-8 decoder makes them.
func decodeJSONString(body []byte) []uint16 {
	units := make([]uint16, 0, len(body))
	for i := 0; i < len(body); {
		c := body[i]
		if c == '\\' && i+1 < len(body) {
			esc := body[i+1]
			i += 2
			switch esc {
			case 'b':
				units = append(units, '\b')
			case 'f':
				units = append(units, '\f')
			case 'n':
				units = append(units, '\n')
			case 'r':
				units = append(units, '\r')
			case 't':
				units = append(units, '\t')
			case 'u':
				v, _ := strconv.ParseUint(string(body[i:i+4]), 16, 16)
				units = append(units, uint16(v))
				i += 4
			default: // '"', '\\', '/'
				units = append(units, uint16(esc))
			}
			continue
		}
		r, size := utf8.DecodeRune(body[i:])
		i += size
		if r >= 0x10000 {
			hi, lo := utf16.EncodeRune(r)
			units = append(units, uint16(hi), uint16(lo))
		} else {
			units = append(units, uint16(r))
		}
	}
	return units
}

// writeJSString writes UTF-16 units as JSON.stringify does: quote,
// backslash and control characters escaped, lone surrogates as \uXXXX
// (lowercase hex), everything else as literal UTF-8.
func writeJSString(out *bytes.Buffer, units []uint16) {
	const hex = "0123456789abcdef"
	out.WriteByte('"')
	for i := 0; i < len(units); i++ {
		u := units[i]
		switch {
		case u == '"':
			out.WriteString(`\"`)
		case u == '\\':
			out.WriteString(`\\`)
		case u == '\b':
			out.WriteString(`\b`)
		case u == '\f':
			out.WriteString(`\f`)
		case u == '\n':
			out.WriteString(`\n`)
		case u == '\r':
			out.WriteString(`\r`)
		case u == '\t':
			out.WriteString(`\t`)
		case u < 0x20:
			out.WriteString(`\u00`)
			out.WriteByte(hex[u>>4])
			out.WriteByte(hex[u&0xf])
		case utf16.IsSurrogate(rune(u)):
			if u < 0xdc00 && i+1 < len(units) && units[i+1] >= 0xdc00 && units[i+1] < 0xe000 {
				out.WriteRune(utf16.DecodeRune(rune(u), rune(units[i+1])))
				i++
				continue
			}
			out.WriteString(`\u`)
			out.WriteByte(hex[u>>12])
			out.WriteByte(hex[(u>>8)&0xf])
			out.WriteByte(hex[(u>>4)&0xf])
			out.WriteByte(hex[u&0xf])
		default:
			out.WriteRune(rune(u))
		}
	}
	out.WriteByte('"')
}

// formatJSNumber formats f as JavaScript's Number.prototype.toString does
// (ECMA-262 Number::toString): shortest round-trip digits, plain notation
// for exponents in [-7, 21), exponent notation "1e+21" / "1e-7" otherwise.
// Infinity (a literal too large for float64) becomes null, as in JavaScript.
func formatJSNumber(f float64) string {
	if f == 0 {
		return "0" // also -0
	}
	if f != f || f > 1.7976931348623157e308 || f < -1.7976931348623157e308 {
		return "null"
	}
	sign := ""
	if f < 0 {
		sign = "-"
		f = -f
	}
	// 'e' with precision -1 gives the shortest digits: d.ddde±XX.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mantissa, expText, _ := strings.Cut(e, "e")
	digits := strings.Replace(mantissa, ".", "", 1)
	exp, _ := strconv.Atoi(expText)
	k := len(digits)
	n := exp + 1 // position of the decimal point relative to the digits
	var s string
	switch {
	case k <= n && n <= 21:
		s = digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		s = digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		s = "0." + strings.Repeat("0", -n) + digits
	default:
		expSign := "+"
		if n-1 < 0 {
			expSign = "-"
		}
		abs := n - 1
		if abs < 0 {
			abs = -abs
		}
		s = digits[:1]
		if k > 1 {
			s += "." + digits[1:]
		}
		s += "e" + expSign + strconv.Itoa(abs)
	}
	return sign + s
}
