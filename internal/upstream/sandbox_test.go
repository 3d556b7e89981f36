package upstream

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/logtest"
)

// probeEnv makes the test binary a server with one tool, "try", that
// attempts what it is told and answers "ok" or "refused: <why>", so a
// test can ask a sandboxed server to break its rules and see the kernel
// refuse while the server keeps serving.
const probeEnv = "TOOLFOLD_SANDBOX_PROBE"

type probeArgs struct {
	Op  string `json:"op"`  // read, write, exec, connect, spawn
	Arg string `json:"arg"` // a path, a port, or a number of children
}

func runProbe() int {
	if os.Getenv(probeEnv) == "hold" { // a child of "spawn": wait for stdin to end
		_, _ = os.Stdin.Read(make([]byte, 1))
		return 0
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "probe", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "try", Description: "Attempt an operation."}, func(_ context.Context, _ *mcp.CallToolRequest, a probeArgs) (*mcp.CallToolResult, any, error) {
		msg := "ok"
		if err := probe(a); err != nil {
			msg = "refused: " + err.Error()
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}}, nil, nil
	})
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		return 1
	}
	return 0
}

func probe(a probeArgs) error {
	switch a.Op {
	case "read":
		_, err := os.ReadFile(a.Arg)
		return err
	case "write":
		return os.WriteFile(a.Arg, []byte("x"), 0o600)
	case "exec":
		return exec.Command(a.Arg).Run()
	case "connect":
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+a.Arg, 5*time.Second)
		if err == nil {
			c.Close()
		}
		return err
	case "spawn":
		var n int
		fmt.Sscan(a.Arg, &n)
		self, _ := os.Executable()
		var kids []*exec.Cmd
		defer func() {
			for _, k := range kids {
				_ = k.Process.Kill()
				_ = k.Wait()
			}
		}()
		for i := range n {
			k := exec.Command(self)
			k.Env = append(os.Environ(), probeEnv+"=hold")
			if _, err := k.StdinPipe(); err != nil {
				return err
			}
			if err := k.Start(); err != nil {
				return fmt.Errorf("child %d: %w", i+1, err)
			}
			kids = append(kids, k)
		}
		return nil
	}
	return fmt.Errorf("unknown op %q", a.Op)
}

// TestSandboxEnforced asks a sandboxed server to read, write and execute
// outside its rules, connect to a port it was not given and start more
// processes than its limit; each must be refused while what it was
// given works and the server keeps serving. The same server without a
// sandbox does all of it: the control.
func TestSandboxEnforced(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox is enforced on Linux")
	}
	if testing.Short() {
		t.Skip("starts servers and child processes")
	}
	dir := t.TempDir()
	allowed := filepath.Join(dir, "allowed")
	secret := filepath.Join(dir, "secret")
	for _, d := range []string{allowed, secret} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(secret, "key"), []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(allowed, "note"), []byte("hi"), 0o600); err != nil {
		t.Fatal(err)
	}
	givenLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer givenLn.Close()
	otherLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer otherLn.Close()
	port := func(l net.Listener) string { return fmt.Sprint(l.Addr().(*net.TCPAddr).Port) }
	sh, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true(1) to execute")
	}

	box := &config.SandboxConfig{
		Preset:  "go",
		Write:   []string{allowed},
		Network: config.SandboxNetwork{Ports: []int{givenLn.Addr().(*net.TCPAddr).Port}},
		Limits:  config.SandboxLimits{Processes: 40},
	}
	boxed := fixture(t, "", map[string]string{probeEnv: "serve"})
	boxed.Env = config.SecretMap{probeEnv: "serve"}
	boxed.Sandbox = box
	plain := boxed
	plain.Sandbox = nil
	// A limit only a process can take sends the start through the
	// launcher (a re-executed toolfold) instead of a restricted thread:
	// both ways must hold the same rules.
	launched := boxed
	withLimit := *box
	withLimit.Limits.OpenFiles = 256
	launched.Sandbox = &withLimit
	var logs logtest.Buffer
	m := newTestManager(t, map[string]config.ServerConfig{"boxed": boxed, "launched": launched, "plain": plain}, &Options{Logger: logs.Logger(slog.LevelInfo)})

	tests := []struct {
		name    string
		op, arg string
		boxedOK bool // the control (plain) always succeeds
	}{
		{"read a granted file", "read", filepath.Join(allowed, "note"), true},
		{"read outside the rules", "read", filepath.Join(secret, "key"), false},
		{"write a granted dir", "write", filepath.Join(allowed, "new"), true},
		{"write outside the rules", "write", filepath.Join(secret, "new"), false},
		{"execute outside the rules", "exec", sh, false},
		{"connect to the given port", "connect", port(givenLn), true},
		{"connect to another port", "connect", port(otherLn), false},
		{"fork past the process limit", "spawn", "40", false},
		{"still serving after all that", "read", filepath.Join(allowed, "note"), true},
	}
	try := func(t *testing.T, server, op, arg string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		res, err := m.CallTool(ctx, server, &mcp.CallToolParams{Name: "try", Arguments: probeArgs{Op: op, Arg: arg}}, nil)
		if err != nil {
			t.Fatalf("%s: calling try: %v", server, err)
		}
		return text(res)
	}
	defer func() { // the start's log line names its rules, in the server's logger
		var line string
		for l := range strings.Lines(logs.String()) {
			if strings.Contains(l, "starting the server in its sandbox") && strings.Contains(l, "upstream=boxed") {
				line = l
			}
		}
		for _, want := range []string{"via=thread", "write: ", allowed, "TCP connect to port", "processes 40"} {
			if !strings.Contains(line, want) {
				t.Errorf("the start's log line %q does not name %q; logs:\n%s", line, want, logs.String())
			}
		}
	}()
	defer func() { // /api and the dashboard read this
		for _, st := range m.Status() {
			if want := map[string]string{"boxed": "preset go", "launched": "preset go", "plain": "none"}[st.Name]; !strings.HasPrefix(st.Sandbox, want) {
				t.Errorf("status of %s says sandbox %q, want %q", st.Name, st.Sandbox, want)
			}
		}
	}()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := try(t, "plain", tt.op, tt.arg); got != "ok" {
				t.Errorf("control without a sandbox: %s", got)
			}
			for _, server := range []string{"boxed", "launched"} {
				got := try(t, server, tt.op, tt.arg)
				t.Logf("%s: %s", server, got)
				if tt.boxedOK && got != "ok" {
					t.Errorf("%s: %s, want ok", server, got)
				}
				if !tt.boxedOK && !strings.HasPrefix(got, "refused: ") {
					t.Errorf("%s: %s, want refused by the kernel", server, got)
				}
			}
		})
	}
}
