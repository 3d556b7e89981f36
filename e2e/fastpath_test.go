package e2e

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFastPathWithAReferenceServer drives toolfold over stdio, in front of
// server-everything, with a Go SDK client on the 2025-11-25 protocol that
// answers elicitation: the calls that need nothing of the SDK take the fast
// path (a flat tool of a running server, no progress token), and what
// happens during them still reaches the client: the server's elicitation
// request, and the client's cancellation. A call with a progress token
// takes the typed path and gets its progress.
func TestFastPathWithAReferenceServer(t *testing.T) {
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": nodeServer(t, "mcp-server-everything")},
	}})
	var mu sync.Mutex
	var elicited []string
	var progress []float64
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-fast", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			elicited = append(elicited, req.Params.Message)
			mu.Unlock()
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada Lovelace"}}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params.Progress)
			mu.Unlock()
		},
	})
	cmd := exec.Command(binary, "serve", "--config", path, "--mode", "flat")
	cmd.Env = append(cmd.Environ(), "TOOLFOLD_CACHE_DIR="+t.TempDir())
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connecting to toolfold over stdio: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	ctx := context.Background()
	call := func(ctx context.Context, name string, args map[string]any, meta mcp.Meta) (string, error) {
		return toolText(ctx, cs, name, args, meta)
	}

	// The first call starts the server (typed path); the next take the
	// fast path.
	for range 3 {
		if got, err := call(ctx, "everything__get-sum", map[string]any{"a": 19, "b": 23}, nil); err != nil || !strings.Contains(got, "42") {
			t.Fatalf("get-sum = %q, %v", got, err)
		}
	}

	got, err := call(ctx, "everything__trigger-elicitation-request", map[string]any{}, nil)
	if err != nil || !strings.Contains(got, "Ada Lovelace") {
		t.Errorf("elicitation during a call: %q, %v", got, err)
	}
	mu.Lock()
	if len(elicited) != 1 {
		t.Errorf("the client was asked %d times, want once: %q", len(elicited), elicited)
	}
	mu.Unlock()

	// Cancelled by the client while the server works: the call ends with
	// the client's error, and no late answer disturbs the session.
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(300*time.Millisecond, cancel)
	if _, err := call(cctx, "everything__trigger-long-running-operation", map[string]any{"duration": 30, "steps": 3}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled call ended with %v, want context.Canceled", err)
	}
	if got, err := call(ctx, "everything__get-sum", map[string]any{"a": 1, "b": 2}, nil); err != nil || !strings.Contains(got, "3") {
		t.Errorf("get-sum after a cancellation = %q, %v", got, err)
	}

	if _, err := call(ctx, "everything__trigger-long-running-operation", map[string]any{"duration": 0.6, "steps": 3}, mcp.Meta{"progressToken": "p1"}); err != nil {
		t.Fatalf("a call with progress: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(progress) == 0 {
		t.Error("a call with a progress token got no progress")
	}
}

// toolText calls a tool and returns its text, or its text as the error of
// a tool error.
func toolText(ctx context.Context, cs *mcp.ClientSession, name string, args any, meta mcp.Meta) (string, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args, Meta: meta})
	if err != nil {
		return "", err
	}
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	if res.IsError {
		return "", errors.New(strings.Join(text, "\n"))
	}
	return strings.Join(text, "\n"), nil
}

// TestFastPathOverAnHTTPSession: Go SDK clients on the 2025-11-25 protocol
// hold sessions with toolfold over streamable HTTP, in front of
// server-everything. A client that cannot be asked anything takes the fast
// path: its calls are answered, its cancellation ends the call and the
// session goes on, a call with a progress token gets its progress. A client
// that answers elicitation is asked during its call.
func TestFastPathOverAnHTTPSession(t *testing.T) {
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": nodeServer(t, "mcp-server-everything")},
	}})
	base := startHTTP(t, "--config", path, "--mode", "flat")
	ctx := context.Background()
	var mu sync.Mutex
	var progress []float64
	plain := mcp.NewClient(&mcp.Implementation{Name: "e2e-fast-http", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params.Progress)
			mu.Unlock()
		},
	})
	cs, err := plain.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connecting to toolfold over HTTP: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	for range 3 { // the first starts the server (typed path); the next take the fast path
		if got, err := toolText(ctx, cs, "everything__get-sum", map[string]any{"a": 19, "b": 23}, nil); err != nil || !strings.Contains(got, "42") {
			t.Fatalf("get-sum = %q, %v", got, err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(300*time.Millisecond, cancel)
	if _, err := toolText(cctx, cs, "everything__trigger-long-running-operation", map[string]any{"duration": 30, "steps": 3}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled call ended with %v, want context.Canceled", err)
	}
	if got, err := toolText(ctx, cs, "everything__get-sum", map[string]any{"a": 1, "b": 2}, nil); err != nil || !strings.Contains(got, "3") {
		t.Errorf("get-sum after a cancellation = %q, %v", got, err)
	}
	if _, err := toolText(ctx, cs, "everything__trigger-long-running-operation", map[string]any{"duration": 0.6, "steps": 3}, mcp.Meta{"progressToken": "p1"}); err != nil {
		t.Fatalf("a call with progress: %v", err)
	}
	mu.Lock()
	if len(progress) == 0 {
		t.Error("a call with a progress token got no progress")
	}
	mu.Unlock()

	asking := mcp.NewClient(&mcp.Implementation{Name: "e2e-asked-http", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada Lovelace"}}, nil
		},
	})
	as, err := asking.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connecting to toolfold over HTTP: %v", err)
	}
	t.Cleanup(func() { as.Close() })
	if got, err := toolText(ctx, as, "everything__trigger-elicitation-request", map[string]any{}, nil); err != nil || !strings.Contains(got, "Ada Lovelace") {
		t.Errorf("elicitation during a call over HTTP: %q, %v", got, err)
	}
}
