package cmdtool

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var (
	update  = flag.Bool("update", false, "rewrite testdata/*.golden from the current parser")
	capture = flag.Bool("capture", false, "re-record testdata/help/*.txt from the programs installed on this machine")
)

// goldenPrograms are discovered from recorded help texts. With -capture
// the texts are recorded again from the real programs (git and docker on
// PATH, the Python fixtures).
var goldenPrograms = []struct {
	name    string
	program func(t *testing.T) Program
}{
	{"git", func(t *testing.T) Program {
		return Program{Name: "git", Command: "git", Discover: DiscoverHelp, Dir: newGitRepo(t)}
	}},
	{"docker", func(t *testing.T) Program {
		return Program{Name: "docker", Command: "docker", Discover: DiscoverHelp}
	}},
	{"click", func(t *testing.T) Program {
		return Program{Name: "click", Command: fixturePath(t, "clickfx.py"), Discover: DiscoverHelp}
	}},
	{"argparse", func(t *testing.T) Program {
		return Program{Name: "argparse", Command: fixturePath(t, "argfx.py"), Discover: DiscoverHelp}
	}},
}

func TestDiscoverGolden(t *testing.T) {
	for _, gp := range goldenPrograms {
		t.Run(gp.name, func(t *testing.T) {
			helpFile := filepath.Join("testdata", "help", gp.name+".txt")
			if *capture {
				p := gp.program(t)
				if _, err := ResolveCommand(p); err != nil {
					t.Skipf("cannot capture %s: %v", gp.name, err)
				}
				rec := &recorder{texts: map[string][2]string{}}
				real := func(ctx context.Context, args []string) (string, string, error) {
					res, err := runArgv(ctx, p, append([]string{p.Command}, args...), helpTimeout, helpMaxOutput)
					if err != nil {
						return "", "", err
					}
					rec.add(args, res.Stdout, res.Stderr)
					return res.Stdout, res.Stderr, nil
				}
				if _, err := DiscoverWith(context.Background(), p, real); err != nil {
					t.Fatal(err)
				}
				rec.write(t, helpFile)
			}
			texts := readRecording(t, helpFile)
			replay := func(ctx context.Context, args []string) (string, string, error) {
				got, ok := texts[strings.Join(args, " ")]
				if !ok {
					return "", "", fmt.Errorf("not recorded: %q", args)
				}
				return got[0], got[1], nil
			}
			// The command name only selects the tables of known programs;
			// nothing runs during replay.
			p := Program{Name: gp.name, Command: gp.name, Discover: DiscoverHelp}
			found, err := DiscoverWith(context.Background(), p, replay)
			if err != nil {
				t.Fatal(err)
			}
			if len(found.Unread) > 0 {
				t.Fatalf("pages reported unread in a replay: %q", found.Unread)
			}
			checkGolden(t, filepath.Join("testdata", gp.name+".golden"), renderTree(found.Actions))
		})
	}
}

// renderTree prints discovered actions in a stable, reviewable form.
func renderTree(actions []Action) string {
	var b strings.Builder
	for _, a := range actions {
		marks := ""
		if a.ReadOnly {
			marks += " [read-only]"
		}
		if a.Destructive {
			marks += " [destructive]"
		}
		fmt.Fprintf(&b, "%s%s argv=%q\n", a.Name, marks, a.Argv)
		if a.Description != "" {
			fmt.Fprintf(&b, "  # %s\n", a.Description)
		}
		for _, p := range a.Params {
			where := p.Flag
			if p.Positional {
				where = "positional"
				if p.BeforeSeparator {
					where += " before --"
				}
			}
			req := ""
			if slices.Contains(a.Required, p.Name) {
				req = " required"
			}
			enum := ""
			if len(p.Enum) > 0 {
				enum = " enum=" + strings.Join(p.Enum, "|")
			}
			fmt.Fprintf(&b, "  - %s %s (%s)%s%s\n", p.Name, p.typeOrDefault(), where, req, enum)
		}
	}
	return b.String()
}

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
	}
	if string(want) != got {
		t.Errorf("%s differs from the parser's output; review with go test -run %s -update && git diff %s\nfirst difference:\n%s",
			path, t.Name(), path, firstDiff(string(want), got))
	}
}

