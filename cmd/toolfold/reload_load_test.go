package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callOutcome is a tool call's text, or its error as text.
func callOutcome(ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return err.Error(), false
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, ""), !res.IsError
}

// TestReloadUnderLoad reloads, removing server b and adding c, in the middle
// of a stream of concurrent calls, over stdio and over HTTP. Every call is
// answered once: a's calls by a's one process throughout, b's by b until it
// is removed and then by an error that says why, and a call on b admitted
// before the reload runs to its answer before b stops.
func TestReloadUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts stdio servers")
	}
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, "toolfold.json")
			writeConfigJSON(t, dir, "toolfold.json", map[string]any{"mcpServers": map[string]any{"a": pidServer(t), "b": pidServer(t)}})
			var cs *mcp.ClientSession
			var log *lineWriter
			if transport == "stdio" {
				s := startStdioServe(t, dir, "--mode", "flat", "--config", cfg)
				s.waitTools(t, "a__pid", "b__pid")
				cs, log = s.cs, s.log
			} else {
				log = &lineWriter{lines: make(chan string, 10000)}
				url := startHTTPServe(t, dir, log, "--mode", "flat", "--config", cfg)
				changed := make(chan struct{}, 100)
				var err error
				cs, err = mcp.NewClient(&mcp.Implementation{Name: "load", Version: "1"}, &mcp.ClientOptions{
					ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
				}).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cs.Close() })
				(&stdioServe{cs: cs, changed: changed}).waitTools(t, "a__pid", "b__pid")
			}
			ctx := t.Context()
			pidA, _ := callOutcome(ctx, cs, "a__pid", nil)
			pidB, _ := callOutcome(ctx, cs, "b__pid", nil)

			// A call admitted on b before the reload, held open: the
			// pipe's open for writing returns once b is reading it.
			gate := filepath.Join(t.TempDir(), "gate")
			if err := syscall.Mkfifo(gate, 0o600); err != nil {
				t.Fatal(err)
			}
			held := make(chan string, 1)
			go func() {
				out, _ := callOutcome(context.Background(), cs, "b__gate", map[string]any{"path": gate})
				held <- out
			}()
			release, err := os.OpenFile(gate, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}

			stop := make(chan struct{})
			var wg sync.WaitGroup
			var mu sync.Mutex
			var bad []string
			var aCalls, bAnswered, bRefused int
			warm := make(chan struct{}, 1000) // a call to b answered
			for range 4 {
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
						}
						if out, ok := callOutcome(ctx, cs, "a__pid", nil); !ok || out != pidA {
							mu.Lock()
							bad = append(bad, fmt.Sprintf("a__pid: %q (ok %v), want %s", out, ok, pidA))
							mu.Unlock()
						} else {
							mu.Lock()
							aCalls++
							mu.Unlock()
						}
						out, ok := callOutcome(ctx, cs, "b__pid", nil)
						mu.Lock()
						switch {
						case ok && out == pidB:
							bAnswered++
							select {
							case warm <- struct{}{}:
							default:
							}
						case !ok && removedMessage(out):
							if bRefused == 0 {
								t.Logf("b refused: %s", out)
							}
							bRefused++
						default:
							bad = append(bad, fmt.Sprintf("b__pid: %q (ok %v)", out, ok))
						}
						mu.Unlock()
					}
				})
			}
			guard, cancel := hangGuard(t)
			defer cancel()
			for range 8 { // the stream is flowing before the reload
				select {
				case <-warm:
				case <-guard.Done():
					t.Fatal("no call to b was answered before the reload")
				}
			}
			writeConfigJSON(t, dir, "toolfold.json", map[string]any{"mcpServers": map[string]any{"a": pidServer(t), "c": pidServer(t)}})
			log.waitLine(t, "audit: config reload applied")
			// From here on b is out of the catalog: its calls are refused.
			// The catalog was swapped before the audit line: the gateway
			// itself says why the tool is gone.
			if out, ok := callOutcome(ctx, cs, "b__pid", nil); ok || !strings.Contains(out, `tool "b__pid" was removed by a config change`) {
				t.Errorf("a call to b after the reload: %q (ok %v), want an error saying it was removed", out, ok)
			}
			release.Close()
			if got := <-held; got != "released" {
				t.Errorf("the call admitted on b before the reload got %q, want released", got)
			}
			log.waitLine(t, "stopped: removed or changed by a config change")
			close(stop)
			wg.Wait()
			for _, b := range bad {
				t.Error(b)
			}
			if bAnswered < 8 || bRefused == 0 {
				t.Errorf("the load did not span the reload: %d calls to a, %d to b answered, %d refused", aCalls, bAnswered, bRefused)
			}
			t.Logf("%d calls to a, %d to b answered before the reload, %d refused after", aCalls, bAnswered, bRefused)
		})
	}
}

// removedMessage tells the errors a call to a server removed by a reload may
// get: the upstream's, while the catalog still lists the tool, and the
// gateway's once the catalog no longer does.
func removedMessage(s string) bool {
	return strings.Contains(s, `upstream "b" was removed by a config change`) ||
		strings.Contains(s, `tool "b__pid" was removed by a config change: its server "b" is no longer in the config`)
}
