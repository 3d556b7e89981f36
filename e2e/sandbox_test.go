package e2e

import (
	"encoding/json"
	"fmt"
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