func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d\nwant: %s\ngot:  %s", i+1, wl, gl)
		}
	}
	return "(none)"
}

// recorder collects help texts. The file format is sections:
//
//	=== <args> stdout
//	<text>
//	=== <args> stderr
//	<text>
type recorder struct {
	mu    sync.Mutex
	texts map[string][2]string
}

func (r *recorder) add(args []string, stdout, stderr string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.texts[strings.Join(args, " ")] = [2]string{stdout, stderr}
}

func (r *recorder) write(t *testing.T, path string) {
	keys := make([]string, 0, len(r.texts))
	for k := range r.texts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		for i, stream := range []string{"stdout", "stderr"} {
			text := r.texts[k][i]
			if text == "" {
				continue
			}
			fmt.Fprintf(&b, "=== %s %s\n%s", k, stream, text)
			if !strings.HasSuffix(text, "\n") {
				b.WriteString("\n=== noeol\n")
			}
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readRecording(t *testing.T, path string) map[string][2]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v (record it with go test -run TestDiscoverGolden -capture)", err)
	}
	defer f.Close()
	texts := map[string][2]string{}
	var key string
	var stream int
	var cur strings.Builder
	flush := func() {
		if key == "" {
			return
		}
		v := texts[key]
		v[stream] = cur.String()
		texts[key] = v
		cur.Reset()
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "=== noeol" {
			s := strings.TrimSuffix(cur.String(), "\n")
			cur.Reset()
			cur.WriteString(s)
			continue
		}
		if rest, ok := strings.CutPrefix(line, "=== "); ok {
			flush()
			i := strings.LastIndexByte(rest, ' ')
			key, stream = rest[:i], 0
			if rest[i+1:] == "stderr" {
				stream = 1
			}
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
	}
	flush()
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return texts
}

func fixturePath(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "fixtures", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// newGitRepo makes an empty repository in a temporary directory, or skips
// the test when git is not installed.
func newGitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed (apt-get install git); skipping")
	}
	dir := t.TempDir()
	cmd := exec.Command("git", "init", "-q", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	return dir
}

// TestDiscoverLiveGit reads the help of the git installed on this machine.
func TestDiscoverLiveGit(t *testing.T) {
	if testing.Short() {
		t.Skip("runs git about 80 times")
	}
	dir := newGitRepo(t)
	p := Program{Name: "git", Command: "git", Discover: DiscoverHelp, Dir: dir,
		Exclude: []string{"push"},
		Actions: []Action{{Name: "log", ReadOnly: true, Params: []Param{
			{Name: "max_count", Type: TypeInteger, Flag: "--max-count", Description: "How many commits"}}}},
	}
	found, err := Discover(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Action{}
	for _, a := range found.Actions {
		byName[a.Name] = a
	}
	for _, want := range []struct {
		action string
		params map[string]ParamType
	}{
		{"log", map[string]ParamType{"max_count": TypeInteger, "source": TypeBoolean, "decorate_refs": TypeString, "path": TypeArray, "revision_range": TypeString}},
		{"status", map[string]ParamType{"short": TypeBoolean, "branch": TypeBoolean, "untracked_files": TypeString, "pathspec": TypeArray}},
		{"diff", map[string]ParamType{"stat": TypeBoolean, "name_only": TypeBoolean, "abbrev": TypeInteger, "path": TypeArray}},
		{"commit", map[string]ParamType{"message": TypeString, "all": TypeBoolean, "amend": TypeBoolean, "author": TypeString}},
		{"remote_add", map[string]ParamType{"name": TypeString, "url": TypeString, "f": TypeBoolean, "mirror": TypeString}},
	} {
		a, ok := byName[want.action]
		if !ok {
			t.Errorf("action %q not discovered", want.action)
			continue
		}
		for name, typ := range want.params {
			i := slices.IndexFunc(a.Params, func(p Param) bool { return p.Name == name })
			if i < 0 {
				t.Errorf("%s: parameter %q missing", want.action, name)
				continue
			}
			if got := a.Params[i].typeOrDefault(); got != typ {
				t.Errorf("%s.%s: type %s, want %s", want.action, name, got, typ)
			}
		}
	}
	if _, ok := byName["push"]; ok {
		t.Error("push was excluded but discovered")
	}
	for _, hidden := range []string{"config", "filter-branch", "help"} {
		if _, ok := byName[hidden]; ok {
			t.Errorf("%s must never be discovered (it can run arbitrary commands)", hidden)
		}
	}
	if !byName["log"].ReadOnly || byName["commit"].ReadOnly {
		t.Error("log must be read-only and commit not")
	}
	ra := byName["remote_add"]
	if !slices.Equal(ra.Required, []string{"name", "url"}) || !slices.Equal(ra.Argv, []string{"remote", "add"}) {
		t.Errorf("remote_add: required %v argv %v", ra.Required, ra.Argv)
	}
	for _, a := range found.Actions {
		for _, prm := range a.Params {
			if prm.Flag == "--upload-pack" || prm.Flag == "--output" || prm.Flag == "--exec" {
				t.Errorf("%s exposes %s, which can run commands or write files", a.Name, prm.Flag)
			}
		}
	}
}

func TestDiscoverMissingProgram(t *testing.T) {
	_, err := Discover(context.Background(), Program{Name: "ghost", Command: "toolfold-no-such-program", Discover: DiscoverHelp})
	if err == nil || !strings.Contains(err.Error(), `"toolfold-no-such-program"`) || !strings.Contains(err.Error(), "install it") {
		t.Fatalf("want a clear not-found error naming the program and the fix, got %v", err)
	}
}

func TestDiscoverIncludeExcludeAndMerge(t *testing.T) {
	texts := readRecording(t, filepath.Join("testdata", "help", "git.txt"))
	var runs atomic.Int32
	replay := func(ctx context.Context, args []string) (string, string, error) {
		runs.Add(1)
		got := texts[strings.Join(args, " ")]
		return got[0], got[1], nil
	}
	p := Program{Name: "git", Command: "git", Discover: DiscoverHelp,
		Include: []string{"status", "log", "remote *"},
		Exclude: []string{"remote_remove"},
		Actions: []Action{
			{Name: "log", Description: "Recent commits", Argv: []string{"log", "--no-color"}, ReadOnly: true,
				Params: []Param{{Name: "max_count", Type: TypeInteger, Flag: "--max-count"}, {Name: "source", Type: TypeBoolean, Flag: "--source", Description: "declared"}}},
			{Name: "whoami", Argv: []string{"var", "GIT_AUTHOR_IDENT"}, ReadOnly: true},
		},
	}
	found, err := DiscoverWith(context.Background(), p, replay)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range found.Actions {
		names = append(names, a.Name)
	}
	for _, want := range []string{"log", "status", "remote_add", "remote_get-url", "whoami"} {
		if !slices.Contains(names, want) {
			t.Errorf("missing %s in %v", want, names)
		}
	}
	for _, unwanted := range []string{"commit", "remote_remove", "remote", "diff"} {
		if slices.Contains(names, unwanted) {
			t.Errorf("%s should have been trimmed: %v", unwanted, names)
		}
	}
	if n := runs.Load(); n > 10 {
		t.Errorf("include should prune discovery, but it read %d help pages", n)
	}
	log := found.Actions[slices.IndexFunc(found.Actions, func(a Action) bool { return a.Name == "log" })]
	if log.Description != "Recent commits" || !slices.Equal(log.Argv, []string{"log", "--no-color"}) {
		t.Errorf("declared fields must override: %+v", log)
	}
	src := log.Params[slices.IndexFunc(log.Params, func(p Param) bool { return p.Name == "source" })]
	if src.Description != "declared" {
		t.Errorf("declared param must override the discovered one: %+v", src)
	}
	if !slices.ContainsFunc(log.Params, func(p Param) bool { return p.Name == "max_count" }) ||
		!slices.ContainsFunc(log.Params, func(p Param) bool { return p.Name == "decorate_refs" }) {
		t.Errorf("merge must keep discovered params and add declared ones: %+v", log.Params)
	}
}

// TestHelpPageThatTimesOutIsReadAgain: a help page that times out once (a
// loaded machine) is read again with more time, rather than being lost and
// its action described from the listing alone. The control is the first
// try, which the script makes time out for certain.
func TestHelpPageThatTimesOutIsReadAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out one help timeout")
	}
	dir := t.TempDir()
	mark := filepath.Join(dir, "tried")
	script := filepath.Join(dir, "slowhelp.sh")
	body := "#!/bin/sh\nif [ ! -e '" + mark + "' ]; then : > '" + mark + "'; exec sleep 60; fi\n" +
		"echo 'usage: slowhelp [-h] [--name NAME]'\necho\necho 'options:'\necho '  --name NAME  who to greet'\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	p := Program{Name: "slowhelp", Command: script, Dir: dir, Discover: DiscoverHelp}
	const timeout = 2 * time.Second
	stdout, _, err := helpRunner(p, timeout)(context.Background(), []string{"--help"})
	if err != nil {
		t.Fatalf("the second try should have read the page: %v", err)
	}
	if _, statErr := os.Stat(mark); statErr != nil {
		t.Fatalf("the first try never ran (no mark): %v", statErr)
	}
	if !strings.Contains(stdout, "--name NAME") {
		t.Fatalf("the page read on the second try is %q", stdout)
	}
}

