package demo

import (
	"reflect"
	"strings"
	"testing"
)

func TestChangeCase(t *testing.T) {
	c := newClient(t)
	tests := []struct{ text, to, want string }{
		{"Hello World", "upper", "HELLO WORLD"},
		{"Hello World", "lower", "hello world"},
		{"the quick BROWN fox don't", "title", "The Quick Brown Fox Don't"},
		{"HELLO. how ARE you? fine!", "sentence", "Hello. How are you? Fine!"},
		{"parseHTTPResponse2xx now", "snake", "parse_http_response2xx_now"},
		{"Hello World-again", "kebab", "hello-world-again"},
		{"user_id from-request", "camel", "userIdFromRequest"},
		{"user_id from-request", "pascal", "UserIdFromRequest"},
		{"maxRetryCount", "constant", "MAX_RETRY_COUNT"},
		{"élan vital", "pascal", "ÉlanVital"},
	}
	for _, tt := range tests {
		got := callOK[textOutput](c, "change_case", map[string]any{"text": tt.text, "to": tt.to})
		if got.Result != tt.want {
			t.Errorf("change_case(%q, %s) = %q, want %q", tt.text, tt.to, got.Result, tt.want)
		}
	}
	// The enum in the schema refuses an unknown case before the handler runs.
	c.callErr("change_case", map[string]any{"text": "x", "to": "zigzag"}, "to")
}

func TestSlugify(t *testing.T) {
	c := newClient(t)
	tests := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"text": "Hello, World!"}, "hello-world"},
		{map[string]any{"text": "  Crème Brûlée & Straße  "}, "creme-brulee-strasse"},
		{map[string]any{"text": "Don't Stop Me Now", "separator": "_"}, "dont_stop_me_now"},
		{map[string]any{"text": "The quick brown fox jumps", "max_length": 15}, "the-quick-brown"},
		{map[string]any{"text": "Supercalifragilistic", "max_length": 5}, "super"},
		{map[string]any{"text": "Привет мир"}, "привет-мир"},
		{map[string]any{"text": "!!!"}, ""},
	}
	for _, tt := range tests {
		got := callOK[slugifyOutput](c, "slugify", tt.args)
		if got.Slug != tt.want {
			t.Errorf("slugify(%v) = %q, want %q", tt.args, got.Slug, tt.want)
		}
	}
	c.callErr("slugify", map[string]any{"text": "x", "max_length": -1}, "max_length")
}

