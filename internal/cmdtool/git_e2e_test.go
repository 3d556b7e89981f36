package cmdtool

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gitProgram declares the git actions of the design's example (docs/design.md#command-line-programs), run in dir
// with an identity and no user or system config.
func gitProgram(dir string) Program {
	return Program{
		Name: "git", Command: "git", Dir: dir,
		Env: map[string]string{
			"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "GIT_PAGER": "cat",
			"GIT_AUTHOR_NAME": "Toolfold Test", "GIT_AUTHOR_EMAIL": "test@example.com",
			"GIT_COMMITTER_NAME": "Toolfold Test", "GIT_COMMITTER_EMAIL": "test@example.com",
		},
		Actions: []Action{
			{Name: "init", Argv: []string{"init", "--initial-branch=main"}, Params: []Param{{Name: "quiet", Type: TypeBoolean, Flag: "--quiet"}}},
			{Name: "add", Argv: []string{"add"}, Required: []string{"paths"},
				Params: []Param{{Name: "paths", Type: TypeArray, Positional: true}}},
			{Name: "commit", Argv: []string{"commit"}, Required: []string{"message"},
				Params: []Param{{Name: "message", Flag: "--message", Multiline: true}, {Name: "all", Type: TypeBoolean, Flag: "--all"}}},
			{Name: "log", Argv: []string{"log", "--no-color"}, ReadOnly: true, Params: []Param{
				{Name: "max_count", Type: TypeInteger, Flag: "--max-count"},
				{Name: "format", Flag: "--format", Pattern: `[%a-zA-Z0-9 :]*`},
				{Name: "revision", Positional: true, BeforeSeparator: true},
				{Name: "paths", Type: TypeArray, Positional: true}}},
			{Name: "status", Argv: []string{"status"}, ReadOnly: true, Params: []Param{{Name: "porcelain", Type: TypeBoolean, Flag: "--porcelain"}}},
			{Name: "diff", Argv: []string{"diff", "--no-color"}, ReadOnly: true, Params: []Param{
				{Name: "stat", Type: TypeBoolean, Flag: "--stat"},
				{Name: "paths", Type: TypeArray, Positional: true}}},
		},
	}
}

func TestGitEndToEnd(t *testing.T) {
	dir := t.TempDir()
	if _, err := ResolveCommand(Program{Name: "git", Command: "git"}); err != nil {
		t.Skipf("git is not installed (apt-get install git): %v", err)
	}
	p := gitProgram(dir)
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	action := func(name string) Action {
		for _, a := range p.Actions {
			if a.Name == name {
				return a
			}
		}
		t.Fatalf("no action %s", name)
		return Action{}
	}
	run := func(name string, args map[string]any) *Result {
		t.Helper()
		res, err := Run(context.Background(), p, action(name), args)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.IsError() {
			t.Fatalf("%s failed: %s", name, res.Text())
		}
		return res
	}

	run("init", map[string]any{"quiet": true})
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		t.Fatalf("init made no repository: %v", err)
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("hello.txt", "hello\n")
	write("-rf", "a file with a hostile name\n")

	if got := run("status", map[string]any{"porcelain": true}).Stdout; got != "?? -rf\n?? hello.txt\n" {
		t.Errorf("status before add: %q", got)
	}
	// "-rf" reaches git after "--": a path, not an option.
	run("add", map[string]any{"paths": []any{"hello.txt", "-rf"}})
	run("commit", map[string]any{"message": "First commit\n\nWith a body."})

	log := run("log", map[string]any{"max_count": 1, "format": "%s %an"}).Stdout
	if log != "First commit Toolfold Test\n" {
		t.Errorf("log: %q", log)
	}
	if got := run("status", map[string]any{"porcelain": true}).Text(); got != "(no output)" {
		t.Errorf("clean status: %q", got)
	}

	write("hello.txt", "hello\nworld\n")
	diff := run("diff", nil).Stdout
	if !strings.Contains(diff, "+world") || !strings.Contains(diff, "hello.txt") {
		t.Errorf("diff: %q", diff)
	}
	stat := run("diff", map[string]any{"stat": true, "paths": []any{"hello.txt"}}).Stdout
	if !strings.Contains(stat, "1 file changed, 1 insertion(+)") {
		t.Errorf("diff --stat: %q", stat)
	}
	run("commit", map[string]any{"message": "Second", "all": true})
	if got := run("log", map[string]any{"format": "%s", "revision": "HEAD~1"}).Stdout; got != "First commit\n" {
		t.Errorf("log HEAD~1: %q", got)
	}
	if got := run("log", map[string]any{"format": "%s", "paths": []any{"-rf"}}).Stdout; got != "First commit\n" {
		t.Errorf("log -- -rf: %q", got)
	}

	// A bad revision is a failed call with git's own message, not an error.
	res, err := Run(context.Background(), p, action("log"), map[string]any{"revision": "no-such-branch"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError() || res.ExitCode != 128 || !strings.Contains(res.Text(), "exit code 128") ||
		!strings.Contains(res.Text(), "no-such-branch") {
		t.Errorf("bad revision: %q", res.Text())
	}
	// And an injected option never reaches git.
	if _, err := Run(context.Background(), p, action("log"), map[string]any{"revision": "--output=" + filepath.Join(dir, "PWNED")}); err == nil {
		t.Error("--output as a revision must be refused")
	}
	if _, err := os.Stat(filepath.Join(dir, "PWNED")); err == nil {
		t.Error("git wrote a file named by the model")
	}
}
