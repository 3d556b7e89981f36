package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sandboxProbe builds testdata/sandboxprobe, a server that tries on command.
func sandboxProbe(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "sandboxprobe")
	build := exec.Command("go", "build", "-o", bin, "./testdata/sandboxprobe")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the probe: %v\n%s", err, out)
	}
	return bin
}

// sandboxCase is one thing the probe tries, and whether its sandbox lets it.
type sandboxCase struct {
	name, op, arg string
	boxedOK       bool
}

// probeSetup writes a config of the probe twice, "boxed" in a sandbox and
// "plain" (the control) without, and the cases to try.
func probeSetup(t *testing.T, atStart string) (string, []sandboxCase) {
	t.Helper()
	probe := sandboxProbe(t)
	dir := t.TempDir()
	allowed, secret := filepath.Join(dir, "allowed"), filepath.Join(dir, "secret")
	for _, d := range []string{allowed, secret} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(secret, "key"), []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	given, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { given.Close() })
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	port := func(l net.Listener) int { return l.Addr().(*net.TCPAddr).Port }
	env := map[string]any{"PROBE_AT_START": fmt.Sprintf(atStart, secret)}
	cfg := writeConfig(t, map[string]any{"mcpServers": map[string]any{
		"boxed": map[string]any{"command": probe, "env": env, "sandbox": map[string]any{
			"preset": "go", "write": []string{allowed}, "network": []int{port(given)},
			"limits": map[string]any{"processes": 40},
		}},
		"plain": map[string]any{"command": probe, "env": env},
	}})
	return cfg, []sandboxCase{
		{"write granted", "write", filepath.Join(allowed, "new"), true},
		{"read outside", "read", filepath.Join(secret, "key"), false},
		{"write outside", "write", filepath.Join(secret, "new"), false},
		{"exec outside", "exec", "/bin/sh", false},
		{"connect given", "connect", fmt.Sprint(port(given)), true},
		{"connect other", "connect", fmt.Sprint(port(other)), false},
		{"fork past the limit", "spawn", "40", false},
		{"still serving", "write", filepath.Join(allowed, "again"), true},
	}
}

func judge(t *testing.T, boxed, plain string, boxedOK bool) {
	t.Helper()
	if !strings.Contains(plain, "ok") || strings.Contains(plain, "refused") {
		t.Errorf("control without a sandbox: %s", plain)
	}
	if boxedOK != !strings.Contains(boxed, "refused:") {
		t.Errorf("sandboxed: %s (want allowed: %v)", boxed, boxedOK)
	}
}

// TestSandboxThroughServe: a server started by serve runs in its sandbox.
func TestSandboxThroughServe(t *testing.T) {
	cfg, cases := probeSetup(t, "read:%s/key")
	s := stdioSessionEnv(t, "e2e-sandbox", []string{"TOOLFOLD_CACHE_DIR=" + t.TempDir()}, "--config", cfg, "--mode", "flat")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := map[string]any{"op": c.op, "arg": c.arg}
			judge(t, s.mustCall("boxed__try", args), s.mustCall("plain__try", args), c.boxedOK)
		})
	}
}

// TestSandboxThroughCall: a server started by call runs in its sandbox.
func TestSandboxThroughCall(t *testing.T) {
	cfg, cases := probeSetup(t, "read:%s/key")
	call := func(tool string, c sandboxCase) string {
		raw, _ := json.Marshal(map[string]any{"op": c.op, "arg": c.arg})
		cmd := exec.Command(binary, "call", "--config", cfg, "--mode", "flat", tool, string(raw))
		cmd.Env = append(cmd.Environ(), "TOOLFOLD_CACHE_DIR="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("call %s: %v\n%s", tool, err, out)
		}
		return string(out)
	}
	for _, c := range cases[:6] { // each call is a fresh start; the rest as in serve
		t.Run(c.name, func(t *testing.T) { judge(t, call("boxed__try", c), call("plain__try", c), c.boxedOK) })
	}
}

// TestSandboxThroughTools: a server started by tools runs in its sandbox
// from its first instruction: what it tried at start shows in its tool's
// description.
func TestSandboxThroughTools(t *testing.T) {
	cfg, _ := probeSetup(t, "read:%s/key")
	cmd := exec.Command(binary, "tools", "--config", cfg, "--json")
	cmd.Env = append(cmd.Environ(), "TOOLFOLD_CACHE_DIR="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tools: %v\n%s", err, out)
	}
	var boxed, plain string
	for _, line := range strings.Split(string(out), "At start: ") {
		switch {
		case strings.HasPrefix(line, "refused"):
			boxed = line
		case strings.HasPrefix(line, "ok"):
			plain = line
		}
	}
	if boxed == "" || plain == "" {
		t.Fatalf("want one server refused and the control allowed at start:\n%s", out)
	}
}

