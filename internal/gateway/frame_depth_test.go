package gateway

import (
	"strings"
	"testing"
)

// TestCheckFrameBoundsNesting: a message nested up to maxFrameDepth is
// screened as usual; one level more is refused with a message that says
// how deep, and brackets inside strings do not count.
func TestCheckFrameBoundsNesting(t *testing.T) {
	nested := func(depth int) string {
		// The request, params and arguments are three levels.
		inner := strings.Repeat("[", depth-3) + strings.Repeat("]", depth-3)
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":` + inner + `}}}`
	}
	for _, tc := range []struct {
		name    string
		line    string
		refused bool
	}{
		{"at the bound", nested(maxFrameDepth), false},
		{"one over", nested(maxFrameDepth + 1), true},
		{"brackets in a string", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"s":"` + strings.Repeat("[{", maxFrameDepth) + `"}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ferr := checkFrame([]byte(tc.line))
			refusedDeep := ferr != nil && strings.Contains(ferr.message, "deep")
			if refusedDeep != tc.refused {
				t.Fatalf("refused for depth: %v, want %v (error %v)", refusedDeep, tc.refused, ferr)
			}
		})
	}
}
