package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolfold/toolfold/internal/logtest"
)

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// runCLI runs the command in-process in dir with the given environment.
func runCLI(t *testing.T, dir string, environ map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	if dir != "" {
		t.Chdir(dir)
	}
	var out, errb bytes.Buffer
	e := env{
		stdin: io.NopCloser(strings.NewReader("")), stdout: nopCloser{&out}, stderr: &errb,
		lookupEnv: func(k string) (string, bool) {
			if k == "TOOLFOLD_CACHE_DIR" {
				return t.TempDir(), true
			}
			v, ok := environ[k]
			return v, ok
		},
	}
	code = run(context.Background(), args, e)
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCommandLine(t *testing.T) {
	empty := t.TempDir()
	broken := t.TempDir()
	writeFile(t, broken, "toolfold.json", `{"mcpServers": {}, "groups": {"a": {"parent": "b"}}, "disclosure": {"mode": "fancy", "maxTool": 3}}`)
	valid := t.TempDir()
	writeFile(t, valid, "toolfold.yaml", "commands:\n  echo:\n    command: echo\n    description: Print words\n    actions:\n      say:\n        params:\n          words: {type: array, items: {type: string}, positional: true}\n        readOnly: true\n      shout:\n        argv: [\"-e\"]\n        destructive: true\n")
	big := t.TempDir()
	var actions []string
	// 20 actions: more than a group stays whole with.
	for _, res := range []string{"branch", "tag", "remote", "stash"} {
		for _, verb := range []string{"create", "delete", "list", "show", "rename"} {
			actions = append(actions, fmt.Sprintf(`%q: {"description": "%s a %s"}`, verb+"_"+res, verb, res))
		}
	}
	writeFile(t, big, "toolfold.json", `{"commands": {"vcs": {"command": "true", "description": "Version control", "actions": {`+strings.Join(actions, ",")+`}}}}`)
	tests := []struct {
		name      string
		dir       string
		env       map[string]string
		args      []string
		code      int
		stdout    []string
		stderr    []string
		notStdout []string
	}{
		{name: "no command", args: nil, code: 2, stderr: []string{"Usage: toolfold <command>"}},
		{name: "unknown command", args: []string{"serv"}, code: 2, stderr: []string{`unknown command "serv"`, "serve, demo, tools"}},
		{name: "bad flag", args: []string{"tools", "--jsn"}, code: 2, stderr: []string{"flag provided but not defined: -jsn", "toolfold tools -h"}},
		{name: "bad mode", args: []string{"serve", "--mode", "fancy"}, code: 2, stderr: []string{`unknown mode "fancy"`}},
		{name: "version", args: []string{"version"}, code: 0, stdout: []string{"version: ", "MCP protocol versions: 2026-07-28, 2025-11-25"}},
		{name: "demo groups", dir: empty, args: []string{"groups", "--demo"}, code: 0, stdout: []string{"files.search", "text.encode", "(ungrouped)"}},
		{name: "demo tools of a group", dir: empty, args: []string{"tools", "--demo", "--group", "files"}, code: 0, stdout: []string{"glob_files", "read_file"}, notStdout: []string{"calculate"}},
		{name: "unknown group", dir: empty, args: []string{"tools", "--demo", "--group", "file"}, code: 1, stderr: []string{`there is no group "file" (did you mean "files"?)`}},
		{name: "excluded by flag", dir: empty, args: []string{"groups", "--demo", "--exclude-groups", "files"}, code: 0, stdout: []string{"files.search   2      -       excluded"}, notStdout: []string{"available  Read, write"}},
		{name: "excluded by environment", dir: empty, env: map[string]string{"MCP_GROUP_MATH": "false"}, args: []string{"tools", "--demo"}, code: 0, notStdout: []string{"calculate"}},
		{name: "bad environment switch", dir: empty, env: map[string]string{"MCP_GROUP_MATH": "maybe"}, args: []string{"tools", "--demo"}, code: 1, stderr: []string{`"maybe" is not a group switch`}},
		{name: "tokens", dir: empty, args: []string{"tokens", "--demo"}, code: 0, stdout: []string{"flat", "groups", "grouped", "search", "OF FLAT"}},
		{name: "call", dir: empty, args: []string{"call", "--demo", "calculate", `{"expression": "6*7"}`}, code: 0, stdout: []string{`"value":42`}},
		{name: "call unknown", dir: empty, args: []string{"call", "--demo", "calclate"}, code: 1, stdout: []string{`the nearest are "calculate"`}},
		{name: "call bad json", dir: empty, args: []string{"call", "--demo", "calculate", "{"}, code: 2, stderr: []string{"must be a JSON object"}},
		{name: "call bad arguments", dir: empty, args: []string{"call", "--demo", "calculate", `{"expression": 5}`}, code: 1, stdout: []string{"argument expression"}},
		{name: "serve without config", dir: empty, args: []string{"serve"}, code: 1, stderr: []string{"no config file found", "toolfold.json", `{"mcpServers": {`, "run 'toolfold demo'"}},
		{name: "tools without config", dir: empty, args: []string{"tools"}, code: 1, stderr: []string{"no config file found", "run 'toolfold demo'"}},
		{name: "check without config", dir: empty, args: []string{"check"}, code: 1, stderr: []string{"no config file found", "run 'toolfold demo'"}},
		{name: "check the demo", dir: empty, args: []string{"check", "--demo"}, code: 0, stdout: []string{"the built-in demo catalog is valid"}},
		{name: "demo and config", dir: valid, args: []string{"demo", "--config", "toolfold.yaml"}, code: 2, stderr: []string{"--demo and --config"}},
		{name: "demo takes serve's flags", dir: empty, args: []string{"demo", "--mode", "fancy"}, code: 2, stderr: []string{`unknown mode "fancy"`}},
		{name: "check broken", dir: broken, args: []string{"check"}, code: 1, stdout: []string{`unknown key "maxTool"; did you mean "maxTools"?`, `"fancy"`, `"b"`}, stderr: []string{"problem(s)"}},
		{name: "serve broken", dir: broken, args: []string{"serve"}, code: 1, stderr: []string{`unknown key "maxTool"`}},
		{name: "check valid", dir: valid, args: []string{"check"}, code: 0, stdout: []string{"is valid: 2 tools in 1 groups"}},
		{name: "read-only hides destructive actions", dir: valid, args: []string{"tools", "--read-only"}, code: 0, stdout: []string{"echo__say"}, notStdout: []string{"echo__shout"}},
		{name: "destructive actions are marked", dir: valid, args: []string{"tools"}, code: 0, stdout: []string{"echo__shout", "destructive"}},
		{name: "call a program", dir: valid, args: []string{"call", "echo__say", `{"words": ["hello", "; rm -rf /"]}`}, code: 0, stdout: []string{"hello ; rm -rf /"}},
		{name: "derived groups are marked", dir: big, args: []string{"groups"}, code: 0, stdout: []string{"  vcs.branch  5", "[derived] Branch: vcs__create_branch"}},
		{name: "explicit missing config", args: []string{"tools", "--config", "/nonexistent/toolfold.json"}, code: 1, stderr: []string{"/nonexistent/toolfold.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.dir, tt.env, tt.args...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, stdout, stderr)
			}
			for _, w := range tt.stdout {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			for _, w := range tt.notStdout {
				if strings.Contains(stdout, w) {
					t.Errorf("stdout has %q:\n%s", w, stdout)
				}
			}
			for _, w := range tt.stderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic") {
				t.Errorf("stderr shows a crash:\n%s", stderr)
			}
		})
	}
}

