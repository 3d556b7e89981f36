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
	if len(out) <= MaxNameLen {
		return out
	}
	sum := sha256.Sum256([]byte(name))
	return out[:MaxNameLen-hashLen-1] + "_" + hex.EncodeToString(sum[:])[:hashLen]
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
