package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// gatedMemory configures server-memory behind a gate: the server starts
// only once the test opens it, the way a slow server (a cold npx, a big
// JVM) starts long after toolfold does. The test decides when, so nothing
// here bets on timing.
func gatedMemory(t *testing.T) (server map[string]any, open func()) {
	t.Helper()
	bin := nodeServer(t, "mcp-server-memory")
	gate := filepath.Join(t.TempDir(), "gate")
	script := fmt.Sprintf(`while [ ! -e %q ]; do sleep 0.05; done; exec %q`, gate, bin)
	server = map[string]any{"command": "sh", "args": []string{"-c", script},
		"env": map[string]any{"MEMORY_FILE_PATH": filepath.Join(t.TempDir(), "memory.jsonl")}}
	return server, func() {
		if err := os.WriteFile(gate, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// waitLine is what toolfold logs (at debug level) when a request starts
// waiting for a server still starting.
const waitLine = "a request waits for servers still starting"

// coldSession starts `toolfold serve` over stdio with debug logging, as
// stdioSessionEnv does (on the stateful protocol), and returns with it a channel that receives one
// value for each request that toolfold says waits for a server still
// starting. A test opens a server's gate only once its requests are
// known to wait; otherwise it could pass without testing anything.
func coldSession(t *testing.T, name string, args ...string) (*session, <-chan struct{}) {
	t.Helper()
	c, s := newClient(t, name)
	cmd := exec.Command(binary, serveArgs(append([]string{"--log-level", "debug"}, args...)...)...)
	cmd.Env = append(cmd.Environ(), "TOOLFOLD_DEMO_SANDBOX="+t.TempDir(), "TOOLFOLD_CACHE_DIR="+t.TempDir())
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	waits := make(chan struct{}, 64)
	go func() {
		lines := bufio.NewScanner(stderr)
		lines.Buffer(nil, 1<<20)
		for lines.Scan() {
			if strings.Contains(lines.Text(), waitLine) {
				select {
				case waits <- struct{}{}:
				default: // more than any test waits for
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr) // never leave toolfold blocked on a full pipe
	}()
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: statefulProtocol})
	if err != nil {
		t.Fatalf("connecting to toolfold over stdio: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	s.ClientSession = cs
	return s, waits
}

// waitingRequests waits until toolfold has said n requests wait.
func waitingRequests(t *testing.T, waits <-chan struct{}, n int) {
	t.Helper()
	for i := range n {
		select {
		case <-waits:
		case <-time.After(time.Minute):
			t.Fatalf("toolfold logged %d of %d requests waiting for the starting server", i, n)
		}
	}
}

// answer is a call's outcome, gathered off the test goroutine.
type answer struct {
	text  string
	isErr bool
	err   error
}

func callAsync(s *session, name string, args any) <-chan answer {
	out := make(chan answer, 1)
	go func() {
		res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			out <- answer{err: err}
			return
		}
		out <- answer{text: resultText(res), isErr: res.IsError}
	}()
	return out
}

func listAsync(s *session) <-chan string {
	out := make(chan string, 1)
	go func() {
		res, err := s.ListTools(context.Background(), nil)
		if err != nil {
			out <- "error: " + err.Error()
			return
		}
		var names []string
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		out <- strings.Join(names, ",")
	}()
	return out
}

func mustAnswer(t *testing.T, what string, ch <-chan answer) string {
	t.Helper()
	select {
	case a := <-ch:
		if a.err != nil || a.isErr {
			t.Fatalf("%s: %v %s", what, a.err, a.text)
		}
		return a.text
	case <-time.After(time.Minute):
		t.Fatalf("%s never answered", what)
	}
	return ""
}

// A client that does not refresh its list on list_changed (flat mode, a
// client name not on the refreshing list) gets a first tools/list that
// holds the tools of a server still starting, and a call to one of them
// waits for the server and runs.
func TestColdStartFlatWaitsForPendingServer(t *testing.T) {
	memory, open := gatedMemory(t)
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{"memory": memory}})
	s, waits := coldSession(t, "e2e-go", "--config", path, "--mode", "flat")

	list := listAsync(s)
	call := callAsync(s, "memory__read_graph", map[string]any{})
	waitingRequests(t, waits, 2)
	open()
	select {
	case names := <-list:
		if !strings.Contains(names, "memory__read_graph") {
			t.Errorf("the first tools/list lacks the starting server's tools: %s", names)
		}
	case <-time.After(time.Minute):
		t.Fatal("tools/list never answered")
	}
	if text := mustAnswer(t, "memory__read_graph", call); !strings.Contains(text, "entities") {
		t.Errorf("read_graph = %s", text)
	}
}

// In the search mode, call_tool, find_tools and guidance wait for a server
// still starting instead of saying it has nothing.
func TestColdStartSearchMetaToolsWait(t *testing.T) {
	memory, open := gatedMemory(t)
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{"memory": memory}})
	s, waits := coldSession(t, "e2e-go", "--config", path, "--mode", "search")

	// The list of the search mode does not depend on the server: it
	// answers while the server is held back.
	if got := s.names(); got != "call_tool,describe_tools,find_tools,guidance" {
		t.Fatalf("search list = %s", got)
	}
	find := callAsync(s, "find_tools", map[string]any{"query": "read the knowledge graph"})
	call := callAsync(s, "call_tool", map[string]any{"name": "memory__read_graph", "arguments": map[string]any{}})
	guide := callAsync(s, "guidance", map[string]any{"topic": "memory"})
	describe := callAsync(s, "describe_tools", map[string]any{"names": []string{"memory__create_entities"}})
	waitingRequests(t, waits, 4)
	open()
	if text := mustAnswer(t, "find_tools", find); !strings.Contains(text, "memory__read_graph") {
		t.Errorf("find_tools found nothing of the starting server: %s", text)
	}
	if text := mustAnswer(t, "call_tool", call); !strings.Contains(text, "entities") {
		t.Errorf("call_tool read_graph = %s", text)
	}
	if text := mustAnswer(t, "guidance", guide); !strings.Contains(text, "read_graph") {
		t.Errorf("guidance lacks the server's tools: %s", text)
	}
	if text := mustAnswer(t, "describe_tools", describe); !strings.Contains(text, "entities") {
		t.Errorf("describe_tools = %s", text)
	}
}

