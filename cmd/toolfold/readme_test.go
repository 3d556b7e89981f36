package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeCommandsRun runs every command in the README's sh blocks as
// written, so that the front door never shows a command that fails: a
// toolfold command runs in-process (one that serves HTTP on 127.0.0.1:0,
// stopped once started), a script must exist and be executable (running
// the whole suite from a test would recurse). Anything else fails: keep
// other programs' commands in docs/, or teach this test to check them.
func TestReadmeCommandsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the README's commands")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmds := readmeCommands(t, filepath.Join(root, "README.md"))
	if len(cmds) < 3 {
		t.Fatalf("found %d commands in the README's sh blocks; the parser is broken", len(cmds))
	}
	for _, line := range cmds {
		t.Run(line, func(t *testing.T) {
			words, err := shellWords(line)
			if err != nil {
				t.Fatalf("%v", err)
			}
			switch {
			case len(words) > 2 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/toolfold":
				runReadmeToolfold(t, root, words[3:])
			case strings.HasPrefix(words[0], "./scripts/"):
				info, err := os.Stat(filepath.Join(root, words[0]))
				if err != nil || info.Mode()&0o111 == 0 {
					t.Errorf("%s is not an executable script in the repo (%v)", words[0], err)
				}
			default:
				t.Errorf("this test cannot check %q: keep the README's sh blocks to toolfold commands and scripts, or teach the test", line)
			}
		})
	}
}

// runReadmeToolfold runs toolfold with args from the repo root. A command
// that serves HTTP gets a free port, and its context ends at once: serve
// checks its flags and config, takes the address, then stops.
func runReadmeToolfold(t *testing.T, root string, args []string) {
	t.Chdir(root)
	ctx := context.Background()
	for i, a := range args {
		if a == "--http" && i+1 < len(args) {
			args[i+1] = "127.0.0.1:0"
			c, cancel := context.WithCancel(ctx)
			cancel()
			ctx = c
		}
	}
	var out, errb bytes.Buffer
	cache := t.TempDir()
	e := env{stdin: io.NopCloser(strings.NewReader("")), stdout: nopCloser{&out}, stderr: &errb,
		lookupEnv: func(k string) (string, bool) {
			if k == "TOOLFOLD_CACHE_DIR" {
				return cache, true
			}
			return "", false
		}}
	if code := run(ctx, args, e); code != exitOK {
		t.Errorf("toolfold %s: exit %d\nstdout: %.500s\nstderr: %.1000s", strings.Join(args, " "), code, out.String(), errb.String())
	}
}

// readmeCommands are the lines of the README's sh blocks, comments and
// blank lines left out.
func readmeCommands(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "```"):
			in = !in && (line == "```sh" || line == "```bash")
		case in && line != "" && !strings.HasPrefix(line, "#"):
			out = append(out, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// shellWords splits a command line as a POSIX shell would for the simple
// lines a README holds: words, single and double quotes, and a comment
// from an unquoted "#" that starts a word.
func shellWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words, inWord = append(words, cur.String()), false
				cur.Reset()
			}
		case c == '#' && !inWord:
			return words, nil
		case c == '\'' || c == '"':
			end := strings.IndexByte(line[i+1:], c)
			if end < 0 {
				return nil, &quoteError{line}
			}
			cur.WriteString(line[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '\\' || c == '$' || c == '|' || c == '&' || c == ';' || c == '>' || c == '<' || c == '`':
			return nil, &shellError{line, c}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

type quoteError struct{ line string }

func (e *quoteError) Error() string { return "an unclosed quote in " + e.line }

type shellError struct {
	line string
	c    byte
}

func (e *shellError) Error() string {
	return "the README line " + e.line + " uses the shell's " + string(e.c) + ", which this test does not run: write plain commands"
}
