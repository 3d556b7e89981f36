package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// toolfoldEntry is a server entry that runs this test binary as toolfold.
func toolfoldEntry(t *testing.T, command, starts string, args ...string) map[string]any {
	t.Helper()
	return map[string]any{"command": command, "args": args,
		"env": map[string]string{"TOOLFOLD_TEST_HELPER": "toolfold", "TOOLFOLD_TEST_STARTS": starts}}
}

func writeConfigJSON(t *testing.T, dir, name string, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, dir, name, string(raw))
}

// TestConfigThatRunsToolfoldOnItselfIsRefused: a config listing toolfold
// on that same config (as a client config that now lists toolfold does)
// is refused by check and serve alike, naming the entry, and nothing is
// started: no fork storm.
func TestConfigThatRunsToolfoldOnItselfIsRefused(t *testing.T) {
	self := testBinary(t)
	dir := t.TempDir()
	link := filepath.Join(dir, "toolfold-link")
	if err := os.Symlink(self, link); err != nil {
		t.Skipf("cannot make a symlink: %v", err)
	}
	starts := filepath.Join(dir, "starts")
	config := filepath.Join(dir, "toolfold.json")
	tests := []struct {
		name  string
		entry map[string]any
	}{
		{"the binary, default config", toolfoldEntry(t, self, starts, "serve")},
		{"through a symlink, --config", toolfoldEntry(t, link, starts, "serve", "--config", config)},
		{"--config=", toolfoldEntry(t, self, starts, "serve", "--config="+config)},
		{"$TOOLFOLD_CONFIG", map[string]any{"command": self, "args": []string{"serve"}, "env": map[string]string{"TOOLFOLD_CONFIG": "toolfold.json", "TOOLFOLD_TEST_HELPER": "toolfold", "TOOLFOLD_TEST_STARTS": starts}}},
		{"go run", map[string]any{"command": "go", "args": []string{"run", "-tags", "x", "./cmd/toolfold", "serve", "--config", config}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			writeConfigJSON(t, dir, "toolfold.json", map[string]any{"mcpServers": map[string]any{"again": tt.entry}})
			code, stdout, stderr := runCLI(t, dir, nil, "check")
			if code != 1 || !strings.Contains(stdout, "toolfold.json:") || !strings.Contains(stdout, "mcpServers.again.command: this server runs toolfold itself on this same config") {
				t.Errorf("check: exit %d, want 1 naming the entry\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			code, _, stderr = runCLI(t, dir, nil, "serve")
			if code != 1 || !strings.Contains(stderr, "mcpServers.again.command") {
				t.Errorf("serve: exit %d, want 1 naming the entry\nstderr: %s", code, stderr)
			}
			if got := startsOf(t, starts); len(got) != 0 {
				t.Errorf("toolfold was started %d times (%v), want none", len(got), got)
			}
		})
	}

	// toolfold on a config of its own is nesting, not a loop: allowed.
	writeConfigJSON(t, dir, "inner.json", map[string]any{"commands": map[string]any{"echo": map[string]any{"command": "echo", "actions": map[string]any{"say": map[string]any{}}}}})
	writeConfigJSON(t, dir, "toolfold.json", map[string]any{"mcpServers": map[string]any{"inner": toolfoldEntry(t, self, starts, "serve", "--config", "inner.json")}})
	if code, stdout, stderr := runCLI(t, dir, nil, "check"); code != 0 {
		t.Errorf("check of a toolfold serving another config: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
}

// TestNestingStopsAtMaxDepth: two configs that list each other (which no
// look at one config can see) start two toolfolds below the first, the
// last of which refuses to start more, naming the entry.
func TestNestingStopsAtMaxDepth(t *testing.T) {
	self := testBinary(t)
	dir := t.TempDir()
	starts := filepath.Join(dir, "starts")
	a := filepath.Join(dir, "a.json")
	b := filepath.Join(dir, "b.json")
	writeConfigJSON(t, dir, "a.json", map[string]any{"mcpServers": map[string]any{"b": toolfoldEntry(t, self, starts, "serve", "--config", b)}})
	writeConfigJSON(t, dir, "b.json", map[string]any{"mcpServers": map[string]any{"a": toolfoldEntry(t, self, starts, "serve", "--config", a)}})
	code, stdout, stderr := runCLI(t, dir, nil, "tools", "--config", a)
	// depth=2 is there unless the first toolfold is done before the one
	// at depth 2 began (a loaded machine): then it was never needed.
	if got := strings.Join(startsOf(t, starts), " "); got != "depth=1 depth=2" && got != "depth=1" {
		t.Errorf("toolfold started below the first: %s, want depth=1 then depth=2 and no more\nexit %d\nstdout: %s\nstderr: %s", got, code, stdout, stderr)
	}

	// What the one at depth 2 said, and what check says there.
	code, stdout, stderr = runCLI(t, dir, map[string]string{"TOOLFOLD_DEPTH": "2"}, "check", "--config", b)
	if code != 1 || !strings.Contains(stdout, "mcpServers.a: not started") || !strings.Contains(stdout, "TOOLFOLD_DEPTH=2") {
		t.Errorf("check at depth 2: exit %d, want 1 naming mcpServers.a\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if code, stdout, stderr = runCLI(t, dir, map[string]string{"TOOLFOLD_DEPTH": "1"}, "check", "--config", b); code != 0 {
		t.Errorf("check at depth 1: exit %d, want 0 (one toolfold may serve another)\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if code, _, stderr = runCLI(t, dir, map[string]string{"TOOLFOLD_DEPTH": "lots"}, "check", "--config", b); code != 1 || !strings.Contains(stderr, "unset it") {
		t.Errorf("check with a garbled depth: exit %d\nstderr: %s", code, stderr)
	}
}
