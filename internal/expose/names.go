package expose

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// MaxNameLen is the longest wire name clients accept.
const MaxNameLen = 64

// hashLen is how many hex digits of the hash a shortened name keeps: 32 bits
// make an accidental collision between two long names of one catalog
// vanishingly unlikely, and collisions are refused at build time anyway.
const hashLen = 8

// WireName turns a catalog name into a valid wire name
// (^[A-Za-z0-9_-]{1,64}$). Characters outside that set become "_"; a name
// longer than 64 characters keeps its first 55 and ends in "_" and a hash of
// the whole original name, so the result is stable across runs and distinct
// for distinct long names. An empty name becomes "_".
func WireName(name string) string {
	if ValidWireName(name) {
		// Most names are valid already: share the catalog's string
		// rather than copy it, once per tool.
		return name
	}
	var b strings.Builder
	b.Grow(len(name))
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' {
			b.WriteByte(c)
		} else {
			b.WriteByte('_')
		}
	}
	out := b.String()
	if out == "" {
		return "_"
	}
	// Names shortened before Shorten existed keep their form: the cut is
	// not trimmed of a trailing "_".
	return shorten(out, name, MaxNameLen, "_", false)
}

// Shorten fits name into max bytes (at least 10) for a naming rule that
// allows sep: a longer name keeps as much of its start as fits, less any
// trailing sep, then sep and 8 hex digits of the SHA-256 of key (the name
// as configured), so the result is stable across runs and two long names
// that differ only past the cut stay distinct. A name that fits is returned
// as it is. name must already hold only characters the rule allows;
// WireName uses it for tool and group names on the wire, and the groups
// extension's names (a-z, 0-9 and single "-") can use it with sep "-".
func Shorten(name, key string, max int, sep string) string {
	return shorten(name, key, max, sep, true)
}

func shorten(name, key string, max int, sep string, trim bool) string {
	if len(name) <= max {
		return name
	}
	sum := sha256.Sum256([]byte(key))
	cut := name[:max-hashLen-len(sep)]
	if trim {
		cut = strings.TrimRight(cut, sep)
	}
	return cut + sep + hex.EncodeToString(sum[:])[:hashLen]
}

// ValidWireName reports whether s may be sent as a tool name.
func ValidWireName(s string) bool {
	if len(s) == 0 || len(s) > MaxNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
