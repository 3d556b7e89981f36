package main

import (
	"strings"
	"testing"
)

// TestCheckPrintsSandboxes: check prints each stdio server's effective
// rules and names those that run without a sandbox.
func TestCheckPrintsSandboxes(t *testing.T) {
	tests := []struct {
		name, config string
		want, not    []string
	}{
		{"sandboxed and open", `{"mcpServers": {"boxed": {"command": "echo", "sandbox": {"preset": "go", "network": [443], "limits": {"processes": 8}}}, "open": {"command": "echo"}}}`,
			[]string{"boxed (preset go):", "exec:  ", "/usr/bin/echo", "network: TCP connect to port 443", "limits: processes 8", "Without a sandbox", ": open"}, []string{": boxed\n"}},
		{"defaults sandbox every stdio server", `{"serverDefaults": {"sandbox": {}}, "mcpServers": {"a": {"command": "echo"}}}`,
			[]string{"a (preset none):", "network: no TCP"}, []string{"Without a sandbox"}},
		{"remote servers are not named", `{"mcpServers": {"r": {"url": "https://example.com/mcp"}}}`,
			nil, []string{"Without a sandbox"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "toolfold.json", tt.config)
			code, stdout, stderr := runCLI(t, dir, nil, "check")
			if code != 0 {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("no %q in:\n%s", w, stdout)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(stdout, n) {
					t.Errorf("%q in:\n%s", n, stdout)
				}
			}
		})
	}
}
