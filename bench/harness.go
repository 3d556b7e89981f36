package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// harness owns the temporary directory, the two binaries built into it, and
// every process the benchmark starts, so that one cleanup stops them all,
// whether the run ends normally, fails or is interrupted.
type harness struct {
	dir      string // temporary; removed by cleanup
	toolfold string // the gateway binary, built from this checkout
	fixture  string // the upstream fixture binary (bench/fixture)
	// baseline is a toolfold built from another checkout (-baseline), or "".
	baseline string
	// source names what was built: the commit, and whether the working
	// tree had uncommitted changes, which the binaries include.
	source string
	// root is the checkout's root, where testdata/catalogs is.
	root string

	mu sync.Mutex
	// procs are the processes started directly, each the leader of its own
	// process group.
	procs map[*exec.Cmd]bool
	// startLogs are the files every fixture records its pid in. toolfold puts
	// each upstream in a process group of its own, so killing toolfold's
	// group does not reach them: the logs are how cleanup finds them.
	startLogs []string
	nextID    int
}

// newHarness builds toolfold and the fixture into a new temporary directory.
// The module root is found with `go env GOMOD`, so the benchmark runs from
// any directory inside the checkout (go run ./bench, or go test in bench/).
func newHarness(ctx context.Context) (*harness, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return nil, fmt.Errorf("finding the toolfold checkout with 'go env GOMOD': %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return nil, errors.New("run the benchmark from inside the toolfold checkout: 'go env GOMOD' names no go.mod here")
	}
	root := filepath.Dir(gomod)
	dir, err := os.MkdirTemp("", "toolfold-bench-")
	if err != nil {
		return nil, fmt.Errorf("creating a temporary directory: %w", err)
	}
	h := &harness{
		dir:      dir,
		toolfold: filepath.Join(dir, "toolfold"),
		fixture:  filepath.Join(dir, "fixture"),
		source:   describeSource(ctx, root),
		root:     root,
		procs:    map[*exec.Cmd]bool{},
	}
	// Both builds at once: on a busy machine the link steps overlap usefully.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, target := range []struct{ out, pkg string }{{h.toolfold, "./cmd/toolfold"}, {h.fixture, "./bench/fixture"}} {
		wg.Go(func() {
			build := exec.CommandContext(ctx, "go", "build", "-o", target.out, target.pkg)
			build.Dir = root
			var stderr bytes.Buffer
			build.Stderr = &stderr
			if err := build.Run(); err != nil {
				errs[i] = fmt.Errorf("building %s: %v\n%s", target.pkg, err, stderr.String())
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return h, nil
}

// describeSource names the checkout's commit and counts its changed files,
// or says it cannot tell (no git, or not a repository).
func describeSource(ctx context.Context, root string) string {
	commit, err := exec.CommandContext(ctx, "git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown (not a git checkout?)"
	}
	desc := "commit " + strings.TrimSpace(string(commit))
	status, err := exec.CommandContext(ctx, "git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output()
	if changed := strings.Count(string(status), "\n"); err == nil && changed > 0 {
		desc += fmt.Sprintf(" (plus uncommitted changes in %d files)", changed)
	}
	return desc
}

// path returns a fresh path in the temporary directory, for a file or a
// directory the caller creates.
func (h *harness) path(prefix string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.nextID++
	return filepath.Join(h.dir, fmt.Sprintf("%s-%d", prefix, h.nextID))
}

// command prepares a process in a process group of its own and registers it
// for cleanup. The caller (or the SDK's CommandTransport) starts it.
func (h *harness) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	h.mu.Lock()
	h.procs[cmd] = true
	h.mu.Unlock()
	return cmd
}

// forget drops a process that has been stopped and waited for, so cleanup
// never signals a process group id that may have been reused since.
func (h *harness) forget(cmd *exec.Cmd) {
	h.mu.Lock()
	delete(h.procs, cmd)
	h.mu.Unlock()
}

// cleanup kills every process group still registered, every fixture that
// recorded a start and is still running, and removes the temporary
// directory. It is safe to call more than once.
func (h *harness) cleanup() {
	h.mu.Lock()
	procs := h.procs
	h.procs = map[*exec.Cmd]bool{}
	logs := h.startLogs
	h.startLogs = nil
	h.mu.Unlock()
	for cmd := range procs {
		if cmd.Process != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	}
	for _, log := range logs {
		starts, _ := readStarts(log)
		for _, s := range starts {
			h.killFixture(s.pid)
		}
	}
	if h.dir != "" {
		os.RemoveAll(h.dir)
	}
}

// killFixture kills pid only if it is still one of our fixtures: a pid in a
// start log may have exited long ago and been reused by another program.
func (h *harness) killFixture(pid int) {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !bytes.HasPrefix(cmdline, []byte(h.fixture+"\x00")) {
		return
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// newStartLog returns a new, empty start-log path that cleanup will sweep.
func (h *harness) newStartLog() string {
	log := h.path("starts") + ".log"
	h.mu.Lock()
	h.startLogs = append(h.startLogs, log)
	h.mu.Unlock()
	return log
}

// fixtureStart is one line of a start log.
type fixtureStart struct {
	server string
	pid    int
}

// readStarts reads a start log; a missing file means nothing started.
func readStarts(path string) ([]fixtureStart, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var starts []fixtureStart
	for line := range strings.Lines(string(raw)) {
		var s fixtureStart
		if _, err := fmt.Sscanf(line, "start %s %d", &s.server, &s.pid); err == nil {
			starts = append(starts, s)
		}
	}
	return starts, nil
}

// writeConfig writes a toolfold config with servers fixtures named s01, s02,
// …, all recording their starts in startLog, and returns its path. Every
// server's args differ (its name), so each has its own cache entry, as real
// servers would.
func (h *harness) writeConfig(servers int, startLog string) (string, error) {
	mcpServers := map[string]any{}
	for i := 1; i <= servers; i++ {
		name := serverName(i)
		mcpServers[name] = map[string]any{
			"command": h.fixture,
			"args":    []string{"-name", name, "-start-log", startLog},
		}
	}
	raw, err := json.MarshalIndent(map[string]any{"mcpServers": mcpServers}, "", "  ")
	if err != nil {
		return "", err
	}
	path := h.path("toolfold") + ".json"
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		return "", fmt.Errorf("writing the benchmark's toolfold config: %w", err)
	}
	return path, nil
}

func serverName(i int) string { return fmt.Sprintf("s%02d", i) }

// fixtureTools is how many tools each fixture serves (bench/fixture).
const fixtureTools = 4

// stdioProcess is an SDK client session over stdio with the process behind
// it, so the caller can close the session and release the process.
type stdioProcess struct {
	*mcp.ClientSession
	cmd    *exec.Cmd
	stderr *tailBuffer
	h      *harness
}

// connectStdio starts cmd, connects the official Go SDK client to it over
// stdio and completes initialize.
func (h *harness) connectStdio(ctx context.Context, cmd *exec.Cmd) (*stdioProcess, error) {
	stderr := &tailBuffer{max: 8 << 10}
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "toolfold-bench", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		h.stop(cmd)
		return nil, fmt.Errorf("connecting to %s over stdio: %w%s", filepath.Base(cmd.Path), err, stderr.suffix())
	}
	return &stdioProcess{ClientSession: cs, cmd: cmd, stderr: stderr, h: h}, nil
}

// Close ends the session: the SDK closes stdin and waits for the process to
// exit, sending SIGTERM and then SIGKILL if it does not, so once Close
// returns the process has been waited for and is forgotten.
func (p *stdioProcess) Close() {
	p.ClientSession.Close()
	p.h.forget(p.cmd)
}

// stop kills a process group whose connection failed, and forgets it. It
// never waits: the SDK's transport owns the Wait of processes it started.
func (h *harness) stop(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	h.forget(cmd)
}

// toolfoldEnv is the environment of a toolfold process: the benchmark's own,
// with the catalog cache in cacheDir.
func toolfoldEnv(cacheDir string) []string {
	return append(os.Environ(), "TOOLFOLD_CACHE_DIR="+cacheDir)
}

// httpServer is a `toolfold serve --http` process.
type httpServer struct {
	cmd      *exec.Cmd
	endpoint string // http://127.0.0.1:PORT/mcp
	stderr   *tailBuffer
	done     chan struct{}
}

// startHTTP runs `toolfold serve --http` on a free loopback port and waits
// until /healthz answers.
func (h *harness) startHTTP(ctx context.Context, config, cacheDir string, extraArgs ...string) (*httpServer, error) {
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	args := append([]string{"serve", "--config", config, "--http", addr, "--log-level", "warn"}, extraArgs...)
	cmd := h.command(h.toolfold, args...)
	cmd.Env = toolfoldEnv(cacheDir)
	s := &httpServer{cmd: cmd, endpoint: "http://" + addr + "/mcp", stderr: &tailBuffer{max: 8 << 10}, done: make(chan struct{})}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		h.forget(cmd)
		return nil, fmt.Errorf("starting toolfold serve --http: %w", err)
	}
	go func() { cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		select {
		case <-s.done:
			h.forget(cmd)
			return nil, fmt.Errorf("toolfold serve --http exited before answering /healthz (%v)%s", cmd.ProcessState, s.stderr.suffix())
		case <-ctx.Done():
			h.stopHTTP(s)
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			h.stopHTTP(s)
			return nil, fmt.Errorf("toolfold serve --http did not answer /healthz at %s within 30s%s", addr, s.stderr.suffix())
		}
	}
}

// stopHTTP asks toolfold to shut down (SIGTERM lets it close its upstreams
// in order), and kills its group if it has not exited after 5s.
func (h *harness) stopHTTP(s *httpServer) {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
	h.forget(s.cmd)
}

// portClashTries bounds retryPortClash.
const portClashTries = 4

// retryPortClash runs start again, up to portClashTries times, while it
// fails because a child could not bind a loopback port picked free: between
// the pick and the child's bind, a busy machine can hand the port to another
// process as an ephemeral one. Each try must pick its ports anew.
func retryPortClash[T any](start func() (T, error)) (T, error) {
	for try := 1; ; try++ {
		v, err := start()
		if err == nil || try == portClashTries || !strings.Contains(err.Error(), "address already in use") {
			return v, err
		}
	}
}

// freeLoopbackAddr picks a loopback address whose port is free now; a child
// told to bind it may lose it first, so starts that use it go through
// retryPortClash.
func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free loopback port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// rssBytes returns a process's resident set size from /proc/PID/status.
func rssBytes(pid int) (int64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the RSS of process %d (the memory figure needs Linux's /proc): %w", pid, err)
	}
	for line := range strings.Lines(string(raw)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			fields := strings.Fields(rest) // "123456 kB"
			if len(fields) == 2 && fields[1] == "kB" {
				kb, err := strconv.ParseInt(fields[0], 10, 64)
				if err == nil {
					return kb * 1024, nil
				}
			}
		}
	}
	return 0, fmt.Errorf("no VmRSS line in /proc/%d/status", pid)
}

// tailBuffer keeps the last max bytes written to it, for error messages
// that show what a process said before it failed.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = t.buf[over:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// suffix is the buffer as the end of an error message, or nothing.
func (t *tailBuffer) suffix() string {
	s := strings.TrimSpace(t.String())
	if s == "" {
		return ""
	}
	return "; its stderr ends with:\n" + s
}
