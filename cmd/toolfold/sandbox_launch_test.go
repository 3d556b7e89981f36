package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/sandbox"
	"github.com/toolfold/toolfold/internal/sandbox/launch"
)

// truePolicy is the policy of a sandboxed "true", as Prepare would pass
// it to the launcher.
func truePolicy(t testing.TB) string {
	t.Helper()
	p, err := sandbox.Resolve("t", &config.SandboxConfig{Preset: "go"}, "true", "")
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return launch.PolicyEnv + "=" + string(data)
}

// TestLaunchSkipsHeavyInit: a sandboxed start runs the launcher before
// toolfold's heavy packages are initialised, so it does not pay for
// them (that was most of the sandbox's start cost). The test binary has
// toolfold's imports; GODEBUG=inittrace=1 lists each package initialised
// before the launcher execve's the server.
func TestLaunchSkipsHeavyInit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox is enforced on Linux")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = []string{"GODEBUG=inittrace=1", "PATH=" + os.Getenv("PATH"), truePolicy(t)}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the sandboxed true: %v\n%s", err, stderr.String())
	}
	trace := stderr.String()
	if !strings.Contains(trace, "init github.com/landlock-lsm/go-landlock/landlock ") {
		t.Fatalf("no init trace of the launcher's own imports:\n%s", trace)
	}
	for _, heavy := range []string{
		"init go.opentelemetry.io/otel/sdk/resource ",
		"init google.golang.org/grpc ",
		"init github.com/toolfold/toolfold/internal/cmdtool ",
		"init github.com/toolfold/toolfold/internal/trust ",
		"init github.com/modelcontextprotocol/go-sdk/mcp ",
	} {
		if strings.Contains(trace, heavy) {
			t.Errorf("the launcher ran after %q: a sandboxed start pays for toolfold's initialisation again", strings.TrimPrefix(heavy, "init "))
		}
	}
}

// BenchmarkSandboxStart is what the launcher (used for a block with
// resource limits) adds to a server's start, with toolfold's own imports
// in it (this test binary): "true" started and waited for, plainly and
// through the launcher. cpu-ms/op is
// the CPU time of the started process, steadier than wall time on a
// loaded machine.
//
//	go test -run '^$' -bench SandboxStart -benchtime 100x ./cmd/toolfold/
func BenchmarkSandboxStart(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("the sandbox is enforced on Linux")
	}
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	policy := truePolicy(b)
	for _, bc := range []struct {
		name string
		cmd  func() *exec.Cmd
	}{
		{"plain", func() *exec.Cmd { return exec.Command("true") }},
		{"sandbox", func() *exec.Cmd {
			c := exec.Command(self)
			c.Env = []string{"PATH=" + os.Getenv("PATH"), policy}
			return c
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var cpu time.Duration
			for b.Loop() {
				c := bc.cmd()
				if out, err := c.CombinedOutput(); err != nil {
					b.Fatalf("%v: %s", err, out)
				}
				cpu += c.ProcessState.UserTime() + c.ProcessState.SystemTime()
			}
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}
