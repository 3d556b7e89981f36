package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// replicasConfig serves echo and printf with two static tokens: one that
// reaches everything, one limited to echo.
const replicasConfig = `commands:
  echo:
    command: echo
    description: Print words
    actions:
      say:
        params:
          words: {type: array, items: {type: string}, positional: true}
        readOnly: true
  printf:
    command: printf
    description: Format text
    actions:
      format:
        params:
          text: {type: string, positional: true}
        readOnly: true
http:
  auth:
    tokens:
      - {token: "replica-full-token"}
      - {token: "replica-echo-token", groups: [echo]}
`

// haproxyConfig is the configuration docs/replicas.md documents, on
// loopback ports: round-robin for requests without a session, sticky on
// Mcp-Session-Id for 2025-11-25 sessions, and a request whose replica
// refused the connection or died before answering is sent to another.
// X-Toolfold-Replica names the replica that answered, for the test, and
// HAProxy logs every request that failed or was retried to its stderr,
// which a failed test prints.
func haproxyConfig(listen string, servers map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `global
  maxconn 2000
  log stderr format raw local0
defaults
  mode http
  log global
  option httplog
  option dontlog-normal
  timeout connect 2s
  timeout client 60s
  timeout server 60s
  retries 3
  option redispatch 1
  retry-on conn-failure empty-response
frontend mcp
  bind %s
  default_backend toolfold
backend toolfold
  balance roundrobin
  stick-table type string len 128 size 100k expire 30m
  stick match req.hdr(mcp-session-id)
  stick store-response res.hdr(mcp-session-id)
  http-response set-header X-Toolfold-Replica %%s
`, listen)
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&b, "  server %s %s check inter 2s fall 2 rise 2\n", n, servers[n])
	}
	return b.String()
}

// requireHAProxy returns the haproxy binary, or skips (fails where
// TOOLFOLD_REQUIRE_HAPROXY=1, as in scripts/test.sh, which installs it).
func requireHAProxy(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		if os.Getenv("TOOLFOLD_REQUIRE_HAPROXY") == "1" {
			t.Fatal("haproxy is required here: apt-get install -y haproxy")
		}
		t.Skip("skipping: haproxy is not installed (apt-get install -y haproxy)")
	}
	return bin
}

// process is a started program the test may kill or stop early.
type process struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	done   chan struct{}
	err    error // how it exited, once done is closed
}

func (p *process) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// stop sends SIGTERM, as a supervisor does for a planned restart, and
// returns how the program exited.
func (p *process) stop() error {
	p.cmd.Process.Signal(syscall.SIGTERM)
	<-p.done
	return p.err
}

// startOnFreeAddr runs a program until the test ends, on a free loopback
// address that argsFor names to it, and waits until it listens there.
func startOnFreeAddr(t testing.TB, name string, argsFor func(addr string) []string) (*process, string) {
	t.Helper()
	return startCmdOnFreeAddr(t, func(addr string) *exec.Cmd { return exec.Command(name, argsFor(addr)...) })
}

// startCmdOnFreeAddr is startOnFreeAddr for a command that cmdFor makes
// (the address may go into its environment). It picks another address
// when the program exits because a process took the picked one before it
// could bind it, which a busy machine does now and then.
func startCmdOnFreeAddr(t testing.TB, cmdFor func(addr string) *exec.Cmd) (*process, string) {
	t.Helper()
	for try := 1; ; try++ {
		addr := freeAddr(t)
		cmd := cmdFor(addr)
		p := launchProcess(t, cmd)
		if listening(t, addr, p.done) {
			return p, addr
		}
		// Exited: its stderr is complete once done is closed.
		if !strings.Contains(strings.ToLower(p.stderr.String()), "address already in use") || try == 4 {
			t.Fatalf("%s exited before it listened on %s (try %d)", filepath.Base(cmd.Path), addr, try)
		}
	}
}

// launchProcess runs cmd until the test ends.
func launchProcess(t testing.TB, cmd *exec.Cmd) *process {
	t.Helper()
	name := cmd.Path
	p := &process{cmd: cmd, stderr: &bytes.Buffer{}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	// One cleanup, stopping before printing: cleanups run last first, so a
	// second one that waited for the exit would wait before the stop.
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		<-p.done
		if t.Failed() {
			t.Logf("%s printed:\n%s", filepath.Base(name), p.stderr)
		}
	})
	return p
}

