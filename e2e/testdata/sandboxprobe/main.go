// Command sandboxprobe is an MCP server over stdio with one tool, "try",
// that attempts what it is told (read, write, exec, connect, spawn) and
// answers "ok" or "refused: <why>", so the e2e tests can ask a sandboxed
// server to break its rules. With PROBE_AT_START=op:arg it also tries
// that once at start and puts the answer in the tool's description, so
// "toolfold tools" shows what the sandbox did.
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type args struct {
	Op  string `json:"op"`
	Arg string `json:"arg"`
}

func main() {
	if os.Getenv("PROBE_HOLD") != "" {
		_, _ = os.Stdin.Read(make([]byte, 1))
		return
	}
	desc := "Attempt an operation."
	if at := os.Getenv("PROBE_AT_START"); at != "" {
		op, arg, _ := strings.Cut(at, ":")
		desc += " At start: " + answer(args{op, arg})
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "probe", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "try", Description: desc}, func(_ context.Context, _ *mcp.CallToolRequest, a args) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: answer(a)}}}, nil, nil
	})
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		os.Exit(1)
	}
}

func answer(a args) string {
	if err := try(a); err != nil {
		return "refused: " + err.Error()
	}
	return "ok"
}

func try(a args) error {
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
		self, err := os.Executable()
		if err != nil {
			return err
		}
		var kids []*exec.Cmd
		defer func() {
			for _, k := range kids {
				_ = k.Process.Kill()
				_ = k.Wait()
			}
		}()
		for i := range n {
			k := exec.Command(self)
			k.Env = append(os.Environ(), "PROBE_HOLD=1")
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
