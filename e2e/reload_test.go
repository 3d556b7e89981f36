package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// logLines runs toolfold serve --http with its stderr read line by line,
// so that a test waits on the line a reload writes instead of sleeping.
func logLines(t *testing.T, args ...string) (*exec.Cmd, <-chan string, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	// Port 0: toolfold picks a free port itself and logs its URL, so no
	// other process can take the port between a pick and the bind.
	cmd := exec.CommandContext(ctx, binary, append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
	out, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cancel(); <-exited })
	// The address is taken before the config is read (a port in use fails
	// at once): until this line a loaded machine may still be reading it,
	// and a test's next write would be what it starts with.
	l := waitLog(t, lines, "serving streamable HTTP")
	m := servingURL.FindStringSubmatch(l)
	if m == nil {
		t.Fatalf("the serving line names no URL: %s", l)
	}
	return cmd, lines, m[1]
}

// servingURL finds the base URL in toolfold's "serving streamable HTTP"
// line.
var servingURL = regexp.MustCompile(`url=(http://\S+)/mcp`)

// waitLog returns the first line containing want. A closed stream (the
// gateway exited) fails the test: a reload must never end the gateway.
func waitLog(t *testing.T, lines <-chan string, want string) string {
	t.Helper()
	deadline := time.After(time.Minute)
	var seen []string // what it said instead, to tell why
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("toolfold exited while the test waited for %q; it said:\n%s", want, strings.Join(seen, "\n"))
			}
			if strings.Contains(l, want) {
				return l
			}
			seen = append(seen, l)
		case <-deadline:
			t.Fatalf("no log line with %q within a minute; toolfold said:\n%s", want, strings.Join(seen, "\n"))
		}
	}
}

const (
	validEmpty = `{"mcpServers":{}}`
	refused    = `{"mcpServers":{"x":{"command":"true","bogus":1}}}`
)

func TestReloadSIGHUPKeepsServing(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "toolfold.json")
	writeFile(t, cfg, validEmpty)
	cmd, lines, _ := logLines(t, "--config", cfg)
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLog(t, lines, "config file is unchanged")
	// A config check refuses, saved by rename as editors do: the same
	// file:line message as check, and the gateway stays up for the next.
	tmp := filepath.Join(dir, ".toolfold.json.swp")
	writeFile(t, tmp, refused)
	if err := os.Rename(tmp, cfg); err != nil {
		t.Fatal(err)
	}
	l := waitLog(t, lines, "config reload refused")
	if !strings.Contains(l, "toolfold.json:1: mcpServers.x.bogus") {
		t.Errorf("the refusal does not carry check's file:line message: %s", l)
	}
	writeFile(t, cfg, validEmpty)
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLog(t, lines, "config file is unchanged")
}

// TestReloadSeesConfigMapSwap mounts the config as the kubelet does: the
// file is a symlink through ..data, which an update swaps atomically.
func TestReloadSeesConfigMapSwap(t *testing.T) {
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "..v1"), 0o755))
	writeFile(t, filepath.Join(dir, "..v1", "toolfold.json"), validEmpty)
	must(t, os.Symlink("..v1", filepath.Join(dir, "..data")))
	must(t, os.Symlink(filepath.Join("..data", "toolfold.json"), filepath.Join(dir, "toolfold.json")))
	_, lines, _ := logLines(t, "--config", filepath.Join(dir, "toolfold.json"))

	must(t, os.Mkdir(filepath.Join(dir, "..v2"), 0o755))
	writeFile(t, filepath.Join(dir, "..v2", "toolfold.json"), refused)
	must(t, os.Symlink("..v2", filepath.Join(dir, "..data_tmp")))
	must(t, os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")))
	waitLog(t, lines, "config reload refused")
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	must(t, os.WriteFile(path, []byte(s), 0o644))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestReloadEndpoint asks for a reload over HTTP, as an operator's script
// would, and reads the outcome back from /healthz.
func TestReloadEndpoint(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "toolfold.json")
	writeFile(t, cfg, validEmpty)
	_, _, url := logLines(t, "--config", cfg)
	if code, body := get(t, url+"/healthz", nil); code != http.StatusOK || strings.Contains(body, `"reload"`) {
		t.Fatalf("healthz before any reload: %d %s", code, body)
	}
	// Written while the watcher may also see it: the endpoint's answer is
	// its own validation of what is on disk now, whichever runs first.
	writeFile(t, cfg, refused)
	resp, err := http.Post(url+"/api/reload", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var st struct {
		Result   string
		Problems []string
	}
	if err := json.Unmarshal(body, &st); err != nil || resp.StatusCode != http.StatusOK || st.Result != "refused" || len(st.Problems) != 1 || !strings.Contains(st.Problems[0], "toolfold.json:1: mcpServers.x.bogus") {
		t.Fatalf("POST /api/reload: %d %s", resp.StatusCode, body)
	}
	if _, body := get(t, url+"/healthz", nil); !strings.Contains(body, `"result": "refused"`) && !strings.Contains(body, `"result":"refused"`) {
		t.Fatalf("healthz does not show the refused reload: %s", body)
	}
	if code, _ := get(t, url+"/api/reload", nil); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /api/reload: %d, want 405", code)
	}
}

