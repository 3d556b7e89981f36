package cmdtool

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostileProgram runs testdata/fixtures/hostile.sh, which records its
// argv to a file or misbehaves on demand.
func hostileProgram(t *testing.T) (Program, string) {
	t.Helper()
	dir := t.TempDir()
	return Program{
		Name:    "hostile",
		Command: fixturePath(t, "hostile.sh"),
		Dir:     dir,
		Env:     map[string]string{"ARGV_LOG": filepath.Join(dir, "argv.log"), "PID_LOG": filepath.Join(dir, "pid.log")},
		Timeout: 10 * time.Second,
	}, dir
}

var recordAction = Action{
	Name: "record", Argv: []string{"record"},
	Params: []Param{
		{Name: "query", Flag: "--query"},
		{Name: "count", Type: TypeInteger, Flag: "--max-count"},
		{Name: "verbose", Type: TypeBoolean, Flag: "--verbose"},
		{Name: "rev", Positional: true, BeforeSeparator: true},
		{Name: "paths", Type: TypeArray, Positional: true},
	},
}

func readArgvLog(t *testing.T, dir string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "argv.log"))
	if err != nil {
		t.Fatalf("the fixture did not record its argv: %v", err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// TestHostileInputs sends what a hostile model might and asserts that
// nothing unintended ran: the program received exactly the expected argv,
// and no file named by an injection attempt exists.
func TestHostileInputs(t *testing.T) {
	tests := []struct {
		name     string
		args     map[string]any
		wantArgv []string // what the fixture must receive after "record"
		wantErr  string   // refused before anything runs
	}{
		{name: "semicolon", args: map[string]any{"query": "x; touch PWNED"}, wantArgv: []string{"--query=x; touch PWNED"}},
		{name: "command substitution", args: map[string]any{"query": "$(touch PWNED)"}, wantArgv: []string{"--query=$(touch PWNED)"}},
		{name: "backticks", args: map[string]any{"paths": []any{"`touch PWNED`"}}, wantArgv: []string{"--", "`touch PWNED`"}},
		{name: "pipe and and", args: map[string]any{"paths": []any{"a | touch PWNED", "b && touch PWNED"}}, wantArgv: []string{"--", "a | touch PWNED", "b && touch PWNED"}},
		{name: "option via positional", args: map[string]any{"paths": []any{"--output=PWNED", "-rf"}}, wantArgv: []string{"--", "--output=PWNED", "-rf"}},
		{name: "option via flag value", args: map[string]any{"query": "1 --output=PWNED"}, wantArgv: []string{"--query=1 --output=PWNED"}},
		{name: "option via before-separator positional", args: map[string]any{"rev": "--output=PWNED"}, wantErr: "starts with '-'"},
		{name: "path traversal is a plain argument", args: map[string]any{"paths": []any{"../../etc/passwd"}}, wantArgv: []string{"--", "../../etc/passwd"}},
		{name: "unknown parameter named like an option", args: map[string]any{"--upload-pack": "touch PWNED"}, wantErr: "unknown parameter"},
		{name: "NUL byte", args: map[string]any{"query": "a\x00--output=PWNED"}, wantErr: "NUL"},
		{name: "newline", args: map[string]any{"query": "a\ntouch PWNED"}, wantErr: "line break"},
		{name: "integer smuggling", args: map[string]any{"count": "1; touch PWNED"}, wantErr: "expected an integer"},
		{name: "boolean smuggling", args: map[string]any{"verbose": "--output=PWNED"}, wantErr: "expected a boolean"},
		{name: "environment expansion", args: map[string]any{"query": "${HOME}"}, wantArgv: []string{"--query=${HOME}"}},
		{name: "glob", args: map[string]any{"paths": []any{"*"}}, wantArgv: []string{"--", "*"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, dir := hostileProgram(t)
			res, err := Run(context.Background(), p, recordAction, tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("want error containing %q, got %v", tt.wantErr, err)
				}
				if _, err := os.Stat(filepath.Join(dir, "argv.log")); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("the program ran although the input was refused")
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if res.IsError() {
					t.Fatalf("fixture failed: %s", res.Text())
				}
				if got := readArgvLog(t, dir); !slices.Equal(got, tt.wantArgv) {
					t.Errorf("argv\n got %q\nwant %q", got, tt.wantArgv)
				}
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if strings.Contains(e.Name(), "PWNED") {
					t.Errorf("injection created %s", e.Name())
				}
			}
			if _, err := os.Stat("PWNED"); err == nil {
				t.Errorf("injection created PWNED in the test directory")
			}
		})
	}
}

func TestRunHugeOutputIsTruncated(t *testing.T) {
	p, _ := hostileProgram(t)
	p.MaxOutput = 64 << 10
	res, err := Run(context.Background(), p, Action{Name: "huge", Argv: []string{"huge"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TruncatedStdout || res.IsError() {
		t.Fatalf("want truncated, successful: %+v", res.TruncatedStdout)
	}
	if !strings.HasPrefix(res.Stdout, strings.Repeat("x", 64<<10)) ||
		!strings.HasSuffix(res.Stdout, "\n[output truncated: 7.9 MiB more not shown; narrow the request]") {
		t.Errorf("bad truncation: ...%q", res.Stdout[len(res.Stdout)-100:])
	}
	if len(res.Stdout) > 64<<10+200 {
		t.Errorf("kept %d bytes, more than the cap", len(res.Stdout))
	}
}

func TestRunStderrFloodKeepsTheEnd(t *testing.T) {
	p, _ := hostileProgram(t)
	p.MaxOutput = 32 << 10
	res, err := Run(context.Background(), p, Action{Name: "flood", Argv: []string{"flood"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || !res.IsError() || !res.TruncatedStderr {
		t.Fatalf("exit %d truncated %v", res.ExitCode, res.TruncatedStderr)
	}
	if !strings.HasPrefix(res.Stderr, "[output truncated: ") || !strings.HasSuffix(res.Stderr, "fatal: the real reason\n") {
		t.Errorf("stderr must keep its end: %q...%q", res.Stderr[:60], res.Stderr[len(res.Stderr)-40:])
	}
	text := res.Text()
	if !strings.Contains(text, "exit code 3") || !strings.Contains(text, "fatal: the real reason") || len(text) > 5000 {
		t.Errorf("rendered result: %d bytes, %q", len(text), text[max(0, len(text)-200):])
	}
}

// processGone reports whether pid has exited (a zombie awaiting its new
// parent's wait counts as exited).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] == "Z"
}

// waitGone waits until the child whose pid the fixture wrote to pidFile
// has died.
func waitGone(t *testing.T, pidFile string) {
	t.Helper()
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("fixture did not write its child's pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	waitPidGone(t, pid)
}

func TestRunTimeoutKillsProcessGroup(t *testing.T) {
	p, dir := hostileProgram(t)
	p.Timeout = 500 * time.Millisecond
	start := time.Now()
	res, err := Run(context.Background(), p, Action{Name: "hang", Argv: []string{"hang"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || !res.IsError() || res.ExitCode != -1 {
		t.Fatalf("want a timeout, got %+v", res)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("took %s to give up", elapsed)
	}
	if !strings.Contains(res.Text(), "timed out after 500ms") {
		t.Errorf("text: %q", res.Text())
	}
	waitGone(t, filepath.Join(dir, "pid.log"))
}

func TestRunBackgroundChildHoldingPipe(t *testing.T) {
	p, dir := hostileProgram(t)
	start := time.Now()
	res, err := Run(context.Background(), p, Action{Name: "fork", Argv: []string{"fork"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Fatalf("a grandchild holding the pipe kept Run waiting %s", elapsed)
	}
	if res.IsError() || !strings.Contains(res.Stdout, "parent done") {
		t.Errorf("result: %+v", res)
	}
	waitGone(t, filepath.Join(dir, "pid.log"))
}

func TestRunCallerCancel(t *testing.T) {
	p, dir := hostileProgram(t)
	pids := pidFromFIFO(t, filepath.Join(dir, "pid.log"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type outcome struct {
		res *Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := Run(ctx, p, Action{Name: "hang", Argv: []string{"hang"}}, nil)
		done <- outcome{res, err}
	}()
	// The caller gives up once the program has started the child that must
	// go down with it; at a guessed moment it might not have yet.
	var pid int
	select {
	case pid = <-pids:
	case o := <-done:
		t.Fatalf("Run ended before the program started its child: %v %+v", o.err, o.res)
	case <-time.After(time.Minute): // a hang guard: the fixture writes at once
		t.Fatal("the fixture never wrote its child's pid")
	}
	cancel()
	o := <-done
	if !errors.Is(o.err, context.Canceled) || o.res == nil || o.res.TimedOut {
		t.Fatalf("want the caller's cancellation as an error, got %v %+v", o.err, o.res)
	}
	waitPidGone(t, pid)
}

// pidFromFIFO makes path a named pipe and delivers the pid the fixture
// writes into it. The fixture's write waits for this reader and the read
// for the write, so the pid arrives when it is written, with no polling.
func pidFromFIFO(t *testing.T, path string) <-chan int {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatalf("making the pid pipe: %v", err)
	}
	pids := make(chan int, 1)
	go func() {
		f, err := os.Open(path) // blocks until the fixture opens it to write
		if err != nil {
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			pids <- pid
		}
	}()
	t.Cleanup(func() {
		// If the fixture never wrote, a writer of our own lets the reader go.
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	return pids
}

func TestRunFailureRendering(t *testing.T) {
	p, _ := hostileProgram(t)
	res, err := Run(context.Background(), p, Action{Name: "fail", Argv: []string{"fail"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "partial output\n\nexit code 2\n\nstderr:\nerror: something went wrong"
	if !res.IsError() || res.Text() != want {
		t.Errorf("Text() = %q, want %q", res.Text(), want)
	}
}

func TestRunMinimalEnvironment(t *testing.T) {
	t.Setenv("TOOLFOLD_SECRET_TOKEN", "s3cret")
	p, _ := hostileProgram(t)
	p.Env["GIT_PAGER"] = "cat"
	res, err := Run(context.Background(), p, Action{Name: "env", Argv: []string{"env"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Stdout, "s3cret") {
		t.Fatal("toolfold's environment leaked into the program")
	}
	for _, want := range []string{"LANG=C.UTF-8", "GIT_PAGER=cat", "PATH=", "TERM=dumb"} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("environment lacks %s:\n%s", want, res.Stdout)
		}
	}
}

func TestResolveCommand(t *testing.T) {
	if _, err := ResolveCommand(Program{Name: "x", Command: "toolfold-no-such-program"}); err == nil ||
		!errors.Is(err, exec.ErrNotFound) || !strings.Contains(err.Error(), "install it") {
		t.Errorf("missing program: %v", err)
	}
	if _, err := ResolveCommand(Program{Name: "x", Command: "./nope.sh", Dir: t.TempDir()}); err == nil ||
		!strings.Contains(err.Error(), "cannot be run") {
		t.Errorf("missing path: %v", err)
	}
	// A program in the working directory must not shadow one on PATH,
	// even when PATH contains ".".
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "sh"), []byte("#!/bin/sh\necho evil\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := ResolveCommand(Program{Name: "sh", Command: "sh", Dir: dir, Env: map[string]string{"PATH": ".:/usr/bin:/bin"}})
	if err != nil || filepath.Dir(got) == dir || got == "sh" {
		t.Errorf("resolved %q, %v", got, err)
	}
}

func TestCapBufferUTF8(t *testing.T) {
	c := &capBuffer{limit: 5}
	c.Write([]byte("abcdé")) // é is 2 bytes: the cap falls inside it
	c.Write([]byte("more"))
	text, truncated := c.text()
	if !truncated || !strings.HasPrefix(text, "abcd\n[output truncated: 6 bytes more") {
		t.Errorf("%q", text)
	}
	tail := &capBuffer{limit: 4, keepTail: true}
	for i := 0; i < 100; i++ {
		tail.Write([]byte("xyz"))
	}
	tail.Write([]byte("éab"))
	text, _ = tail.text()
	if !strings.HasSuffix(text, "éab") || strings.Contains(text, "xyz") {
		t.Errorf("%q", text)
	}
}

func TestResultText(t *testing.T) {
	for _, tt := range []struct {
		res  Result
		want string
	}{
		{Result{Stdout: "ok\n"}, "ok\n"},
		{Result{}, "(no output)"},
		{Result{Stderr: "Switched to branch 'main'\n"}, "Switched to branch 'main'"},
		{Result{ExitCode: 1}, "exit code 1"},
		{Result{Stdout: "x", ExitCode: 128, Stderr: "fatal: bad revision\n"}, "x\n\nexit code 128\n\nstderr:\nfatal: bad revision"},
	} {
		if got := tt.res.Text(); got != tt.want {
			t.Errorf("Text() = %q, want %q", got, tt.want)
		}
	}
	long := strings.Repeat("line\n", 100)
	got := (&Result{ExitCode: 1, Stderr: long}).Text()
	if strings.Count(got, "line") != stderrTailLines || !strings.Contains(got, "…\n") {
		t.Errorf("stderr tail: %d lines", strings.Count(got, "line"))
	}
}
