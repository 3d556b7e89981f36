package main

import (
	"strings"
	"testing"
)

// TestCheckLooksForPrograms: a config whose programs are not on this
// machine is not called valid; an optional server's missing program is a
// warning, since the rest is meant to serve without it.
func TestCheckLooksForPrograms(t *testing.T) {
	const missing = "toolfold-test-no-such-program"
	tests := []struct {
		name   string
		config string
		code   int
		stdout string // a line of the report
		stderr string // a warning
	}{
		{"a server's program", `{"mcpServers": {"a": {"command": "` + missing + `"}}}`,
			1, `mcpServers.a.command: program "` + missing + `" is not found on PATH`, ""},
		{"an optional server's program", `{"mcpServers": {"a": {"command": "` + missing + `", "optional": true}}, "commands": {"e": {"command": "echo", "actions": {"say": {}}}}}`,
			0, "is valid", `mcpServers.a.command: warning: program "` + missing + `" is not found on PATH`},
		{"a disabled server's program", `{"mcpServers": {"a": {"command": "` + missing + `", "disabled": true}}, "commands": {"e": {"command": "echo", "actions": {"say": {}}}}}`,
			0, "is valid", ""},
		{"a command's program", `{"commands": {"x": {"command": "` + missing + `", "actions": {"say": {}}}}}`,
			1, `commands.x.command: command "` + missing + `" of "x" was not found on PATH`, ""},
		{"programs that exist", `{"mcpServers": {"a": {"command": "echo"}}, "commands": {"e": {"command": "echo", "actions": {"say": {}}}}}`,
			0, "is valid", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "toolfold.json", tt.config)
			code, stdout, stderr := runCLI(t, dir, nil, "check")
			if code != tt.code || !strings.Contains(stdout, tt.stdout) || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("exit %d (want %d)\nstdout: %s\nstderr: %s", code, tt.code, stdout, stderr)
			}
			if tt.stderr == "" && strings.Contains(stderr, missing) {
				t.Errorf("a warning about a program that need not be there: %s", stderr)
			}
		})
	}
}