func TestWordCount(t *testing.T) {
	c := newClient(t)
	text := "The cat sat. The cat ran!\n\nA dog barked at the cat.\n"
	got := callOK[wordCountOutput](c, "word_count", map[string]any{"text": text})
	want := wordCountOutput{
		Characters: 52, CharactersNoSpaces: 39, Bytes: 52, Words: 12, UniqueWords: 8,
		Lines: 3, Sentences: 3, Paragraphs: 2, ReadingTimeMinutes: 0.1, AverageWordLength: 3,
		MostCommonWords: []wordFrequency{{"cat", 3}, {"the", 3}, {"barked", 1}, {"dog", 1}, {"ran", 1}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("word_count =\n%+v\nwant\n%+v", got, want)
	}
	empty := callOK[wordCountOutput](c, "word_count", map[string]any{"text": ""})
	if empty.Words != 0 || empty.Lines != 0 || empty.Sentences != 0 {
		t.Errorf("word_count of empty text = %+v", empty)
	}
}

func TestRegexFind(t *testing.T) {
	c := newClient(t)
	got := callOK[regexFindOutput](c, "regex_find", map[string]any{
		"text":    "née: ann@example.com\nbob@test.org",
		"pattern": `(?P<user>\w+)@(\w+)\.(com|org)`,
	})
	if got.Count != 2 || got.Truncated {
		t.Fatalf("regex_find = %+v, want 2 matches", got)
	}
	first := got.Matches[0]
	want := regexMatch{Match: "ann@example.com", Line: 1, Start: 5, End: 20,
		Groups: []string{"ann", "example", "com"}, Named: map[string]string{"user": "ann"}}
	if !reflect.DeepEqual(first, want) {
		t.Errorf("first match = %+v, want %+v (positions count characters, not bytes)", first, want)
	}
	if second := got.Matches[1]; second.Line != 2 || second.Match != "bob@test.org" {
		t.Errorf("second match = %+v", second)
	}

	limited := callOK[regexFindOutput](c, "regex_find", map[string]any{"text": "a1 b2 c3", "pattern": `\d`, "limit": 2})
	if limited.Count != 2 || !limited.Truncated {
		t.Errorf("limit 2: %+v", limited)
	}
	ci := callOK[regexFindOutput](c, "regex_find", map[string]any{"text": "Go GO go", "pattern": "go", "ignore_case": true})
	if ci.Count != 3 {
		t.Errorf("ignore_case found %d, want 3", ci.Count)
	}
	c.callErr("regex_find", map[string]any{"text": "x", "pattern": `(?=x)`}, "not a valid Go (RE2) regular expression", "lookarounds")
	c.callErr("regex_find", map[string]any{"text": "x", "pattern": ""}, "pattern is empty")
}

func TestRegexReplace(t *testing.T) {
	c := newClient(t)
	tests := []struct {
		args  map[string]any
		want  string
		count int
	}{
		{map[string]any{"text": "2024-05-01 and 2023-12-31", "pattern": `(\d+)-(\d+)-(\d+)`, "replacement": "$3/$2/$1"},
			"01/05/2024 and 31/12/2023", 2},
		{map[string]any{"text": "a-b-c", "pattern": "-", "replacement": "+", "limit": 1}, "a+b-c", 1},
		{map[string]any{"text": "cost: 5", "pattern": `\d`, "replacement": "$1", "literal": true}, "cost: $1", 1},
		{map[string]any{"text": "Hello HELLO", "pattern": "hello", "replacement": "bye", "ignore_case": true}, "bye bye", 2},
		{map[string]any{"text": "name=ann", "pattern": `(?P<k>\w+)=(?P<v>\w+)`, "replacement": "${v}:${k}"}, "ann:name", 1},
		{map[string]any{"text": "nothing here", "pattern": `\d`, "replacement": "#"}, "nothing here", 0},
	}
	for _, tt := range tests {
		got := callOK[regexReplaceOutput](c, "regex_replace", tt.args)
		if got.Result != tt.want || got.Replacements != tt.count {
			t.Errorf("regex_replace(%v) = %+v, want %q with %d replacements", tt.args, got, tt.want, tt.count)
		}
	}
}

func TestTextDiff(t *testing.T) {
	c := newClient(t)
	before := "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n"
	after := "one\ntwo\nTHREE\nfour\nfive\nsix\nseven\neight\nnine\nten\neleven\n"
	got := callOK[textDiffOutput](c, "text_diff", map[string]any{"before": before, "after": after, "context_lines": 1})
	want := "--- before\n+++ after\n" +
		"@@ -2,3 +2,3 @@\n two\n-three\n+THREE\n four\n" +
		"@@ -10 +10,2 @@\n ten\n+eleven\n"
	if got.Unified != want || got.Added != 2 || got.Removed != 1 || got.Hunks != 2 || got.Identical {
		t.Errorf("text_diff =\n%s%+v\nwant\n%s", got.Unified, got, want)
	}

	// With the default three lines of context the two changes share a hunk
	// only when at most six unchanged lines lie between them.
	merged := callOK[textDiffOutput](c, "text_diff", map[string]any{"before": "a\nb\nc\nd\n", "after": "A\nb\nc\nD\n"})
	if merged.Hunks != 1 || !strings.HasPrefix(merged.Unified, "--- before\n+++ after\n@@ -1,4 +1,4 @@\n-a\n+A\n b\n c\n-d\n+D\n") {
		t.Errorf("merged diff:\n%s", merged.Unified)
	}

	fromEmpty := callOK[textDiffOutput](c, "text_diff", map[string]any{"before": "", "after": "x\n"})
	if fromEmpty.Unified != "--- before\n+++ after\n@@ -0,0 +1 @@\n+x\n" {
		t.Errorf("diff from empty:\n%s", fromEmpty.Unified)
	}

	same := callOK[textDiffOutput](c, "text_diff", map[string]any{"before": "x\n", "after": "x\n"})
	if !same.Identical || same.Unified != "" {
		t.Errorf("identical texts: %+v", same)
	}
	eol := callOK[textDiffOutput](c, "text_diff", map[string]any{"before": "x", "after": "x\n"})
	if eol.Identical || eol.Note == "" {
		t.Errorf("final line break difference: %+v", eol)
	}
}

func TestEncodeTools(t *testing.T) {
	c := newClient(t)
	encodes := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"base64_encode", map[string]any{"text": "hello?>"}, "aGVsbG8/Pg=="},
		{"base64_encode", map[string]any{"text": "hello?>", "url_safe": true}, "aGVsbG8_Pg=="},
		{"base64_encode", map[string]any{"text": "hello?>", "url_safe": true, "no_padding": true}, "aGVsbG8_Pg"},
		{"url_encode", map[string]any{"text": "a b&c=d/é"}, "a+b%26c%3Dd%2F%C3%A9"},
		{"url_encode", map[string]any{"text": "a b/c", "component": "path"}, "a%20b%2Fc"},
		{"hex_encode", map[string]any{"text": "hi!"}, "686921"},
	}
	for _, tt := range encodes {
		if got := callOK[encodedOutput](c, tt.tool, tt.args); got.Encoded != tt.want {
			t.Errorf("%s(%v) = %q, want %q", tt.tool, tt.args, got.Encoded, tt.want)
		}
	}

	decodes := []struct {
		tool string
		args map[string]any
		want decodedOutput
	}{
		{"base64_decode", map[string]any{"encoded": "aGVsbG8/Pg=="}, decodedOutput{Text: "hello?>", IsText: true, Bytes: 7}},
		{"base64_decode", map[string]any{"encoded": "aGVsbG8_Pg"}, decodedOutput{Text: "hello?>", IsText: true, Bytes: 7}},
		{"base64_decode", map[string]any{"encoded": "aGVs\nbG8="}, decodedOutput{Text: "hello", IsText: true, Bytes: 5}},
		{"base64_decode", map[string]any{"encoded": "/w=="}, decodedOutput{Hex: "ff", Bytes: 1}},
		{"hex_decode", map[string]any{"hex": "0x68:69 21"}, decodedOutput{Text: "hi!", IsText: true, Bytes: 3}},
		{"hex_decode", map[string]any{"hex": "FF00"}, decodedOutput{Base64: "/wA=", Bytes: 2}},
	}
	for _, tt := range decodes {
		if got := callOK[decodedOutput](c, tt.tool, tt.args); got != tt.want {
			t.Errorf("%s(%v) = %+v, want %+v", tt.tool, tt.args, got, tt.want)
		}
	}

	if got := callOK[urlDecodeOutput](c, "url_decode", map[string]any{"encoded": "a+b%26c"}); got.Text != "a b&c" {
		t.Errorf("url_decode query = %q", got.Text)
	}
	if got := callOK[urlDecodeOutput](c, "url_decode", map[string]any{"encoded": "a+b%20c", "component": "path"}); got.Text != "a+b c" {
		t.Errorf("url_decode path = %q", got.Text)
	}

	c.callErr("base64_decode", map[string]any{"encoded": "a$b"}, "not valid base64")
	c.callErr("hex_decode", map[string]any{"hex": "abc"}, "odd number of digits")
	c.callErr("hex_decode", map[string]any{"hex": "zz"}, "not valid")
	c.callErr("url_decode", map[string]any{"encoded": "100%"}, "%25")
}

func TestHashText(t *testing.T) {
	c := newClient(t)
	tests := []struct {
		args map[string]any
		algo string
		hex  string
	}{
		{map[string]any{"text": "abc"}, "sha256", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{map[string]any{"text": "abc", "algorithm": "md5"}, "md5", "900150983cd24fb0d6963f7d28e17f72"},
		{map[string]any{"text": "abc", "algorithm": "sha1"}, "sha1", "a9993e364706816aba3e25717850c26c9cd0d89d"},
		{map[string]any{"text": "", "algorithm": "sha512"}, "sha512",
			"cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"},
		// RFC 4231, test case 2.
		{map[string]any{"text": "what do ya want for nothing?", "key": "Jefe"}, "hmac-sha256",
			"5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
	}
	for _, tt := range tests {
		got := callOK[hashOutput](c, "hash_text", tt.args)
		if got.Algorithm != tt.algo || got.Hex != tt.hex {
			t.Errorf("hash_text(%v) = %+v, want %s %s", tt.args, got, tt.algo, tt.hex)
		}
	}
	c.callErr("hash_text", map[string]any{"text": "x", "algorithm": "crc32"}, "algorithm")
}