// TestFirstHourCommandLine covers what a new user trips over: help printed
// once, no usage noise before a flag error, `call` with --mode and flags
// after the tool's name.
func TestFirstHourCommandLine(t *testing.T) {
	empty := t.TempDir()
	for _, cmd := range []string{"serve", "demo", "tools", "groups", "tokens", "check", "call"} {
		code, _, stderr := runCLI(t, empty, nil, cmd, "-h")
		if code != 0 || strings.Count(stderr, "Usage: toolfold "+cmd) != 1 || strings.Count(stderr, "Flags:") != 1 || !strings.Contains(stderr, "-config") {
			t.Errorf("%s -h: exit %d, want the usage once with its flags:\n%s", cmd, code, stderr)
		}
	}
	code, _, stderr := runCLI(t, empty, nil, "tools", "--jsn")
	if code != 2 || strings.Contains(stderr, "Flags:") || strings.Contains(stderr, "Usage:") {
		t.Errorf("an unknown flag must print one line and the hint, no usage header: exit %d\n%s", code, stderr)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"mode grouped", []string{"call", "--demo", "--mode", "grouped", "math", `{"action": "calculate", "expression": "6*7"}`}, `"value":42`},
		{"flags after the tool", []string{"call", "math", "--mode", "grouped", "--demo", `{"action": "calculate", "expression": "6*7"}`}, `"value":42`},
		{"flags after the arguments", []string{"call", "calculate", `{"expression": "6*7"}`, "--read-only", "--demo"}, `"value":42`},
	}
	for _, tt := range tests {
		code, stdout, stderr := runCLI(t, empty, nil, tt.args...)
		if code != 0 || !strings.Contains(stdout, tt.want) {
			t.Errorf("%s: exit %d\nstdout: %s\nstderr: %s", tt.name, code, stdout, stderr)
		}
	}
}

