package upstream

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/config"
)

// These tests drive the real reference servers from npm, pinned in
// e2e/node/package.json and installed with `npm ci --prefix e2e/node`. Without
// node or the packages they skip, unless TOOLFOLD_REQUIRE_NODE=1.

// nodeServer returns the path of an installed server's bin script.
func nodeServer(t *testing.T, bin string) string {
	t.Helper()
	fail := t.Skipf
	if os.Getenv("TOOLFOLD_REQUIRE_NODE") == "1" {
		fail = t.Fatalf
	}
	if _, err := exec.LookPath("node"); err != nil {
		fail("node is not installed (TOOLFOLD_REQUIRE_NODE=1 makes this a failure)")
	}
	p, err := filepath.Abs(filepath.Join("..", "..", "e2e", "node", "node_modules", ".bin", bin))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		fail("%s is not installed; run `npm ci --prefix e2e/node` (TOOLFOLD_REQUIRE_NODE=1 makes this a failure)", bin)
	}
	return p
}

func nodeConfig(command string, args []string, env map[string]string) config.ServerConfig {
	return config.ServerConfig{
		Command: command, Args: args, Env: env,
		Transport: config.TransportStdio, Lazy: true, Timeout: config.Duration(30 * time.Second),
	}
}

func toolNames(tools []*mcp.Tool) map[string]bool {
	out := map[string]bool{}
	for _, t := range tools {
		out[t.Name] = true
	}
	return out
}

func TestNodeEverythingStdio(t *testing.T) {
	bin := nodeServer(t, "mcp-server-everything")
	changed := make(chan string, 10)
	m := newTestManager(t, map[string]config.ServerConfig{"everything": nodeConfig(bin, []string{"stdio"}, nil)},
		&Options{Forward: Forwarding{Sampling: true, Elicitation: true}, OnToolsChanged: func(s string) { changed <- s }})
	ctx := context.Background()
	tools, err := m.Tools(ctx, "everything")
	if err != nil {
		t.Fatal(err)
	}
	if !toolNames(tools)["get-sum"] {
		t.Fatalf("no get-sum among %v", toolNames(tools))
	}
	if got := mustCall(t, m, "everything", "get-sum", map[string]any{"a": 19, "b": 23}); got != "The sum of 19 and 23 is 42." {
		t.Errorf("get-sum = %q", got)
	}

	t.Run("progress", func(t *testing.T) {
		var mu sync.Mutex
		var progress []float64
		params := &mcp.CallToolParams{Name: "trigger-long-running-operation", Arguments: map[string]any{"duration": 0.6, "steps": 3}}
		params.SetProgressToken(99)
		res, err := m.CallTool(ctx, "everything", params, &CallOptions{OnProgress: func(_ context.Context, p *mcp.ProgressNotificationParams) {
			mu.Lock()
			defer mu.Unlock()
			if p.ProgressToken != 99 {
				t.Errorf("progress token %v, want the caller's 99", p.ProgressToken)
			}
			progress = append(progress, p.Progress)
		}})
		if err != nil || !strings.Contains(text(res), "completed") {
			t.Fatalf("%v %v", textOrNil(res), err)
		}
		mu.Lock()
		defer mu.Unlock()
		if fmt.Sprint(progress) != "[1 2 3]" {
			t.Errorf("progress = %v", progress)
		}
	})

	// The server registers its sampling tool once it has seen the client's
	// capabilities, and announces it with tools/list_changed.
	t.Run("sampling through list_changed", func(t *testing.T) {
		deadline := time.After(10 * time.Second)
		for {
			tools, _ := m.CachedTools("everything")
			if toolNames(tools)["trigger-sampling-request"] {
				break
			}
			select {
			case <-changed:
			case <-deadline:
				t.Fatalf("trigger-sampling-request never appeared; tools: %v", toolNames(tools))
			}
		}
		res, err := m.CallTool(ctx, "everything", &mcp.CallToolParams{Name: "trigger-sampling-request", Arguments: map[string]any{"prompt": "hi"}},
			&CallOptions{Downstream: &fakeDownstream{name: "alice"}})
		if err != nil || !strings.Contains(text(res), "sampled by alice") {
			t.Fatalf("%q %v", textOrNil(res), err)
		}
	})
}

