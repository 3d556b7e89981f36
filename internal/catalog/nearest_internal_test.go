package catalog

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// nearestPlain is Nearest as first written: the whole edit distance to
// every candidate. Nearest must agree with it on every input.
func nearestPlain(name string, candidates []string, n int) []string {
	type scored struct {
		s string
		d int
	}
	lower := strings.ToLower(name)
	var out []scored
	for _, c := range candidates {
		lc := strings.ToLower(c)
		if lc == lower {
			out = append(out, scored{c, 0})
			continue
		}
		d := plainDistance(lower, lc)
		limit := max(2, min(len(lower), len(lc))/3)
		if lower != "" && (strings.Contains(lc, lower) || strings.Contains(lower, lc)) {
			d = min(d, 1+abs(len(lc)-len(lower))/4)
		} else if d > limit {
			continue
		}
		out = append(out, scored{c, d})
	}
	slices.SortStableFunc(out, func(a, b scored) int {
		if c := cmp.Compare(a.d, b.d); c != 0 {
			return c
		}
		return cmp.Compare(a.s, b.s)
	})
	var names []string
	for i := 0; i < len(out) && i < n; i++ {
		names = append(names, out[i].s)
	}
	return names
}

func plainDistance(a, b string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// TestNearestAgreesWithThePlainDistance: the cut-offs (length first, then a
// row past the limit) change what Nearest costs, never what it returns.
// Names are drawn from a small alphabet so that near misses are common.
func TestNearestAgreesWithThePlainDistance(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	// Upper case, and a letter outside ASCII, take both ways of
	// lowering a candidate (appendLower).
	letters := []rune("abcdE_É")
	word := func() string {
		b := make([]rune, rng.IntN(14))
		for i := range b {
			b[i] = letters[rng.IntN(len(letters))]
		}
		return string(b)
	}
	for range 3000 {
		cands := make([]string, 40)
		for i := range cands {
			cands[i] = word()
		}
		name := word()
		if rng.IntN(3) == 0 { // a typo of a candidate
			c := []rune(cands[rng.IntN(len(cands))])
			if len(c) > 0 {
				c[rng.IntN(len(c))] = 'x'
			}
			name = string(c)
		}
		got, want := Nearest(name, cands, 5), nearestPlain(name, cands, 5)
		if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("Nearest(%q, %q) = %q, the plain distance gives %q", name, cands, got, want)
		}
		// An index of some candidates, the rest given as extra, finds
		// the same.
		cut := rng.IntN(len(cands) + 1)
		if indexed := NewNearIndex(cands[cut:]).Nearest(name, cands[:cut], 5); !slices.Equal(indexed, got) {
			t.Fatalf("NearIndex(%q).Nearest(%q, extra %q) = %q, Nearest gives %q", cands[cut:], name, cands[:cut], indexed, got)
		}
	}
}

// TestNearestIgnoresHugeNames: a name no tool's could be a typo of costs
// nothing, however long a client makes it.
func TestNearestIgnoresHugeNames(t *testing.T) {
	cands := []string{"read_file", "write_file"}
	if got := Nearest(strings.Repeat("read_file", 100), cands, 3); got != nil {
		t.Fatalf("a 900-byte name got suggestions %q", got)
	}
	if got := Nearest("read_fil", cands, 3); !slices.Equal(got, []string{"read_file"}) {
		t.Fatalf("the control: Nearest(read_fil) = %q", got)
	}
}

// BenchmarkNearest is what a made-up tool name costs at 20,000 tools: the
// real catalogs' tool names under numbered server names, as the scale
// bench's stand-ins are.
func BenchmarkNearest(b *testing.B) {
	files, _ := filepath.Glob("../../testdata/catalogs/*.json")
	var names []string
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		var cat struct {
			Tools []struct{ Name string } `json:"tools"`
		}
		if json.Unmarshal(raw, &cat) == nil {
			for _, t := range cat.Tools {
				names = append(names, strings.TrimSuffix(filepath.Base(f), ".json")+"__"+t.Name)
			}
		}
	}
	if len(names) == 0 {
		b.Skip("no catalogs in testdata/catalogs")
	}
	cands := make([]string, 20000)
	for i := range cands {
		cands[i] = fmt.Sprintf("s%d-%s", i/len(names), names[i%len(names)])
	}
	index := NewNearIndex(cands)
	for _, name := range []string{"s3-github__list_isues", "made_up_tool_name"} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				Nearest(name, cands, 3)
			}
		})
		b.Run(name+"/index", func(b *testing.B) {
			for b.Loop() {
				index.Nearest(name, nil, 3)
			}
		})
	}
}
