package cmdtool

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func FuzzParseHelp(f *testing.F) {
	for _, name := range []string{"git", "docker", "click", "argparse"} {
		data, err := os.ReadFile(filepath.Join("testdata", "help", name+".txt"))
		if err != nil {
			f.Fatal(err)
		}
		for _, section := range strings.Split(string(data), "\n=== ") {
			if len(section) < 4000 {
				f.Add(section)
			}
		}
	}
	for _, seed := range []string{
		"usage: x [[[[[[[[", "Usage:\n", "usage: git a [--] [<p>...] | (", "Options:\n  -", "  {a,b\n", "usage: p {a,}",
		"usage: g x [(-a|-b) <n>...]...\n   or: g x y", "USAGE\n  x <command>\nCOMMANDS\n  a:  b\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		page, err := ParseHelp(text)
		if err != nil {
			return
		}
		// Whatever was parsed must make valid actions.
		d := &discoverer{prog: Program{Name: "fuzz", Command: "fuzz"}}
		a := d.actionFrom(node{words: []string{"sub"}}, &page)
		if err := a.Validate(); err != nil {
			t.Fatalf("parsed help gave an invalid action: %v\n%+v", err, a)
		}
	})
}

// fuzzAction covers every way a parameter can be placed.
var fuzzAction = Action{
	Name: "act", Argv: []string{"sub", "--fixed"},
	Params: []Param{
		{Name: "s", Flag: "--string"},
		{Name: "i", Type: TypeInteger, Flag: "--int"},
		{Name: "f", Type: TypeNumber, Flag: "--num"},
		{Name: "b", Type: TypeBoolean, Flag: "--bool"},
		{Name: "e", Flag: "--enum", Enum: []string{"a", "b"}},
		{Name: "arr", Type: TypeArray, Flag: "--arr"},
		{Name: "short", Flag: "-m"},
		{Name: "single", Flag: "-single"},
		{Name: "pat", Flag: "--pat", Pattern: "[a-z]+"},
		{Name: "ml", Flag: "--ml", Multiline: true},
		{Name: "rev", Positional: true, BeforeSeparator: true},
		{Name: "pos", Positional: true},
		{Name: "rest", Type: TypeArray, Positional: true},
	},
}

func FuzzBuildArgv(f *testing.F) {
	f.Add([]byte(`{"s":"x","i":3,"b":true,"arr":["--output=/x","y"],"rev":"main","pos":"-rf","rest":["--","-x"]}`), false, false)
	f.Add([]byte(`{"short":"--","pos":"--upload-pack=x"}`), false, true)
	f.Add([]byte(`{"--upload-pack":"x"}`), true, false)
	f.Add([]byte(`{"single":"-","ml":"a\nb","e":"a","f":1e300,"i":1e16}`), true, true)
	f.Add([]byte(`{"rev":"-x"}`), false, false)
	f.Fuzz(func(t *testing.T, data []byte, useNumber, noSeparator bool) {
		dec := json.NewDecoder(bytes.NewReader(data))
		if useNumber {
			dec.UseNumber()
		}
		var args map[string]any
		if err := dec.Decode(&args); err != nil {
			return
		}
		p := Program{Name: "fuzz", Command: "prog", NoSeparator: noSeparator}
		argv, err := BuildArgv(p, fuzzAction, args)
		if err != nil {
			return
		}
		checkArgvInvariant(t, p, fuzzAction, argv)
	})
}

// checkArgvInvariant asserts that no model value can act as an option:
// after the command and fixed words, every element is a configured flag
// (bare for a boolean, joined with its value otherwise), the separator, a
// positional after the separator, or a positional that does not start
// with '-'.
func checkArgvInvariant(t *testing.T, p Program, a Action, argv []string) {
	t.Helper()
	fixed := 1 + len(a.Argv)
	if len(argv) < fixed || argv[0] != p.Command {
		t.Fatalf("argv does not start with the command and fixed words: %q", argv)
	}
	for i, w := range a.Argv {
		if argv[1+i] != w {
			t.Fatalf("fixed words changed: %q", argv)
		}
	}
	afterSeparator := false
	for _, el := range argv[fixed:] {
		if strings.ContainsRune(el, 0) {
			t.Fatalf("NUL byte reached argv: %q", argv)
		}
		if afterSeparator {
			continue
		}
		if el == Separator && !p.NoSeparator {
			afterSeparator = true
			continue
		}
		if !strings.HasPrefix(el, "-") {
			continue // a positional before "--": it cannot be read as an option
		}
		if !fromConfiguredFlag(a, el) {
			t.Fatalf("element %q could be read as an option the config did not allow; argv %q", el, argv)
		}
	}
}

func fromConfiguredFlag(a Action, el string) bool {
	for _, prm := range a.Params {
		if prm.Flag == "" {
			continue
		}
		switch styleOfFlag(prm.Flag) {
		case flagLong, flagSingleDash:
			if prm.typeOrDefault() == TypeBoolean && el == prm.Flag || strings.HasPrefix(el, prm.Flag+"=") {
				return true
			}
		case flagShort:
			if prm.typeOrDefault() == TypeBoolean && el == prm.Flag || len(el) > len(prm.Flag) && strings.HasPrefix(el, prm.Flag) {
				return true
			}
		}
	}
	return false
}