// replicaSet is toolfold replicas behind HAProxy.
type replicaSet struct {
	url      string // the balancer's /mcp
	replicas map[string]*process
	haproxy  *process
}

func startReplicas(t testing.TB, n int, args ...string) *replicaSet {
	t.Helper()
	haproxy := requireHAProxy(t)
	dir := t.TempDir()
	config := filepath.Join(dir, "toolfold.yaml")
	if err := os.WriteFile(config, []byte(replicasConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	rs := &replicaSet{replicas: map[string]*process{}}
	servers := map[string]string{}
	for i := range n {
		name := fmt.Sprintf("r%d", i+1)
		rs.replicas[name], servers[name] = startOnFreeAddr(t, binary, func(addr string) []string {
			return append([]string{"serve", "--http", addr, "--config", config, "--mode", "auto", "--log-level", "warn"}, args...)
		})
	}
	cfg := filepath.Join(dir, "haproxy.cfg")
	var listen string
	rs.haproxy, listen = startOnFreeAddr(t, haproxy, func(addr string) []string {
		if err := os.WriteFile(cfg, []byte(haproxyConfig(addr, servers)), 0o600); err != nil {
			t.Fatal(err)
		}
		return []string{"-db", "-f", cfg}
	})
	rs.url = "http://" + listen + "/mcp"
	return rs
}

// replicaRecorder adds a token and notes which replica answered each
// request.
type replicaRecorder struct {
	token string
	mu    sync.Mutex
	seen  []string
}

func (r *replicaRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+r.token)
	res, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		r.mu.Lock()
		r.seen = append(r.seen, res.Header.Get("X-Toolfold-Replica"))
		r.mu.Unlock()
	}
	return res, err
}

func (r *replicaRecorder) replicas() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.seen)
	slices.Sort(out)
	return slices.Compact(out)
}

func (r *replicaRecorder) reset() {
	r.mu.Lock()
	r.seen = nil
	r.mu.Unlock()
}

