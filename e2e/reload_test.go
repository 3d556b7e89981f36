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
	"strings"
	"syscall"
	"testing"
	"time"
)

// logLines runs toolfold serve --http with its stderr read line by line,
// so that a test waits on the line a reload writes instead of sleeping.
func logLines(t *testing.T, args ...string) (*exec.Cmd, <-chan string, string) {
	t.Helper()
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, binary, append([]string{"serve", "--http", addr}, args...)...)
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
	waitListening(t, "toolfold", addr, exited)
	return cmd, lines, "http://" + addr
}

// waitLog returns the first line containing want. A closed stream (the
// gateway exited) fails the test: a reload must never end the gateway.
func waitLog(t *testing.T, lines <-chan string, want string) string {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("toolfold exited while the test waited for %q", want)
			}
			if strings.Contains(l, want) {
				return l
			}
		case <-deadline:
			t.Fatalf("no log line with %q within a minute", want)
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
