package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestIdleUpstreamIsStoppedAndStartsAgain runs the memory server behind the
// built binary with a short idle timeout: after the call, once idle, its
// process is gone and /healthz says so; the next call starts it again and
// finds what the first one stored (the server keeps its graph on disk).
func TestIdleUpstreamIsStoppedAndStartsAgain(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("finds the server's process through /proc")
	}
	memFile := filepath.Join(t.TempDir(), "memory.jsonl")
	path := writeConfig(t, map[string]any{
		"serverDefaults": map[string]any{"idleTimeout": "3s"},
		"mcpServers": map[string]any{
			"memory": map[string]any{"command": nodeServer(t, "mcp-server-memory"), "env": map[string]any{"MEMORY_FILE_PATH": memFile}},
		},
	})
	t.Setenv("TOOLFOLD_CACHE_DIR", t.TempDir())
	base := startHTTP(t, "--config", path, "--mode", "flat")
	s := httpSession(t, base, "e2e-go")
	// Without a cached list, the server joins the catalog when its start
	// completes, which may be after toolfold started listening.
	waitFor(t, "the memory server's tools to be listed", func() bool { return strings.Contains(s.names(), "memory__create_entities") })

	s.mustCall("memory__create_entities", map[string]any{"entities": []any{map[string]any{"name": "Alice", "entityType": "person", "observations": []string{"works at Acme"}}}})
	marker := "MEMORY_FILE_PATH=" + memFile
	if len(processesWithEnv(t, marker)) == 0 {
		t.Fatal("no memory server process found right after a call: the process lookup is broken")
	}
	waitFor(t, "the memory server to be stopped for idleness", func() bool {
		st := sourceStatus(t, base, "memory")
		return st.State == "idle" && st.IdleStops >= 1
	})
	if pids := processesWithEnv(t, marker); len(pids) > 0 {
		t.Errorf("the memory server was reported stopped but its process is still there: %v", pids)
	}
	_, metrics := get(t, base+"/metrics", nil)
	if !strings.Contains(metrics, `toolfold_source_idle_stops_total{kind="mcp",source="memory"}`) {
		t.Error("/metrics lacks toolfold_source_idle_stops_total for the memory server")
	}

	if text := s.mustCall("memory__read_graph", map[string]any{}); !strings.Contains(text, "works at Acme") {
		t.Errorf("read_graph after the idle stop = %s", text)
	}
	if st := sourceStatus(t, base, "memory"); st.Error != "" {
		t.Errorf("an idle stop was taken for a crash: %+v", st)
	}
}

type healthSource struct {
	Name      string `json:"name"`
	State     string `json:"state"`
	Error     string `json:"error"`
	IdleStops int    `json:"idleStops"`
}

// sourceStatus reads one source from /healthz.
func sourceStatus(t *testing.T, base, name string) healthSource {
	t.Helper()
	_, body := get(t, base+"/healthz", nil)
	var h struct {
		Sources []healthSource `json:"sources"`
	}
	if err := json.Unmarshal([]byte(body), &h); err != nil {
		t.Fatalf("/healthz: %v: %s", err, body)
	}
	for _, s := range h.Sources {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("/healthz has no source %q: %s", name, body)
	return healthSource{}
}

// waitFor polls cond until it holds; the deadline only keeps a broken
// build from hanging the suite.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// processesWithEnv lists the processes whose environment holds the
// variable assignment kv.
func processesWithEnv(t *testing.T, kv string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue // gone, or not ours
		}
		for _, v := range bytes.Split(env, []byte{0}) {
			if string(v) == kv {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}