func connectVia(t testing.TB, url string, rec *replicaRecorder, name, protocol string) *mcp.ClientSession {
	t.Helper()
	var opts *mcp.ClientSessionOptions
	if protocol != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: protocol}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: rec}}, opts)
	if err != nil {
		t.Fatalf("connecting through the balancer: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// answers maps each replica to the distinct answers it gave.
type answers map[string]map[string]bool

func (a answers) add(replica, answer string) {
	if a[replica] == nil {
		a[replica] = map[string]bool{}
	}
	a[replica][answer] = true
}

// same reports whether every replica gave one and the same answer.
func (a answers) same() bool {
	var first string
	for _, set := range a {
		if len(set) != 1 {
			return false
		}
		for ans := range set {
			if first == "" {
				first = ans
			} else if ans != first {
				return false
			}
		}
	}
	return true
}

// served runs one request and returns the replica that answered it.
func served(rec *replicaRecorder, do func()) string {
	rec.reset()
	do()
	got := rec.replicas()
	return strings.Join(got, "+")
}

// TestReplicasBehindHAProxy runs two toolfold replicas behind HAProxy and
// a 2026-07-28 client: its requests spread over both and get the same lists
// and results (its own reach, for a limited token). A replica stopped or
// killed under load: replicaload_test.go.
//
// The replicas are the same stateful deployment the 2025-11-25 test uses:
// one endpoint serves both protocol eras.
func TestReplicasBehindHAProxy(t *testing.T) {
	rs := startReplicas(t, 2)
	ctx := context.Background()

	for _, token := range []string{"replica-full-token", "replica-echo-token"} {
		rec := &replicaRecorder{token: token}
		cs := connectVia(t, rs.url, rec, "e2e", "2026-07-28")
		if cs.ID() != "" {
			t.Fatalf("the 2026-07-28 client got a session %q; it must have none", cs.ID())
		}
		lists, found, results := answers{}, answers{}, answers{}
		covered := func() bool { return len(lists) == 2 && len(found) == 2 && len(results) == 2 }
		for i := 0; i < 6 || (!covered() && i < 30); i++ {
			if i%2 == 1 {
				// Shift the round-robin by one request, so that each kind
				// of request meets both replicas however many HTTP
				// requests the client makes per call.
				callText(ctx, cs, "find_tools", map[string]any{"query": "shift"})
			}
			// A client may keep a list for its ttlMs: a new client each
			// time asks the replicas again.
			var list string
			fresh := connectVia(t, rs.url, rec, "e2e", "2026-07-28")
			r := served(rec, func() { list = toolNames(t, fresh) })
			lists.add(r, list)
			var text string
			r = served(rec, func() { _, text = callText(ctx, cs, "find_tools", map[string]any{"query": "format text", "limit": 10}) })
			found.add(r, text)
			r = served(rec, func() {
				_, text = callText(ctx, cs, "call_tool", map[string]any{"name": "echo__say", "arguments": map[string]any{"words": []string{"hello"}}})
			})
			results.add(r, text)
		}
		for what, a := range map[string]answers{"tools/list": lists, "find_tools": found, "call_tool": results} {
			if len(a) != 2 || !a.same() {
				t.Errorf("token %s, %s: answers by replica %v, want both replicas giving one same answer", token, what, a)
			}
		}
		reachesPrintf := false
		for ans := range found["r1"] {
			reachesPrintf = strings.Contains(ans, "printf__format")
		}
		if reachesPrintf != (token == "replica-full-token") {
			t.Errorf("token %s: find_tools reaches printf__format = %v", token, reachesPrintf)
		}
	}
}

// TestStickySessionsBehindHAProxy: a 2025-11-25 session stays on the
// replica that opened it (the balancer routes on Mcp-Session-Id); when that
// replica dies, the client's next request reaches the other, which answers
// 404 for the unknown session, so the client re-initializes and carries on.
func TestStickySessionsBehindHAProxy(t *testing.T) {
	rs := startReplicas(t, 2)
	ctx := context.Background()
	homes := map[string]bool{}
	var sessions []*mcp.ClientSession
	var home []string
	var before string
	rec := &replicaRecorder{token: "replica-full-token"}
	// Sessions opened in turn land on both replicas (round-robin), and
	// each stays where it began.
	for i := range 4 {
		rec.reset()
		cs := connectVia(t, rs.url, rec, "claude-code", "2025-11-25")
		for range 5 {
			toolNames(t, cs)
		}
		got := rec.replicas()
		if len(got) != 1 {
			t.Fatalf("session %d was served by %v, want one replica", i, got)
		}
		before = toolNames(t, cs)
		homes[got[0]] = true
		sessions = append(sessions, cs)
		home = append(home, got[0])
	}
	if len(homes) != 2 {
		t.Errorf("4 sessions all began on %v; round-robin should spread them", homes)
	}

	rs.replicas[home[0]].kill()
	for i, cs := range sessions {
		_, err := cs.ListTools(ctx, nil)
		if home[i] == home[0] {
			if !errors.Is(err, mcp.ErrSessionMissing) {
				t.Errorf("session %d, whose replica died: %v, want the session-missing error (HTTP 404)", i, err)
			}
		} else if err != nil {
			t.Errorf("session %d, whose replica lives: %v", i, err)
		}
	}
	again := connectVia(t, rs.url, rec, "claude-code", "2025-11-25")
	if got := toolNames(t, again); got != before {
		t.Errorf("after re-initializing, the list is %q, want %q as before", got, before)
	}
}

// BenchmarkReplicas is the throughput of toolfold behind HAProxy with one
// replica and with two, for 2026-07-28 clients calling find_tools (pure
// gateway work: no tool process runs) from 8 concurrent clients. Compare
// the ns/op of the two: on the 2-core test machine both replicas share the
// same cores, so the ratio shows what a second process adds there, not on
// two machines.
func BenchmarkReplicas(b *testing.B) {
	for _, n := range []int{1, 2} {
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) {
			rs := startReplicas(b, n)
			b.SetParallelism(4) // × GOMAXPROCS clients
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				cs := connectVia(b, rs.url, &replicaRecorder{token: "replica-full-token"}, "e2e", "2026-07-28")
				ctx := context.Background()
				for pb.Next() {
					if ok, text := callText(ctx, cs, "find_tools", map[string]any{"query": "format some text", "limit": 5}); !ok {
						b.Error(text)
						return
					}
				}
			})
		})
	}
}