// TestReferenceServersInSandboxes: the npm reference servers start and
// serve a real call each from inside a node-preset sandbox that grants
// them their own install and the data they keep, and nothing else.
func TestReferenceServersInSandboxes(t *testing.T) {
	cfg, files := referenceServers(t)
	modules, err := filepath.Abs(filepath.Join("node", "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	servers := cfg["mcpServers"].(map[string]any)
	memory := servers["memory"].(map[string]any)
	memDir := filepath.Dir(memory["env"].(map[string]any)["MEMORY_FILE_PATH"].(string))
	box := func(write ...string) map[string]any {
		return map[string]any{"preset": "node", "exec": []string{modules}, "write": write, "network": false,
			"limits": map[string]any{"processes": 256, "openFiles": 1024}}
	}
	servers["everything"].(map[string]any)["sandbox"] = box()
	memory["sandbox"] = box(memDir)
	servers["files"].(map[string]any)["sandbox"] = box(files)
	delete(cfg, "disclosure")
	path := writeConfig(t, cfg)
	s := stdioSessionEnv(t, "e2e-sandbox", []string{"TOOLFOLD_CACHE_DIR=" + t.TempDir()}, "--config", path, "--mode", "flat")
	if text := s.mustCall("everything__get-sum", map[string]any{"a": 19, "b": 23}); !strings.Contains(text, "42") {
		t.Errorf("get-sum = %s", text)
	}
	s.mustCall("memory__create_entities", map[string]any{"entities": []any{map[string]any{"name": "Alice", "entityType": "person", "observations": []string{"works at Acme"}}}})
	if text := s.mustCall("memory__read_graph", map[string]any{}); !strings.Contains(text, "works at Acme") {
		t.Errorf("read_graph = %s", text)
	}
	note := filepath.Join(files, "note.txt")
	s.mustCall("files__write_file", map[string]any{"path": note, "content": "sandboxed"})
	if got, err := os.ReadFile(note); err != nil || string(got) != "sandboxed" {
		t.Errorf("the file written from the sandbox: %q, %v", got, err)
	}
}

// TestPythonServerInSandbox: a Python server starts and serves from
// inside a python-preset sandbox (the interpreter wherever it is
// installed, pyenv's shims included).
func TestPythonServerInSandbox(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	script, err := filepath.Abs(filepath.Join("testdata", "echo_server.py"))
	if err != nil {
		t.Fatal(err)
	}
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{
		"py": map[string]any{"command": python, "args": []string{script},
			"sandbox": map[string]any{"preset": "python", "read": []string{script}}},
	}})
	s := stdioSessionEnv(t, "e2e-sandbox", []string{"TOOLFOLD_CACHE_DIR=" + t.TempDir()}, "--config", path, "--mode", "flat")
	if text := s.mustCall("py__echo", map[string]any{"text": "from the sandbox"}); !strings.Contains(text, "echo: from the sandbox") {
		t.Errorf("echo = %s", text)
	}
}

// BenchmarkSandboxedServerStart is what a sandbox adds to the start of
// real servers: each op is "toolfold tools" with a fresh cache, which
// starts the server, lists its tools and stops it; toolfold's own start
// is the same in every variant. "thread" is a sandbox without resource
// limits (started from a restricted thread), "launcher" one with them
// (started through the re-executed toolfold).
//
//	go test -run '^$' -bench SandboxedServerStart -benchtime 10x ./e2e/
func BenchmarkSandboxedServerStart(b *testing.B) {
	modules, err := filepath.Abs(filepath.Join("node", "node_modules"))
	if err != nil {
		b.Fatal(err)
	}
	python, _ := exec.LookPath("python3")
	script, err := filepath.Abs(filepath.Join("testdata", "echo_server.py"))
	if err != nil {
		b.Fatal(err)
	}
	type server struct {
		name    string
		cfg     map[string]any
		preset  string
		grants  map[string]any
		missing string
	}
	servers := []server{
		{"memory", map[string]any{"command": filepath.Join(modules, ".bin", "mcp-server-memory"),
			"env": map[string]any{"MEMORY_FILE_PATH": filepath.Join(b.TempDir(), "memory.jsonl")}},
			"node", map[string]any{"exec": []string{modules}, "write": []string{b.TempDir()}}, filepath.Join(modules, ".bin", "mcp-server-memory")},
		{"python", map[string]any{"command": python, "args": []string{script}},
			"python", map[string]any{"read": []string{script}}, python},
	}
	for _, srv := range servers {
		if _, err := os.Stat(srv.missing); srv.missing == "" || err != nil {
			b.Logf("skipping %s: %s is missing (npm ci --prefix e2e/node; python3)", srv.name, srv.missing)
			continue
		}
		for _, variant := range []string{"plain", "thread", "launcher"} {
			cfg := maps.Clone(srv.cfg)
			if variant != "plain" {
				box := maps.Clone(srv.grants)
				box["preset"] = srv.preset
				if variant == "launcher" {
					box["limits"] = map[string]any{"openFiles": 1024}
				}
				cfg["sandbox"] = box
			}
			raw, err := json.Marshal(map[string]any{"mcpServers": map[string]any{srv.name: cfg}})
			if err != nil {
				b.Fatal(err)
			}
			path := filepath.Join(b.TempDir(), "toolfold.json")
			if err := os.WriteFile(path, raw, 0o644); err != nil {
				b.Fatal(err)
			}
			b.Run(srv.name+"/"+variant, func(b *testing.B) {
				for b.Loop() {
					cache, err := os.MkdirTemp("", "toolfold-bench-")
					if err != nil {
						b.Fatal(err)
					}
					cmd := exec.Command(binary, "tools", "--config", path)
					cmd.Env = append(cmd.Environ(), "TOOLFOLD_CACHE_DIR="+cache)
					out, err := cmd.CombinedOutput()
					os.RemoveAll(cache)
					if err != nil || !strings.Contains(string(out), srv.name+"__") {
						b.Fatalf("tools: %v\n%s", err, out)
					}
				}
			})
		}
	}
}
