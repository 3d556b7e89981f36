package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// TestLongGroupNameIsShortenedOnTheWire checks docs/design.md#expositions: a group name longer
// than the 64 characters of the wire is served under a stable shortened
// name with a hash suffix, not refused.
func TestLongGroupNameIsShortenedOnTheWire(t *testing.T) {
	long := "analytics-and-reporting-for-the-customer-success-organisation-emea-region"
	cfg := writeConfig(t, map[string]any{
		"commands": map[string]any{"sys": map[string]any{
			"command": "echo", "description": "Print words",
			"actions": map[string]any{"say": map[string]any{"description": "Say it", "readOnly": true}},
		}},
		"groups": map[string]any{long: map[string]any{"description": "A long name", "tools": []string{"sys__*"}}},
	})
	out, err := exec.Command(binary, "check", "--config", cfg).CombinedOutput()
	if err != nil {
		t.Fatalf("toolfold check refused a long group name: %v\n%s", err, out)
	}
	var names []string
	for range 2 { // the same config yields the same name
		s := stdioSession(t, "e2e", "--config", cfg, "--mode", "grouped")
		names = append(names, s.names())
	}
	want := long[:55] + "_"
	if names[0] != names[1] || !strings.Contains(names[0], want) {
		t.Fatalf("grouped tool names %q; want one starting %q, the same each run", names, want)
	}
	for name := range strings.SplitSeq(names[0], ",") {
		if len(name) > 64 {
			t.Errorf("wire name %q is longer than 64", name)
		}
	}
}

// TestStdioBinarySurvivesAMalformedLine drives the real binary: a bad line
// gets a JSON-RPC error, the next request is served, and the process ends
// cleanly when stdin closes.
func TestStdioBinarySurvivesAMalformedLine(t *testing.T) {
	cmd := exec.Command(binary, "demo")
	cmd.Env = append(cmd.Environ(), "TOOLFOLD_DEMO_SANDBOX="+t.TempDir())
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(stdout)
	reply := func() map[string]any {
		t.Helper()
		for {
			line, err := out.ReadBytes('\n')
			if err != nil {
				t.Fatalf("toolfold's stdout ended: %v", err)
			}
			var m map[string]any
			if err := json.Unmarshal(line, &m); err != nil {
				t.Fatalf("not JSON on stdout: %q", line)
			}
			if _, note := m["method"]; !note {
				return m
			}
		}
	}
	send := func(s string) { io.WriteString(stdin, s+"\n") }
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`)
	reply()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, bad := range []string{`{"jsonrpc":"2.0",`, `[]`, `{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`} {
		send(bad)
		m := reply()
		e, _ := m["error"].(map[string]any)
		if code, _ := e["code"].(float64); code != -32700 && code != -32600 {
			t.Errorf("%s: got %v, want a -32700 or -32600 error", bad, m)
		}
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if m := reply(); m["result"] == nil {
		t.Fatalf("tools/list after malformed lines: %v", m)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("toolfold serve ended with %v after stdin closed; want exit 0", err)
	}
}

// TestCheckWarnsOnceAboutGlobsThatMatchNothing checks docs/design.md#config: a server's
// include or exclude glob and a group's tool glob that match nothing are
// each warned about once, by check as by the inspection commands.
func TestCheckWarnsOnceAboutGlobsThatMatchNothing(t *testing.T) {
	server := goFixture(t)
	cfg := writeConfig(t, map[string]any{
		"mcpServers": map[string]any{"every": map[string]any{"command": server, "include": []string{"nothing_*", "test_*"}, "exclude": []string{"zzz"}}},
		"groups":     map[string]any{"g": map[string]any{"description": "G", "tools": []string{"zz*", "every__*"}}},
	})
	cache := "TOOLFOLD_CACHE_DIR=" + t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(binary, append(args, "--config", cfg)...)
		cmd.Env = append(cmd.Environ(), cache)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("toolfold %s: %v\n%s", args[0], err, stderr.String())
		}
		return stderr.String()
	}
	wants := []string{`mcpServers.every.include[0]: "nothing_*" matches none`, `mcpServers.every.exclude[0]: "zzz" matches none`, `tool pattern "zz*" matches no tool`}
	for _, args := range [][]string{{"groups"}, {"check"}, {"tools"}} { // groups discovers and caches; check reads the cache
		stderr := run(args...)
		for _, w := range wants {
			if n := strings.Count(stderr, w); n != 1 {
				t.Errorf("toolfold %s warns %d times about %s, want once:\n%s", args[0], n, w, stderr)
			}
		}
		if strings.Contains(stderr, `"test_*" matches none`) {
			t.Errorf("a glob that matches warned about:\n%s", stderr)
		}
	}
}
