package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplay answers initialize, tools/list with the recorded tools as
// they are, and a call with what it reached; notifications get no answer.
func TestReplay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "srv.json")
	if err := os.WriteFile(path, []byte(`{"tools":[{"name":"send","inputSchema":{"type":"object"}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"send","arguments":{"to":"x"}}}`,
	}, "\n")
	var out bytes.Buffer
	if err := run(path, strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `"protocolVersion":"2025-11-25"`) ||
		!strings.Contains(lines[1], `"tools":[{"name":"send","inputSchema":{"type":"object"}}]`) ||
		!strings.Contains(lines[2], `srv: send was called with {\"to\":\"x\"}`) {
		t.Errorf("replies:\n%s", out.String())
	}
}
