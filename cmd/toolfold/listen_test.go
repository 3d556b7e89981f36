package main

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestStalledConnectionsAreClosed opens connections that stall in every
// way a client can (nothing sent, headers cut short, body cut short, idle
// after a request) and checks that the server closes each of them, and
// answers others meanwhile. Without the limits the last two kinds stay
// open for good, each holding a file descriptor.
func TestStalledConnectionsAreClosed(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, "body not sent in time", http.StatusRequestTimeout)
			return
		}
		io.WriteString(w, "read")
	})
	srv := httptest.NewUnstartedServer(nil)
	srv.Config = newHTTPServer(mux, connLimits{Header: 50 * time.Millisecond, Body: 50 * time.Millisecond, Idle: 50 * time.Millisecond})
	srv.Start()
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()

	stalls := map[string]string{
		"nothing sent":    "",
		"headers cut":     "POST /mcp HTTP/1.1\r\nHost: x\r\n",
		"body cut":        "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\":",
		"idle keep-alive": "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
	}
	const each = 25 // 100 connections in all
	var conns []net.Conn
	var kinds []string
	for kind, sent := range stalls {
		for range each {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			if _, err := io.WriteString(c, sent); err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
			kinds = append(kinds, kind)
		}
	}
	// The server answers others while they stall.
	resp, err := http.Get(srv.URL + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz beside stalled connections: %v %v", resp, err)
	}
	resp.Body.Close()

	var wg sync.WaitGroup
	open := make(chan string, len(conns))
	for i, c := range conns {
		wg.Go(func() {
			// The deadline only bounds a failing test: a closed connection
			// ends the read at once.
			c.SetReadDeadline(time.Now().Add(30 * time.Second))
			_, err := io.Copy(io.Discard, bufio.NewReader(c))
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				open <- kinds[i]
			}
		})
	}
	wg.Wait()
	close(open)
	left := map[string]int{}
	for kind := range open {
		left[kind]++
	}
	if len(left) > 0 {
		t.Fatalf("stalled connections the server never closed: %v", left)
	}
}

// TestBodyDeadlineIsLiftedOnceRead checks that a response may take longer
// than the body's time limit: an MCP answer streams as long as a tool runs.
func TestBodyDeadlineIsLiftedOnceRead(t *testing.T) {
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.(http.Flusher).Flush()
		<-release // past the body's deadline
		io.WriteString(w, "done")
	})
	srv := httptest.NewUnstartedServer(nil)
	srv.Config = newHTTPServer(h, connLimits{Header: time.Second, Body: 20 * time.Millisecond, Idle: time.Second})
	srv.Start()
	t.Cleanup(srv.Close)
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// Wait well past the body's deadline before releasing the handler;
	// the deadline only matters if it was left in place.
	time.AfterFunc(200*time.Millisecond, func() { close(release) })
	body, err := io.ReadAll(resp.Body)
	if err != nil || string(body) != "done" {
		t.Fatalf("a response slower than the body's deadline: %q %v", body, err)
	}
}

func TestRemoteAddressNeedsAuthOrExplicitConsent(t *testing.T) {
	tcp := func(s string) net.Addr { a, _ := net.ResolveTCPAddr("tcp", s); return a }
	tests := []struct {
		addr          string
		tokens, allow bool
		refused       bool
	}{
		{"127.0.0.1:8080", false, false, false},
		{"[::1]:8080", false, false, false},
		{"0.0.0.0:8080", false, false, true},
		{"[::]:8080", false, false, true},
		{"192.0.2.7:8080", false, false, true},
		{"0.0.0.0:8080", true, false, false},
		{"0.0.0.0:8080", false, true, false},
	}
	for _, tt := range tests {
		err := checkExposure(tcp(tt.addr), tt.tokens, tt.allow)
		if (err != nil) != tt.refused {
			t.Errorf("%s (tokens %v, allowed %v): %v, want refused %v", tt.addr, tt.tokens, tt.allow, err, tt.refused)
		}
		if err != nil && (!strings.Contains(err.Error(), "--allow-unauthenticated-remote") || !strings.Contains(err.Error(), "http.auth")) {
			t.Errorf("the refusal does not say how to go on: %v", err)
		}
	}
}

