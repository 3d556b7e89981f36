package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNoSecretOnTheBytePaths: a running stdio server quotes its token in a
// JSON-RPC error, and toolfold forwards the calls as bytes (stdio, an HTTP
// session, a 2026-07-28 request): the client gets the error masked on
// every path, the log names every call's path, and no output holds the
// token. With TOOLFOLD_BYTE_FORWARDING=off (CI's second pass) the same
// calls take the typed path and the same holds.
func TestNoSecretOnTheBytePaths(t *testing.T) {
	node := requireNode(t)
	const secret = "r-secret-9c1d22e7"
	script, err := filepath.Abs("testdata/servers/quoting-server.mjs")
	if err != nil {
		t.Fatal(err)
	}
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{
		"quoting": map[string]any{"command": node, "args": []string{script}, "env": map[string]any{"TOKEN": "${R_SECRET}"}},
	}})
	environ := append(os.Environ(), "R_SECRET="+secret, "TOOLFOLD_CACHE_DIR="+t.TempDir())
	bytesOn := os.Getenv("TOOLFOLD_BYTE_FORWARDING") != "off"
	var outputs []string

	// stdio: the first call starts the server (typed path), the second
	// takes the byte path.
	stdio := exec.Command(binary, "serve", "--config", path, "--mode", "flat")
	stdio.Env = environ
	var stdioLog bytes.Buffer
	stdio.Stderr = &stdioLog
	in, err := stdio.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := stdio.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := stdio.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	lines.Buffer(nil, 1<<20)
	ask := func(msg string) string {
		t.Helper()
		if _, err := io.WriteString(in, msg+"\n"); err != nil {
			t.Fatal(err)
		}
		if !lines.Scan() {
			t.Fatalf("toolfold ended the session: %v\n%s", lines.Err(), stdioLog.String())
		}
		return lines.Text()
	}
	ask(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e-bytes","version":"1"}}}`)
	if _, err := io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		answer := ask(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"quoting__whoami","arguments":{}}}`, 10+i))
		outputs = append(outputs, answer)
		if !strings.Contains(answer, "the token *** may not call whoami") {
			t.Errorf("stdio call %d: %s; want the server's error, masked", i, answer)
		}
	}
	in.Close()
	if err := stdio.Wait(); err != nil {
		t.Errorf("toolfold over stdio: %v", err)
	}
	outputs = append(outputs, stdioLog.String())
	if bytesOn && !strings.Contains(stdioLog.String(), "path=stdio-bytes") {
		t.Errorf("no call took the stdio byte path:\n%s", stdioLog.String())
	}

	// HTTP: a 2025-11-25 session and 2026-07-28 requests.
	serve, addr := startCmdOnFreeAddr(t, func(addr string) *exec.Cmd {
		cmd := exec.Command(binary, "serve", "--http", addr, "--config", path, "--mode", "flat", "--log-level", "debug")
		cmd.Env = environ
		return cmd
	})
	url := "http://" + addr + "/mcp"
	post := func(body string, header map[string]string) (int, string, http.Header) {
		t.Helper()
		return postMCP(t, url, body, header)
	}
	session := openRawSession(t, url, "e2e-bytes", nil)
	modern := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "quoting__whoami"}
	calls := []struct {
		name, body string
		header     map[string]string
	}{
		{"session", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"quoting__whoami","arguments":{}}}`, session},
		{"session again", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"quoting__whoami","arguments":{}}}`, session},
		{"2026-07-28 request", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"quoting__whoami","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"e2e-bytes","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`, modern},
	}
	for _, c := range calls {
		code, body, _ := post(c.body, c.header)
		outputs = append(outputs, body)
		if code >= 500 || !strings.Contains(body, "the token *** may not call whoami") {
			t.Errorf("%s: %d %s; want the server's error, masked", c.name, code, body)
		}
	}
	_ = serve.cmd.Process.Signal(os.Interrupt)
	select {
	case <-serve.done:
		logs := serve.stderr.String()
		outputs = append(outputs, logs)
		if bytesOn {
			for _, want := range []string{"path=http-session-bytes", "path=http-request-bytes"} {
				if !strings.Contains(logs, want) {
					t.Errorf("no call took the byte path (%s):\n%s", want, logs)
				}
			}
		}
	case <-time.After(30 * time.Second):
		t.Error("toolfold serve did not stop within 30 s of an interrupt")
	}
	if all := strings.Join(outputs, "\n"); strings.Contains(all, secret) {
		t.Errorf("the secret appears in toolfold's output:\n%s", all)
	}
}