func TestNodeMemory(t *testing.T) {
	bin := nodeServer(t, "mcp-server-memory")
	store := filepath.Join(t.TempDir(), "memory.jsonl")
	m := newTestManager(t, map[string]config.ServerConfig{"memory": nodeConfig(bin, nil, map[string]string{"MEMORY_FILE_PATH": store})}, nil)
	mustCall(t, m, "memory", "create_entities", map[string]any{"entities": []any{
		map[string]any{"name": "toolfold", "entityType": "project", "observations": []any{"folds MCP tools into groups"}},
	}})
	res, err := call(t, m, "memory", "read_graph", nil)
	if err != nil {
		t.Fatal(err)
	}
	var graph struct {
		Entities []struct {
			Name         string   `json:"name"`
			Observations []string `json:"observations"`
		} `json:"entities"`
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if res.StructuredContent == nil {
		raw = []byte(text(res))
	}
	if err := json.Unmarshal(raw, &graph); err != nil {
		t.Fatalf("read_graph answered %s: %v", raw, err)
	}
	if len(graph.Entities) != 1 || graph.Entities[0].Name != "toolfold" || graph.Entities[0].Observations[0] != "folds MCP tools into groups" {
		t.Errorf("graph = %+v", graph)
	}
}

func TestNodeFilesystem(t *testing.T) {
	bin := nodeServer(t, "mcp-server-filesystem")
	write := func(t *testing.T, m *Manager, dir string) {
		file := filepath.Join(dir, "note.txt")
		mustCall(t, m, "fs", "write_file", map[string]any{"path": file, "content": "written through toolfold\n"})
		if b, err := os.ReadFile(file); err != nil || string(b) != "written through toolfold\n" {
			t.Fatalf("file on disk: %q %v", b, err)
		}
		if got := mustCall(t, m, "fs", "read_text_file", map[string]any{"path": file}); got != "written through toolfold\n" {
			t.Errorf("read_text_file = %q", got)
		}
	}
	t.Run("directory argument", func(t *testing.T) {
		dir, _ := filepath.EvalSymlinks(t.TempDir())
		m := newTestManager(t, map[string]config.ServerConfig{"fs": nodeConfig(bin, []string{dir}, nil)}, nil)
		write(t, m, dir)
	})
	// Started without directories, the server asks its client for roots right
	// after initialize, when no call is in flight: the Fallback answers.
	t.Run("roots from the fallback downstream", func(t *testing.T) {
		dir, _ := filepath.EvalSymlinks(t.TempDir())
		m := newTestManager(t, map[string]config.ServerConfig{"fs": nodeConfig(bin, nil, nil)},
			&Options{Forward: Forwarding{Roots: true, Fallback: &fakeDownstream{roots: []string{"file://" + dir}}}})
		deadline := time.Now().Add(10 * time.Second)
		for {
			got := mustCall(t, m, "fs", "list_allowed_directories", nil)
			if strings.Contains(got, dir) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("allowed directories never became the root: %q", got)
			}
			time.Sleep(100 * time.Millisecond)
		}
		write(t, m, dir)
	})
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// runEverythingHTTP starts server-everything in one of its HTTP modes and
// waits until it listens. Its port is picked free, then bound by the
// server: when a process takes it between the two, the server exits and
// starts again on another.
func runEverythingHTTP(t *testing.T, mode string) int {
	bin := nodeServer(t, "mcp-server-everything")
	for try := 1; ; try++ {
		port, clash := launchEverythingHTTP(t, bin, mode)
		if !clash {
			return port
		}
		if try == 4 {
			t.Fatalf("server-everything %s could not bind a free port in %d tries", mode, try)
		}
	}
}

// launchEverythingHTTP starts server-everything on a free port; clash
// reports that it exited because the port was taken.
func launchEverythingHTTP(t *testing.T, bin, mode string) (port int, clash bool) {
	port = freePort(t)
	cmd := exec.Command(bin, mode)
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	listening := make(chan struct{})
	ended := make(chan bool, 1) // its stderr ended; true if it named the port taken
	go func() {
		sc := bufio.NewScanner(stderr)
		once := sync.Once{}
		inUse := false
		for sc.Scan() {
			line := sc.Text()
			if strings.Contains(strings.ToLower(line), "listening") || strings.Contains(line, "running") {
				once.Do(func() { close(listening) })
			}
			inUse = inUse || strings.Contains(line, "EADDRINUSE")
		}
		ended <- inUse
	}()
	// Its banner is the readiness signal; polling the port is the fallback.
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-listening:
			return port, false
		case inUse := <-ended:
			if inUse {
				return 0, true
			}
			t.Fatalf("server-everything %s exited before it listened on %d", mode, port)
		case <-time.After(100 * time.Millisecond):
		}
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return port, false
		}
	}
	t.Fatalf("server-everything %s did not listen on %d", mode, port)
	return 0, false
}

func TestNodeEverythingRemote(t *testing.T) {
	tests := []struct {
		mode, path string
		transport  config.Transport
	}{
		{"streamableHttp", "/mcp", config.TransportHTTP},
		{"sse", "/sse", config.TransportSSE},
	}
	for _, tt := range tests {
		t.Run(string(tt.transport), func(t *testing.T) {
			port := runEverythingHTTP(t, tt.mode)
			cfg := config.ServerConfig{
				URL: fmt.Sprintf("http://127.0.0.1:%d%s", port, tt.path), Transport: tt.transport,
				Headers: config.SecretMap{"Authorization": "Bearer not-checked-by-this-server"},
				Timeout: config.Duration(20 * time.Second), Lazy: true,
			}
			m := newTestManager(t, map[string]config.ServerConfig{"remote": cfg}, nil)
			if got := mustCall(t, m, "remote", "get-sum", map[string]any{"a": 1.5, "b": 2}); got != "The sum of 1.5 and 2 is 3.5." {
				t.Errorf("get-sum = %q", got)
			}
			resources, err := m.ListResources(context.Background(), "remote")
			if err != nil || len(resources) == 0 {
				t.Errorf("ListResources: %d, %v", len(resources), err)
			}
			if st := statusOf(m, "remote"); st.State != StateReady || st.Transport != string(tt.transport) {
				t.Errorf("status: %+v", st)
			}
		})
	}
}
