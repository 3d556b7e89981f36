package expose

import (
	"flag"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// TestFirstSentenceGolden: one-line summaries of tool descriptions, which
// find_tools, guidance and argument errors show, must end where the first
// sentence ends: not at "e.g.", a decimal, a version or a URL. Each line of
// testdata/sentences.txt is a description ("\n" for a line break).
func TestFirstSentenceGolden(t *testing.T) {
	in, err := os.ReadFile("testdata/sentences.txt")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(string(in), "\n"), "\n") {
		desc := strings.ReplaceAll(line, `\n`, "\n")
		b.WriteString("in:  " + line + "\nout: " + firstSentence(desc, 200) + "\n\n")
	}
	got := b.String()
	const file = "testdata/sentences.golden"
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/expose -run FirstSentenceGolden -update)", err)
	}
	if got != string(want) {
		t.Errorf("summaries differ from %s (review, then -update):\n%s", file, got)
	}
}

func FuzzFirstSentence(f *testing.F) {
	for _, s := range []string{"a. b", "e.g. x. Y", "v1.2. Z", "etc. A", "...", "“x.” y", "é. é"} {
		f.Add(s, 40)
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 1 || max > 1000 || !utf8.ValidString(s) {
			return
		}
		got := firstSentence(s, max)
		if !utf8.ValidString(got) {
			t.Errorf("firstSentence(%q) = %q is not valid UTF-8", s, got)
		}
		if len(got) > max+len("…") {
			t.Errorf("firstSentence(%q, %d) = %q is too long", s, max, got)
		}
	})
}