// TestUnreadHelpPagesAreReported: a subcommand whose help timed out is
// still offered, described from its parent's listing, and the discovery
// names the page it could not read, so that it is not cached as the
// program's last word. The control is the same program with every page
// answering, which reports none.
func TestUnreadHelpPagesAreReported(t *testing.T) {
	root := "Usage:\n  demo [command]\n\nAvailable Commands:\n  fast        Answers at once\n  slow        Takes its time\n"
	page := func(name string) string {
		return "Usage:\n  demo " + name + " [flags]\n\nFlags:\n      --verbose   say more\n"
	}
	for _, tc := range []struct {
		name        string
		slowTimes   bool
		helpAnswers bool // "demo help slow" prints the page
		wantUnread  []string
	}{
		{"every page read", false, false, nil},
		{"a page timed out", true, false, []string{"demo slow --help"}},
		{"a page timed out but help answered", true, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func(_ context.Context, args []string) (string, string, error) {
				switch strings.Join(args, " ") {
				case "--help":
					return root, "", nil
				case "fast --help":
					return page("fast"), "", nil
				case "slow --help":
					if tc.slowTimes {
						return "", "", fmt.Errorf("demo slow --help: %w after 10s", ErrHelpTimedOut)
					}
					return page("slow"), "", nil
				case "help slow":
					if tc.helpAnswers {
						return page("slow"), "", nil
					}
				}
				return "", "", fmt.Errorf("no page for %q", args)
			}
			p := Program{Name: "demo", Command: "demo", Discover: DiscoverHelp}
			found, err := DiscoverWith(context.Background(), p, run)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, a := range found.Actions {
				names = append(names, a.Name)
			}
			if !slices.Equal(names, []string{"fast", "slow"}) {
				t.Fatalf("actions %q, want fast and slow (slow from its listing when unread)", names)
			}
			if !slices.Equal(found.Unread, tc.wantUnread) {
				t.Fatalf("unread %q, want %q", found.Unread, tc.wantUnread)
			}
		})
	}
}

// TestHelpPageThatTimesOutTwiceSaysSo: a page that never finishes is given
// up after its second try with an error that wraps ErrHelpTimedOut, which
// is how discovery tells an unread page from a program without one.
func TestHelpPageThatTimesOutTwiceSaysSo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a program that must be killed twice")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "stuckhelp.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := Program{Name: "stuckhelp", Command: script, Dir: dir, Discover: DiscoverHelp}
	_, _, err := helpRunner(p, 100*time.Millisecond)(context.Background(), []string{"--help"})
	if !errors.Is(err, ErrHelpTimedOut) {
		t.Fatalf("err = %v, want one that wraps ErrHelpTimedOut", err)
	}
}