func TestServeRefusesAnOpenAddressWithoutTokens(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runCLI(t, dir, nil, "demo", "--http", "0.0.0.0:0")
	if code != 1 || !strings.Contains(stderr, "refusing to serve") || !strings.Contains(stderr, "--allow-unauthenticated-remote") {
		t.Fatalf("serve --http 0.0.0.0:0 without tokens: exit %d, stderr:\n%s", code, stderr)
	}
	cfg := writeFile(t, dir, "open.json", `{"mcpServers": {}, "http": {"listen": "0.0.0.0:8080"}}`)
	code, _, stderr = runCLI(t, dir, nil, "serve", "--config", cfg, "--http", "0.0.0.0:0", "--max-sessions", "-1")
	if code != 2 || !strings.Contains(stderr, "--max-sessions") {
		t.Fatalf("--max-sessions -1: exit %d, stderr:\n%s", code, stderr)
	}
}

// TestConnectionCapKeepsRoomForOthers fills the connection cap with
// connections that stall, and checks that another client is still served
// once they are reaped, while no more than the cap is ever open: stalled
// clients cannot run toolfold out of file descriptors.
func TestConnectionCapKeepsRoomForOthers(t *testing.T) {
	const max = 5
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	srv := newHTTPServer(mux, connLimits{Header: 50 * time.Millisecond, Body: 50 * time.Millisecond, Idle: time.Hour})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	counting := &countingListener{Listener: ln}
	capped := capConns(counting, max, srv, slog.New(slog.DiscardHandler))
	go srv.Serve(capped)
	t.Cleanup(func() { srv.Close() })
	addr := ln.Addr().String()

	// Keep-alive connections idle (the idle timeout is an hour: only the
	// cap can close them) and connections that send nothing.
	for i := range 2 * max {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if i%2 == 0 {
			io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		}
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get("http://" + addr + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz with the cap full of stalled connections: %v %v", resp, err)
	}
	resp.Body.Close()
	if n := counting.maxOpen.Load(); n > max {
		t.Errorf("%d connections were open at once, over the cap of %d", n, max)
	}
}

// countingListener tracks how many accepted connections are open.
type countingListener struct {
	net.Listener
	open, maxOpen atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	n := l.open.Add(1)
	for {
		m := l.maxOpen.Load()
		if n <= m || l.maxOpen.CompareAndSwap(m, n) {
			break
		}
	}
	return &countedConn{Conn: c, l: l}, nil
}

type countedConn struct {
	net.Conn
	l    *countingListener
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.l.open.Add(-1) })
	return c.Conn.Close()
}

func TestConnCapFor(t *testing.T) {
	for _, tt := range []struct {
		limit uint64
		want  int
	}{{0, 0}, {100, 64}, {20000, 19488}, {1 << 20, 1<<20 - 512}} {
		if got := connCapFor(tt.limit); got != tt.want {
			t.Errorf("connCapFor(%d) = %d, want %d", tt.limit, got, tt.want)
		}
	}
}

// TestLongHeadersReachTheHandler: a request with an 800 KiB token is read
// whole and answered by the handler (httpapi's 401 that says what is
// wrong), not cut off while the client still sends, which a client sees
// as a connection reset.
func TestLongHeadersReachTheHandler(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "the bearer token is too long", http.StatusUnauthorized)
	})
	srv := httptest.NewUnstartedServer(nil)
	srv.Config = newHTTPServer(h, defaultConnLimits)
	srv.Start()
	t.Cleanup(srv.Close)
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+strings.Repeat("a", 800<<10))
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("an 800 KiB token: %v; want the handler's 401", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "too long") {
		t.Fatalf("an 800 KiB token: %d %s; want the handler's 401", resp.StatusCode, body)
	}
}
