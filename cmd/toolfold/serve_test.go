package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeHTTPOnAPortInUseStartsNothing: serve takes its address before it
// starts any server, so a port in use fails at once, saying which address
// and what to do, and the server that would leave a marker never runs.
func TestServeHTTPOnAPortInUseStartsNothing(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := t.TempDir()
	marker := filepath.Join(dir, "started")
	writeConfigJSON(t, dir, "toolfold.json", map[string]any{"mcpServers": map[string]any{"eager": map[string]any{
		"command": testBinary(t), "lazy": false,
		"env": map[string]string{"TOOLFOLD_TEST_HELPER": "marker", "TOOLFOLD_TEST_MARKER": marker}}}})
	addr := taken.Addr().String()
	code, _, stderr := runCLI(t, dir, nil, "serve", "--http", addr)
	if code != 1 || !strings.Contains(stderr, "cannot listen on "+addr+", which another program (perhaps another toolfold) is using") || !strings.Contains(stderr, "pick another address with --http") {
		t.Errorf("serve on a port in use: exit %d, want 1 naming the address and the fix\nstderr: %s", code, stderr)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("the server was started before the address was taken (marker: %v)", err)
	}
}

// TestClientLeavingDuringStartIsQuiet: a stdio client that hangs up while
// a server is still starting ends the session as any client leaving does:
// the start cut short by the shutdown is no warning.
func TestClientLeavingDuringStartIsQuiet(t *testing.T) {
	dir := t.TempDir()
	writeConfigJSON(t, dir, "toolfold.json", map[string]any{"mcpServers": map[string]any{"slow": map[string]any{
		"command": testBinary(t), "lazy": false, "env": map[string]string{"TOOLFOLD_TEST_HELPER": "hang"}}}})
	// runCLI's stdin is empty: the client is gone before serve reads it.
	code, _, stderr := runCLI(t, dir, nil, "serve")
	if code != 0 {
		t.Fatalf("serve: exit %d\nstderr: %s", code, stderr)
	}
	if strings.Contains(stderr, "level=WARN") || strings.Contains(stderr, "level=ERROR") {
		t.Errorf("a client leaving while a server starts is an ordinary end, but serve warned:\n%s", stderr)
	}
}
