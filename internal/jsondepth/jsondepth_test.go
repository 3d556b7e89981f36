package jsondepth

import (
	"strings"
	"testing"
)

func TestWithin(t *testing.T) {
	for _, c := range []struct {
		name string
		text string
		max  int
		want bool
	}{
		{"flat", `{"a":1}`, 1, true},
		{"at the bound", `{"a":[{"b":2}]}`, 3, true},
		{"past the bound", `{"a":[{"b":2}]}`, 2, false},
		{"brackets in strings do not count", `{"a":"[[[[{{{{"}`, 1, true},
		{"an escaped quote keeps the string open", `{"a":"\"[[[["}`, 1, true},
		{"deep arrays", strings.Repeat("[", 50) + strings.Repeat("]", 50), 49, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Within([]byte(c.text), c.max); got != c.want {
				t.Errorf("Within(%s, %d) = %v, want %v", c.text, c.max, got, c.want)
			}
		})
	}
}
