package assemble

import (
	"maps"
	"slices"
	"testing"
)

// TestRoutesForgetOneServersList checks that a server's list change drops
// exactly its own routes of that kind, so the next get or read lists again
// instead of following a route the change may have ended.
func TestRoutesForgetOneServersList(t *testing.T) {
	for _, tc := range []struct {
		name                                string
		prompts, resources                  bool
		wantPrompts, wantURIs, wantTemplate []string
	}{
		{"prompts", true, false, []string{"b__p"}, []string{"a://r", "b://r"}, []string{"a://{x}", "b://{x}"}},
		{"resources", false, true, []string{"a__p", "b__p"}, []string{"b://r"}, []string{"b://{x}"}},
		{"both", true, true, []string{"b__p"}, []string{"b://r"}, []string{"b://{x}"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r routes
			r.set(func() {
				r.prompts["a__p"] = promptRoute{"a", "p"}
				r.prompts["b__p"] = promptRoute{"b", "p"}
				r.resources["a://r"], r.resources["b://r"] = "a", "b"
				r.templates["a://{x}"], r.templates["b://{x}"] = "a", "b"
			})
			r.forget("a", tc.prompts, tc.resources)
			for what, got := range map[string][]string{
				"prompts":   slices.Sorted(maps.Keys(r.prompts)),
				"resources": slices.Sorted(maps.Keys(r.resources)),
				"templates": slices.Sorted(maps.Keys(r.templates)),
			} {
				want := map[string][]string{"prompts": tc.wantPrompts, "resources": tc.wantURIs, "templates": tc.wantTemplate}[what]
				if !slices.Equal(got, want) {
					t.Errorf("%s: %v, want %v", what, got, want)
				}
			}
		})
	}
}
