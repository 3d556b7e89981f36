package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary stands in for the programs a config starts, chosen by
// $TOOLFOLD_TEST_HELPER (set in the config's env, since a stdio server
// inherits little else):
//
//	toolfold  runs as toolfold itself, first adding a line with its
//	          $TOOLFOLD_DEPTH to $TOOLFOLD_TEST_STARTS (to count starts)
//	marker    creates $TOOLFOLD_TEST_MARKER and exits
//	hang      reads stdin to its end and never answers
//	mcp       an MCP server whose instructions quote $TOKEN
//	pid       an MCP server whose tool pid answers its process id and
//	          whose tool gate answers once the named pipe at its path
//	          argument is opened to write
func TestMain(m *testing.M) {
	switch os.Getenv("TOOLFOLD_TEST_HELPER") {
	case "":
		os.Exit(m.Run())
	case "toolfold":
		os.Exit(helperToolfold())
	case "marker":
		_ = os.WriteFile(os.Getenv("TOOLFOLD_TEST_MARKER"), []byte("started\n"), 0o644)
		os.Exit(1)
	case "hang":
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	case "pid":
		os.Exit(helperPID())
	case "mcp":
		srv := mcp.NewServer(&mcp.Implementation{Name: "leaky", Version: "1"}, &mcp.ServerOptions{
			Instructions: "Log in with the token " + os.Getenv("TOKEN") + " if asked.",
		})
		mcp.AddTool(srv, &mcp.Tool{Name: "ping", Description: "Answer pong."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, nil, nil
		})
		if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(3)
}

// maxHelperStarts bounds the toolfold stand-in, so that a test of the
// nesting limit cannot fork without end when the limit is broken.
const maxHelperStarts = 10

func helperToolfold() int {
	starts := os.Getenv("TOOLFOLD_TEST_STARTS")
	if before, err := os.ReadFile(starts); err == nil && strings.Count(string(before), "\n") >= maxHelperStarts {
		fmt.Fprintln(os.Stderr, "helper: too many starts, refusing")
		return 1
	}
	f, err := os.OpenFile(starts, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return 1
	}
	fmt.Fprintf(f, "depth=%s\n", os.Getenv("TOOLFOLD_DEPTH"))
	f.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, os.Args[1:], env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, lookupEnv: os.LookupEnv})
}

// testBinary is this test's executable, which TestMain turns into a helper.
func testBinary(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Skipf("cannot find the test binary: %v", err)
	}
	return self
}

// startsOf reads the lines the toolfold stand-in wrote: one per start.
func startsOf(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(data))
}

func helperPID() int {
	srv := mcp.NewServer(&mcp.Implementation{Name: "pid", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "pid", Description: "Answer the process id."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(os.Getpid())}}}, nil, nil
	})
	type gateArgs struct {
		Path string `json:"path"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "gate", Description: "Answer once the named pipe at path is opened to write."}, func(_ context.Context, _ *mcp.CallToolRequest, a gateArgs) (*mcp.CallToolResult, any, error) {
		if _, err := os.ReadFile(a.Path); err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil, nil
	})
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		return 1
	}
	return 0
}
