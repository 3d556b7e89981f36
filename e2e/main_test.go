package e2e

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolfold/toolfold/internal/logtest"
)

var update = flag.Bool("update", false, "rewrite golden files with the current output")

// binary is the toolfold command built once for the whole package.
var binary string

func TestMain(m *testing.M) {
	flag.Parse()
	// Each test here builds or spawns the binary: the quick tier
	// (go test -short) leaves the whole package out.
	if testing.Short() {
		fmt.Println("skipping the end-to-end tests in -short mode")
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "toolfold-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "toolfold")
	build := exec.Command("go", "build", "-o", binary, "../cmd/toolfold")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building toolfold:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// serveArgs is the command line of a toolfold serving args: the built-in
// demo, which must be asked for, unless args name a config.
func serveArgs(args ...string) []string {
	if slices.Contains(args, "--config") {
		return append([]string{"serve"}, args...)
	}
	return append([]string{"demo"}, args...)
}

// requireNode returns the node binary, or skips (fails where required).
func requireNode(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		if _, statErr := os.Stat("node/node_modules/@modelcontextprotocol/sdk/package.json"); statErr == nil {
			return node
		}
		err = fmt.Errorf("e2e/node/node_modules is missing; run: npm ci --prefix e2e/node")
	}
	if os.Getenv("TOOLFOLD_REQUIRE_NODE") == "1" {
		t.Fatalf("node is required here: %v", err)
	}
	t.Skipf("skipping: %v", err)
	return ""
}

// freeAddr returns a loopback address with a free port.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// startHTTP runs `toolfold serve --http` and waits until it answers. It
// picks its port anew when toolfold lost the one picked free to another
// process before binding it, which a busy machine does now and then.
func startHTTP(t *testing.T, args ...string) string {
	t.Helper()
	return startHTTPNaming(t, func(string) []string { return args })
}

// startHTTPNaming is startHTTP for a config that must name the address it
// serves on (an OAuth resource URL): argsFor gives the arguments for each
// address tried.
func startHTTPNaming(t *testing.T, argsFor func(addr string) []string) string {
	t.Helper()
	for try := 1; ; try++ {
		addr := freeAddr(t)
		base, clash := launchHTTP(t, addr, argsFor(addr)...)
		if !clash {
			return base
		}
		if try == 4 {
			t.Fatalf("toolfold could not bind a free loopback port in %d tries", try)
		}
	}
}

// startHTTPAt is startHTTP on a given address, for a test that must know
// it before toolfold starts (a token minted for it in advance); it fails
// t if another process takes the address first.
func startHTTPAt(t *testing.T, addr string, args ...string) string {
	t.Helper()
	base, clash := launchHTTP(t, addr, args...)
	if clash {
		t.Fatalf("toolfold could not bind %s: another process took it", addr)
	}
	return base
}

// launchHTTP starts toolfold on addr and waits until it listens. clash
// reports that it exited because addr was taken; any other exit fails t.
func launchHTTP(t *testing.T, addr string, args ...string) (base string, clash bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, binary, serveArgs(append([]string{"--http", addr}, args...)...)...)
	stderr := &logtest.Buffer{} // written by the child's copier, read here
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cancel(); <-exited })
	if !listening(t, addr, exited) {
		if strings.Contains(stderr.String(), "address already in use") {
			return "", true
		}
		t.Fatalf("toolfold exited before it listened on %s; its stderr:\n%s", addr, stderr.String())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("toolfold stderr:\n%s", stderr.String())
		}
	})
	return "http://" + addr, false
}

// listening waits until something accepts connections on addr. It says
// false if the program exited first, and fails t after a minute in which
// nothing listened: a bound for a program that hangs, not a guess at how
// long a start takes.
func listening(t testing.TB, addr string, exited <-chan struct{}) bool {
	t.Helper()
	deadline := time.After(time.Minute)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return true
		}
		select {
		case <-exited:
			return false
		case <-deadline:
			t.Fatalf("nothing listened on %s within a minute", addr)
		case <-tick.C:
		}
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (regenerate with -update): %v", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from the golden file; if the change is intended, run go test ./e2e/ -run %s -update and review the diff.\n%s",
			path, t.Name(), firstDiff(string(want), string(got)))
	}
}

func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, w, g)
		}
	}
	return ""
}