// TestOptionalServerWarnsOnce: the README's first config marks a server
// whose secret may be missing as optional; the rest serves, and the one
// warning reads as one warning.
func TestOptionalServerWarnsOnce(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "toolfold.json", `{"mcpServers": {"docs": {"url": "https://docs.example/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}, "optional": true}},
		"commands": {"echo": {"command": "echo", "actions": {"say": {"readOnly": true}}}}}`)
	code, stdout, stderr := runCLI(t, dir, nil, "tools")
	if code != 0 || !strings.Contains(stdout, "echo__say") {
		t.Fatalf("tools: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, `server "docs" is optional, so it is left out`) || strings.Count(stderr, "warning:") != 1 {
		t.Errorf("want one warning saying docs is left out:\n%s", stderr)
	}
}

func TestListenAddr(t *testing.T) {
	for in, want := range map[string]string{"8080": "127.0.0.1:8080", "127.0.0.1:9": "127.0.0.1:9", ":8080": ":8080", "localhost:80": "localhost:80"} {
		if got := listenAddr(in); got != want {
			t.Errorf("listenAddr(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestServeSaysEachFactOnce: serving a config with a server that cannot
// start and an excluded server reports the failure once, says nothing
// about the excluded one, and shows none of the SDK's session chatter.
func TestServeSaysEachFactOnce(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "toolfold.json", `{"mcpServers": {"broken": {"command": "/nonexistent/server"}, "excluded": {"command": "/nonexistent/other"}},
		"commands": {"echo": {"command": "echo", "actions": {"say": {"readOnly": true}}}}}`)
	t.Chdir(dir)
	// The client speaks first, waits for the answer, then hangs up: serve
	// ends when stdin does.
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	errb := &logtest.Buffer{}
	e := env{stdin: inR, stdout: outW, stderr: errb,
		lookupEnv: func(k string) (string, bool) {
			if k == "TOOLFOLD_CACHE_DIR" {
				return t.TempDir(), true
			}
			return "", false
		}}
	done := make(chan int, 1)
	go func() { done <- run(context.Background(), []string{"serve", "--exclude-groups", "excluded"}, e) }()
	go func() {
		fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	}()
	out := bufio.NewReader(outR)
	answer, err := out.ReadString('\n')
	if err != nil || !strings.Contains(answer, `"id":1`) {
		t.Fatalf("no answer to initialize: %q %v\nstderr: %s", answer, err, errb.String())
	}
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// initialize is answered at once; the list waits for the catalog, and
	// so for the broken server's start to fail.
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if answer, err = out.ReadString('\n'); err != nil || !strings.Contains(answer, `"id":2`) {
		t.Fatalf("no answer to tools/list: %q %v\nstderr: %s", answer, err, errb.String())
	}
	inW.Close()
	go io.Copy(io.Discard, out)
	code := <-done
	outW.Close()
	stderr := errb.String()
	if code != 0 {
		t.Fatalf("serve: exit %d\nstderr: %s", code, stderr)
	}
	if n := strings.Count(stderr, `"broken`); n != 1 {
		t.Errorf("the failed server is reported %d times, want once:\n%s", n, stderr)
	}
	for _, noise := range []string{"excluded", "session_id", "server session", "session initialized"} {
		if strings.Contains(stderr, noise) {
			t.Errorf("stderr says %q, which is no news:\n%s", noise, stderr)
		}
	}
}
