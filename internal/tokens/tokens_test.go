package tokens

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
)

// catalogsDir locates the real catalogs kept in testdata/catalogs.
func catalogsDir(tb testing.TB) string { return catalogtest.SharedDir(tb) }

// readToolsArray returns the raw "tools" array of a catalog file, key order intact.
func readToolsArray(tb testing.TB, path string) json.RawMessage {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var result struct {
		Tools json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(data, &result); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return result.Tools
}

func TestCount(t *testing.T) {
	tests := []struct {
		text string
		want int
	}{
		{"", 0},
		{"hello", 1},
		{"hello world", 2},
		{"<|endoftext|>", 7}, // special markers are plain text here
	}
	for _, tt := range tests {
		if got := Count(tt.text); got != tt.want {
			t.Errorf("Count(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
}

// publishedCatalogTokens reads the token column of the table in the
// catalogs' README.md: ToolsCost must agree with it to the token for every
// catalog, or the figures toolfold reports would not be comparable.
func publishedCatalogTokens(tb testing.TB, dir string) map[string]int {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		tb.Fatal(err)
	}
	published := map[string]int{}
	for _, line := range strings.Split(string(data), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 7 { // "" name package version tools tokens ""
			continue
		}
		name := strings.TrimSpace(cells[1])
		n, err := strconv.Atoi(strings.ReplaceAll(strings.TrimSpace(cells[5]), ",", ""))
		if err != nil || strings.HasPrefix(name, "*") {
			continue // header, separator or the bold total row
		}
		published[name] = n
	}
	if len(published) < 30 {
		tb.Fatalf("found only %d rows in the catalogs' README table", len(published))
	}
	return published
}

func TestToolsCostMatchesPublishedTable(t *testing.T) {
	dir := catalogsDir(t)
	for name, want := range publishedCatalogTokens(t, dir) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tools := readToolsArray(t, filepath.Join(dir, name+".json"))
			got, err := ToolsCost(tools)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("ToolsCost(%s) = %d, published %d", name, got, want)
			}
		})
	}
}

func TestCompactJSONWritesLikeJavaScript(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"whitespace and key order", "{ \"b\" : 1,\n \"a\" : [ true, null ] }", `{"b":1,"a":[true,null]}`},
		{"html characters stay literal", `"<a href=\"x\">&amp;</a>"`, `"<a href=\"x\">&amp;</a>"`},
		{"unicode escapes decoded", `"caf\u00e9 \u2028 \/"`, "\"caf\u00e9 \u2028 /\""},
		{"controls escaped lowercase", `"\u001F\u0007\t"`, `"\u001f\u0007\t"`},
		{"surrogate pair joined", `"\ud83d\ude00"`, "\"\U0001F600\""},
		{"lone surrogate kept escaped", `"\uD800x"`, `"\ud800x"`},
		{"integers", `[0, -0, 10, 1e3, 1E+2, 100000000000000000000]`, `[0,0,10,1000,100,100000000000000000000]`},
		{"large exponent", `[1e21, 1.5e300, -2e22]`, `[1e+21,1.5e+300,-2e+22]`},
		{"fractions", `[0.5, 1.50, 0.000001, 0.0000001, 123.456, 2.5e-8]`, `[0.5,1.5,0.000001,1e-7,123.456,2.5e-8]`},
		{"overflow becomes null", `[1e400]`, `[null]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CompactJSON([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("CompactJSON(%s)\n got %s\nwant %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestCompactJSONRejectsInvalid(t *testing.T) {
	for _, in := range []string{``, `{`, `[1,]`, `"x`, `1 2`} {
		if _, err := CompactJSON([]byte(in)); err == nil {
			t.Errorf("CompactJSON(%q) succeeded, want an error", in)
		}
	}
}

func TestToolsCostAcceptsGoValues(t *testing.T) {
	type tool struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	typed := []tool{{Name: "create_issue", Description: "Create an issue <b>now</b> & then"}}
	raw := `[{"name":"create_issue","description":"Create an issue <b>now</b> & then"}]`
	want, err := ToolsCost(raw)
	if err != nil {
		t.Fatal(err)
	}
	if want != Count(`{"tools":`+raw+`}`) {
		t.Fatalf("raw form miscounted")
	}
	for name, v := range map[string]any{
		"struct slice":    typed,
		"raw message":     json.RawMessage(raw),
		"bytes":           []byte(raw),
		"map slice":       []map[string]any{{"name": "create_issue", "description": "Create an issue <b>now</b> & then"}},
		"indented string": "[\n  {\"name\": \"create_issue\", \"description\": \"Create an issue <b>now</b> & then\"}\n]",
	} {
		got, err := ToolsCost(v)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got != want {
			t.Errorf("%s: ToolsCost = %d, want %d", name, got, want)
		}
	}
}

func TestToolsCostRejectsNonArrays(t *testing.T) {
	for _, v := range []any{nil, `{"tools":[]}`, map[string]any{}, 3, `[`} {
		if _, err := ToolsCost(v); err == nil {
			t.Errorf("ToolsCost(%#v) succeeded, want an error", v)
		}
	}
}

func TestCountIsSafeConcurrently(t *testing.T) {
	const text = "Search for files by name pattern in the workspace, recursively."
	want := Count(text)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if got := Count(text); got != want {
					t.Errorf("concurrent Count = %d, want %d", got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// BenchmarkToolsCostAllCatalogs counts the whole shared catalog (903 tools,
// azure-all excluded as a duplicate of azure) as one tools array.
func BenchmarkToolsCostAllCatalogs(b *testing.B) {
	var all []json.RawMessage
	for _, s := range catalogtest.SharedServers(b) {
		all = append(all, s.Tools...)
	}
	raw, err := json.Marshal(all)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var n int
	for b.Loop() {
		n, err = ToolsCost(json.RawMessage(raw))
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(all)), "tools")
	b.ReportMetric(float64(n), "tokens")
}