// A client that refreshes on list_changed gets its list at once, and a
// list_changed when the server's tools arrive; enabling the server's group
// while it starts enables its tools.
func TestColdStartRefreshingClientIsToldLater(t *testing.T) {
	memory, open := gatedMemory(t)
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{"memory": memory}})
	s := stdioSessionEnv(t, "claude-code", []string{"TOOLFOLD_CACHE_DIR=" + t.TempDir()}, "--config", path, "--mode", "flat")
	// The gate is closed: this list can only come back at once, without
	// the server's tools.
	if got := s.names(); strings.Contains(got, "memory__") {
		t.Fatalf("memory's tools are listed before it started: %s", got)
	}
	open()
	s.waitChanged()
	if got := s.names(); !strings.Contains(got, "memory__read_graph") {
		t.Errorf("after list_changed the list lacks memory's tools: %s", got)
	}

	memory2, open2 := gatedMemory(t)
	path = writeConfig(t, map[string]any{"mcpServers": map[string]any{"memory": memory2}})
	g, waits := coldSession(t, "claude-code", "--config", path, "--mode", "groups")
	enable := callAsync(g, "enable_tools", map[string]any{"groups": []string{"memory"}})
	waitingRequests(t, waits, 1)
	open2()
	if text := mustAnswer(t, "enable_tools", enable); !strings.Contains(text, "memory__read_graph") {
		t.Errorf("enable_tools did not bring the starting server's tools: %s", text)
	}
	if got := g.names(); !strings.Contains(got, "memory__read_graph") {
		t.Errorf("after enable_tools the list lacks memory's tools: %s", got)
	}
}

// A server whose start fails is named in the error, with the stderr lines
// that say why, not just its last line.
func TestColdStartFailureIsExplained(t *testing.T) {
	script := `echo "node:internal/modules/cjs/loader:1210" >&2; echo "Error: Cannot find module '/srv/missing.js'" >&2;` +
		` echo "    at Module._load (node:internal/modules/cjs/loader:1038:27)" >&2; echo "Node.js v20.20.2" >&2; exit 1`
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{
		"broken": map[string]any{"command": "sh", "args": []string{"-c", script}},
	}})
	s := stdioSessionEnv(t, "e2e-go", []string{"TOOLFOLD_CACHE_DIR=" + t.TempDir()}, "--config", path, "--mode", "flat")
	isErr, text := s.call("broken__read", map[string]any{})
	if !isErr || !strings.Contains(text, `"broken"`) || !strings.Contains(text, "Cannot find module '/srv/missing.js'") {
		t.Errorf("call to the failed server's tool: isError=%v %s", isErr, text)
	}
}
