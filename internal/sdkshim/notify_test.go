package sdkshim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/sdkshim"
)

// TestSDKAnnouncesToolChangesThroughTheSendingMiddleware: adding a tool to
// a serving server makes the SDK send tools/list_changed, and it passes
// the sending middleware, where ListChangedTap drops it so that its owner
// announces changes itself.
func TestSDKAnnouncesToolChangesThroughTheSendingMiddleware(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "bare"}, &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}})
	seen := make(chan string, 4)
	s.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if strings.HasPrefix(method, "notifications/") {
				seen <- method
			}
			return next(ctx, method, req)
		}
	})
	heard := make(chan struct{}, 4)
	bareServer(t, s, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { heard <- struct{}{} }})
	s.AddTool(&mcp.Tool{Name: "late", InputSchema: json.RawMessage(`{"type":"object"}`)}, noArgs)
	if got := <-seen; got != sdkshim.ToolsListChanged {
		t.Fatalf("the sending middleware saw %q, want %s", got, sdkshim.ToolsListChanged)
	}
	<-heard
}

// TestSDKBuildsTheSendingChainAtOnce: AddSendingMiddleware calls the
// middleware with its next handler before it returns. ListChangedTap keeps
// that next to send notifications past its own drop; if the SDK built the
// chain later, TapListChanged fails (and without that check the gateway's
// list_changed would silently go nowhere).
func TestSDKBuildsTheSendingChainAtOnce(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "bare"}, nil)
	var next mcp.MethodHandler
	s.AddSendingMiddleware(func(n mcp.MethodHandler) mcp.MethodHandler {
		next = n
		return n
	})
	if next == nil {
		t.Fatal("AddSendingMiddleware returned before handing the middleware its next handler")
	}
}

// lockedBuffer is a bytes.Buffer for a transport's log, written by the
// session's reading goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestListChangedTapSendsBeforeTheResult: Notify from a tool's handler
// reaches the client before the call's result, and only the session it
// names hears it.
func TestListChangedTapSendsBeforeTheResult(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "bare"}, &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}})
	tap, err := sdkshim.TapListChanged(s, sdkshim.ToolsListChanged)
	if err != nil {
		t.Fatal(err)
	}
	s.AddTool(&mcp.Tool{Name: "change", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, tap.Notify(ctx, req.Session)
	})
	connect := func(log *lockedBuffer) *mcp.ClientSession {
		ct, st := mcp.NewInMemoryTransports()
		if _, err := s.Connect(context.Background(), st, nil); err != nil {
			t.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "pin", Version: "1"}, nil).Connect(context.Background(), &mcp.LoggingTransport{Transport: ct, Writer: log}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	var callerLog, otherLog lockedBuffer
	caller := connect(&callerLog)
	other := connect(&otherLog)
	if _, err := caller.CallTool(context.Background(), &mcp.CallToolParams{Name: "change"}); err != nil {
		t.Fatal(err)
	}
	wire := callerLog.String()
	note, result := strings.Index(wire, sdkshim.ToolsListChanged), strings.Index(wire, `"isError"`)
	if result < 0 {
		result = strings.LastIndex(wire, `"content"`)
	}
	if note < 0 || result < 0 || note > result {
		t.Fatalf("the caller's wire does not carry the list change before the result:\n%s", wire)
	}
	// A ping answered after the call shows the other session had time to
	// read anything sent to it before.
	if err := other.Ping(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(otherLog.String(), sdkshim.ToolsListChanged) {
		t.Errorf("another session heard the tap's notification:\n%s", otherLog.String())
	}
}

// TestListChangedTapDropsTheSDKsOwn: a registry change's list_changed
// stops at the tap; other notifications pass. The SDK's debounce runs on
// synctest's clock, so the test waits for it without a real sleep.
func TestListChangedTapDropsTheSDKsOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := mcp.NewServer(&mcp.Implementation{Name: "bare"}, &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{
			Tools: &mcp.ToolCapabilities{ListChanged: true}, Prompts: &mcp.PromptCapabilities{ListChanged: true}}})
		var mu sync.Mutex
		var passed []string
		// Added first, so inside the tap: it sees what the tap lets through.
		s.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				mu.Lock()
				passed = append(passed, method)
				mu.Unlock()
				return next(ctx, method, req)
			}
		})
		if _, err := sdkshim.TapListChanged(s, sdkshim.ToolsListChanged); err != nil {
			t.Fatal(err)
		}
		ct, st := mcp.NewInMemoryTransports()
		ss, err := s.Connect(t.Context(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "pin", Version: "1"}, nil).Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		s.AddTool(&mcp.Tool{Name: "late", InputSchema: json.RawMessage(`{"type":"object"}`)}, noArgs)
		s.AddPrompt(&mcp.Prompt{Name: "late"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{}, nil
		})
		time.Sleep(time.Second) // synctest's clock: past the SDK's debounce
		synctest.Wait()
		mu.Lock()
		got := strings.Join(passed, ",")
		mu.Unlock()
		if strings.Contains(got, sdkshim.ToolsListChanged) || !strings.Contains(got, sdkshim.PromptsListChanged) {
			t.Errorf("past the tap went %q; want the prompts' list_changed and not the tools'", got)
		}
		cs.Close()
		ss.Wait()
	})
}

func TestTapListChangedRefusesOtherMethods(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "bare"}, nil)
	if _, err := sdkshim.TapListChanged(s, "notifications/message"); err == nil || !strings.Contains(err.Error(), sdkshim.ToolsListChanged) {
		t.Fatalf("TapListChanged of another method: %v; want an error naming the methods it takes", err)
	}
}
