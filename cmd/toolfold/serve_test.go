package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// A pending start answers clients before its catalog is complete, but a
// config the complete catalog refuses still stops serve, with the error a
// start that waited would have given: here an initial group the cached
// server could have brought, but did not.
func TestServeStopsOnAConfigTheCompleteCatalogRefuses(t *testing.T) {
	dir := t.TempDir()
	writeConfigJSON(t, dir, "toolfold.json", map[string]any{
		"mcpServers": map[string]any{"x": map[string]any{"command": testBinary(t), "env": map[string]string{"TOOLFOLD_TEST_HELPER": "mcp"}}},
		"disclosure": map[string]any{"initialGroups": []string{"x.nope"}},
	})
	for _, how := range []string{"http", "stdio"} {
		t.Run(how, func(t *testing.T) { serveStopsOnRefusedConfig(t, dir, how) })
	}
}

// serveStopsOnRefusedConfig runs serve over how ("http", or "stdio" with
// a client that never says a word, so only ctx can end its first read).
func serveStopsOnRefusedConfig(t *testing.T, dir, how string) {
	cache := t.TempDir()
	t.Chdir(dir)
	cli := func(ctx context.Context, args ...string) (int, string) {
		var out, errb bytes.Buffer
		var stdin io.ReadCloser = io.NopCloser(strings.NewReader(""))
		if args[0] == "serve" && how == "stdio" {
			silent, w := io.Pipe()
			defer w.Close()
			stdin = silent
		}
		e := env{stdin: stdin, stdout: nopCloser{&out}, stderr: &errb,
			lookupEnv: func(k string) (string, bool) {
				if k == "TOOLFOLD_CACHE_DIR" {
					return cache, true
				}
				return "", false
			}}
		return run(ctx, args, e), errb.String()
	}
	// The server's list goes into the cache, so serve's catalog is
	// complete without starting it.
	if code, stderr := cli(context.Background(), "tools"); code != 0 {
		t.Fatalf("tools: exit %d\n%s", code, stderr)
	}
	// A guard, not a timing: serve that never stopped would hang the test.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := []string{"serve", "--http", "127.0.0.1:0"}
	if how == "stdio" {
		args = []string{"serve"}
	}
	code, stderr := cli(ctx, args...)
	if ctx.Err() != nil {
		t.Fatalf("serve kept serving a catalog its config refuses\n%s", stderr)
	}
	if code != 1 || !strings.Contains(stderr, `group "x.nope" does not exist`) {
		t.Errorf("serve: exit %d, want 1 naming the missing group\n%s", code, stderr)
	}
}
