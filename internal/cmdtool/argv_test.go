package cmdtool

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

var gitLog = Action{
	Name: "log", Argv: []string{"log", "--no-color"},
	Params: []Param{
		{Name: "max_count", Type: TypeInteger, Flag: "--max-count", Description: "How many commits"},
		{Name: "oneline", Type: TypeBoolean, Flag: "--oneline"},
		{Name: "format", Enum: []string{"short", "full"}, Flag: "--format"},
		{Name: "author", Flag: "--author", Pattern: `[A-Za-z ]+`},
		{Name: "grep", Type: TypeArray, Flag: "--grep"},
		{Name: "n", Type: TypeInteger, Flag: "-n"},
		{Name: "revision", Positional: true, BeforeSeparator: true},
		{Name: "paths", Type: TypeArray, Positional: true},
	},
}

func TestBuildArgv(t *testing.T) {
	p := Program{Name: "git", Command: "git"}
	tests := []struct {
		name    string
		args    map[string]any
		want    []string
		wantErr []string // substrings, all required
	}{
		{name: "nothing", args: nil, want: []string{"git", "log", "--no-color"}},
		{name: "flags and positionals",
			args: map[string]any{"max_count": 3.0, "oneline": true, "paths": []any{"a.go", "b.go"}, "revision": "main"},
			want: []string{"git", "log", "--no-color", "--oneline", "--max-count=3", "main", "--", "a.go", "b.go"}},
		{name: "false boolean omitted", args: map[string]any{"oneline": false}, want: []string{"git", "log", "--no-color"}},
		{name: "null is not given", args: map[string]any{"max_count": nil}, want: []string{"git", "log", "--no-color"}},
		{name: "array repeats flag", args: map[string]any{"grep": []any{"fix", "feat"}},
			want: []string{"git", "log", "--no-color", "--grep=fix", "--grep=feat"}},
		{name: "json.Number integer", args: map[string]any{"max_count": json.Number("10")},
			want: []string{"git", "log", "--no-color", "--max-count=10"}},
		{name: "short flag joined", args: map[string]any{"n": 5},
			want: []string{"git", "log", "--no-color", "-n5"}},
		{name: "value that looks like an option stays a value",
			args: map[string]any{"author": "Ann", "grep": []any{"--output=/tmp/pwned"}},
			want: []string{"git", "log", "--no-color", "--author=Ann", "--grep=--output=/tmp/pwned"}},
		{name: "positional that looks like an option goes after --",
			args: map[string]any{"paths": []any{"--output=/tmp/pwned", "-rf"}},
			want: []string{"git", "log", "--no-color", "--", "--output=/tmp/pwned", "-rf"}},
		{name: "enum ok", args: map[string]any{"format": "short"}, want: []string{"git", "log", "--no-color", "--format=short"}},

		{name: "fractional integer", args: map[string]any{"max_count": 2.5}, wantErr: []string{`"max_count"`, "expected an integer", "2.5"}},
		{name: "string integer", args: map[string]any{"max_count": "3"}, wantErr: []string{`"max_count"`, "expected an integer"}},
		{name: "huge integer", args: map[string]any{"max_count": 1e300}, wantErr: []string{"expected an integer"}},
		{name: "string boolean", args: map[string]any{"oneline": "true"}, wantErr: []string{`"oneline"`, "expected a boolean"}},
		{name: "enum refused", args: map[string]any{"format": "%(rm -rf /)"}, wantErr: []string{`"format"`, `expected one of "short", "full"`}},
		{name: "pattern is anchored", args: map[string]any{"author": "Ann; rm -rf /"}, wantErr: []string{`"author"`, "does not match", "^(?:[A-Za-z ]+)$"}},
		{name: "unknown parameter", args: map[string]any{"--upload-pack": "touch /tmp/x"}, wantErr: []string{`"--upload-pack"`, "unknown parameter", "max_count (integer)"}},
		{name: "NUL byte", args: map[string]any{"revision": "a\x00b"}, wantErr: []string{`"revision"`, "NUL"}},
		{name: "newline", args: map[string]any{"paths": []any{"a\nb"}}, wantErr: []string{`"paths"`, "item 0", "line break"}},
		{name: "before-separator value refused when it starts with -", args: map[string]any{"revision": "--output=/tmp/x"},
			wantErr: []string{`"revision"`, "starts with '-'"}},
		{name: "empty long flag value stays joined", args: map[string]any{"grep": []any{""}}, want: []string{"git", "log", "--no-color", "--grep="}},
		{name: "array of non-strings", args: map[string]any{"paths": []any{1.0}}, wantErr: []string{`"paths"`, "expected an array of strings"}},
		{name: "oversize value", args: map[string]any{"revision": strings.Repeat("a", MaxValueBytes+1)}, wantErr: []string{"at most"}},
		{name: "all problems reported", args: map[string]any{"max_count": "x", "oneline": 1.0}, wantErr: []string{`"max_count"`, `"oneline"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := BuildArgv(p, gitLog, tt.args)
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("want error, got argv %q", got)
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not mention %q", err, s)
					}
				}
				var pe *ParamError
				if !errors.As(err, &pe) {
					t.Errorf("error is not a *ParamError: %T", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("argv\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestBuildArgvShortFlagRefusesEmpty(t *testing.T) {
	a := Action{Name: "commit", Argv: []string{"commit"}, Params: []Param{{Name: "m", Flag: "-m"}, {Name: "paths", Type: TypeArray, Positional: true}}}
	_, err := BuildArgv(Program{Command: "git"}, a, map[string]any{"m": "", "paths": []any{"--output=x"}})
	if err == nil || !strings.Contains(err.Error(), "must not be empty") {
		t.Fatalf("an empty -m would swallow the --; want a refusal, got %v", err)
	}
}

func TestBuildArgvRequired(t *testing.T) {
	a := Action{Name: "add", Argv: []string{"remote", "add"}, Required: []string{"name", "url"},
		Params: []Param{{Name: "name", Positional: true, Description: "remote name"}, {Name: "url", Positional: true}}}
	_, err := BuildArgv(Program{Command: "git"}, a, map[string]any{"url": "https://x"})
	if err == nil || !strings.Contains(err.Error(), `parameter "name": is required; expected string: remote name`) {
		t.Fatalf("got %v", err)
	}
}

func TestBuildArgvNoSeparatorProgram(t *testing.T) {
	p := Program{Command: "legacy", NoSeparator: true}
	a := Action{Name: "get", Params: []Param{{Name: "key", Positional: true}}}
	got, err := BuildArgv(p, a, map[string]any{"key": "name"})
	if err != nil || !slices.Equal(got, []string{"legacy", "name"}) {
		t.Fatalf("got %q, %v", got, err)
	}
	if _, err := BuildArgv(p, a, map[string]any{"key": "-rf"}); err == nil || !strings.Contains(err.Error(), "starts with '-'") {
		t.Fatalf("a program without -- support must refuse values starting with '-', got %v", err)
	}
}

func TestBuildArgvRefusesMisconfiguredAction(t *testing.T) {
	for _, a := range []Action{
		{Name: "x", Params: []Param{{Name: "p", Flag: "--a=b"}}},
		{Name: "x", Params: []Param{{Name: "p", Flag: "--ok; rm"}}},
		{Name: "x", Params: []Param{{Name: "p"}}},
		{Name: "x", Params: []Param{{Name: "p", Flag: "--p", Pattern: "("}}},
		{Name: "x", Params: []Param{{Name: "p", Positional: true, Type: TypeBoolean}}},
		{Name: "x", Required: []string{"nope"}},
		{Name: "bad name!"},
	} {
		if _, err := BuildArgv(Program{Command: "x"}, a, nil); err == nil {
			t.Errorf("action %+v should be refused", a)
		}
	}
}

func TestMultilineParam(t *testing.T) {
	a := Action{Name: "commit", Argv: []string{"commit"}, Params: []Param{{Name: "message", Flag: "--message", Multiline: true}}}
	got, err := BuildArgv(Program{Command: "git"}, a, map[string]any{"message": "title\n\nbody"})
	if err != nil || got[2] != "--message=title\n\nbody" {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestInputSchema(t *testing.T) {
	a := gitLog
	a.Required = []string{"revision"}
	want := `{"type":"object","properties":{` +
		`"max_count":{"type":"integer","description":"How many commits"},` +
		`"oneline":{"type":"boolean"},` +
		`"format":{"type":"string","enum":["short","full"]},` +
		`"author":{"type":"string","pattern":"^(?:[A-Za-z ]+)$"},` +
		`"grep":{"type":"array","items":{"type":"string"}},` +
		`"n":{"type":"integer"},` +
		`"revision":{"type":"string"},` +
		`"paths":{"type":"array","items":{"type":"string"}}},` +
		`"required":["revision"],"additionalProperties":false}`
	got := string(a.InputSchema())
	if got != want {
		t.Errorf("schema\n got %s\nwant %s", got, want)
	}
	var v map[string]any
	if err := json.Unmarshal(a.InputSchema(), &v); err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	empty := Action{Name: "status"}.InputSchema()
	if string(empty) != `{"type":"object","properties":{},"additionalProperties":false}` {
		t.Errorf("empty schema: %s", empty)
	}
	desc := Action{Name: "x", Params: []Param{{Name: "n", Flag: "--n", Description: "<n> & more"}}}.InputSchema()
	if !strings.Contains(string(desc), `"<n> & more"`) {
		t.Errorf("descriptions must stay readable: %s", desc)
	}
}

func TestProgramValidate(t *testing.T) {
	ok := Program{Name: "git", Command: "git", Actions: []Action{gitLog}}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := Program{Name: "git", Discover: "magic", Env: map[string]string{"A=B": "x"}, Include: []string{"[a"},
		Actions: []Action{gitLog, gitLog}}
	err := bad.Validate()
	for _, s := range []string{`"command" is empty`, `discover "magic"`, `env name "A=B"`, `glob "[a"`, `declared twice`} {
		if err == nil || !strings.Contains(err.Error(), s) {
			t.Errorf("Validate() = %v, want a problem mentioning %q", err, s)
		}
	}
}

func TestFilterAndReadOnly(t *testing.T) {
	actions := []Action{
		{Name: "status", ReadOnly: true}, {Name: "log", ReadOnly: true}, {Name: "push", Destructive: true},
		{Name: "remote_add"}, {Name: "remote_remove", Destructive: true}, {Name: "commit"},
	}
	names := func(as []Action) []string {
		var out []string
		for _, a := range as {
			out = append(out, a.Name)
		}
		return out
	}
	got := names(FilterActions(actions, []string{"status", "log", "remote *"}, []string{"remote_remove"}))
	if !slices.Equal(got, []string{"status", "log", "remote_add"}) {
		t.Errorf("FilterActions = %v", got)
	}
	if got := names(ReadOnlyActions(actions)); !slices.Equal(got, []string{"status", "log"}) {
		t.Errorf("ReadOnlyActions = %v", got)
	}
}

// TestAsInteger covers every kind of value a caller may pass for an
// integer parameter: JSON numbers as decoded by encoding/json, and Go's
// integer types from callers in Go, including the ones that overflow.
func TestAsInteger(t *testing.T) {
	tests := []struct {
		name string
		raw  any
		want int64
		ok   bool
	}{
		{"float64", float64(42), 42, true},
		{"float64 fraction", 1.5, 0, false},
		{"float64 beyond exact", float64(1 << 54), 0, false},
		{"float32", float32(-7), -7, true},
		{"json.Number int", json.Number("9007199254740993"), 9007199254740993, true},
		{"json.Number float", json.Number("3.0"), 3, true},
		{"json.Number fraction", json.Number("3.5"), 0, false},
		{"json.Number junk", json.Number("x"), 0, false},
		{"int", int(-1), -1, true},
		{"int8", int8(-8), -8, true},
		{"int16", int16(16), 16, true},
		{"int32", int32(-32), -32, true},
		{"int64", int64(1) << 62, 1 << 62, true},
		{"uint8", uint8(8), 8, true},
		{"uint16", uint16(16), 16, true},
		{"uint32", uint32(1) << 31, 1 << 31, true},
		{"uint", uint(5), 5, true},
		{"uint overflow", ^uint(0), 0, false},
		{"uint64", uint64(64), 64, true},
		{"uint64 overflow", ^uint64(0), 0, false},
		{"string", "5", 0, false},
		{"bool", true, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := asInteger(tt.raw)
			if got != tt.want || ok != tt.ok {
				t.Errorf("asInteger(%#v) = %d, %v; want %d, %v", tt.raw, got, ok, tt.want, tt.ok)
			}
		})
	}
}