// TestReloadAppliesConfigMapSwap applies a valid change delivered as a
// kubelet delivers a ConfigMap update: the built binary, serving one
// upstream (itself, serving its demo catalog over stdio), swaps in a
// config with a second one. The first keeps its process; the second
// appears in /healthz; the reload is applied, audited and dated.
func TestReloadAppliesConfigMapSwap(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the binary and two upstreams")
	}
	demo := func(names ...string) string {
		servers := map[string]any{}
		for _, n := range names {
			servers[n] = map[string]any{"command": binary, "args": []string{"demo"}, "lazy": false}
		}
		raw, err := json.Marshal(map[string]any{"mcpServers": servers})
		must(t, err)
		return string(raw)
	}
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "..v1"), 0o755))
	writeFile(t, filepath.Join(dir, "..v1", "toolfold.json"), demo("d1"))
	must(t, os.Symlink("..v1", filepath.Join(dir, "..data")))
	must(t, os.Symlink(filepath.Join("..data", "toolfold.json"), filepath.Join(dir, "toolfold.json")))
	t.Setenv("TOOLFOLD_CACHE_DIR", t.TempDir())
	cmd, lines, base := logLines(t, "--config", filepath.Join(dir, "toolfold.json"))
	waitFor(t, "d1 to start", func() bool { return sourceStatus(t, base, "d1").State == "ready" })
	before := processesOf(t, cmd.Process.Pid)

	must(t, os.Mkdir(filepath.Join(dir, "..v2"), 0o755))
	writeFile(t, filepath.Join(dir, "..v2", "toolfold.json"), demo("d1", "d2"))
	must(t, os.Symlink("..v2", filepath.Join(dir, "..data_tmp")))
	must(t, os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")))
	if l := waitLog(t, lines, "audit: config reload applied"); !strings.Contains(l, "added=[d2]") || !strings.Contains(l, "unchanged=1") {
		t.Errorf("the audit line does not say d2 was added and d1 kept: %s", l)
	}
	waitFor(t, "d2 to start", func() bool { return sourceStatus(t, base, "d2").State == "ready" })
	after := processesOf(t, cmd.Process.Pid)
	for _, pid := range before {
		if !slices.Contains(after, pid) {
			t.Errorf("d1's process %d is gone after a reload that kept d1 (before %v, after %v)", pid, before, after)
		}
	}
	if len(after) != len(before)+1 {
		t.Errorf("toolfold's child processes: %v before, %v after; want one more", before, after)
	}
	_, body := get(t, base+"/healthz", nil)
	var h struct {
		ConfigApplied time.Time `json:"configApplied"`
		Reload        struct {
			Result string   `json:"result"`
			Added  []string `json:"added"`
		} `json:"reload"`
	}
	must(t, json.Unmarshal([]byte(body), &h))
	if h.Reload.Result != "applied" || !slices.Equal(h.Reload.Added, []string{"d2"}) || h.ConfigApplied.IsZero() {
		t.Errorf("/healthz after the reload: %s", body)
	}

	// SIGHUP with nothing changed touches nothing.
	must(t, cmd.Process.Signal(syscall.SIGHUP))
	waitLog(t, lines, "config file is unchanged")
}

// processesOf lists the child processes of pid, from /proc.
func processesOf(t *testing.T, pid int) []int {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	entries, err := os.ReadDir("/proc")
	must(t, err)
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The fields after the command's closing parenthesis: state, ppid.
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+2:])
		if f := strings.Fields(rest); len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	slices.Sort(out)
	return out
}
