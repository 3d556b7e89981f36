package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestNoSecretInAnyOutput configures secrets the ways a config holds them
// (a URL's query, password and path, a header, an env value), makes every
// server fail in the way that used to print them (a URL in a network
// error, a 401 body echoing the header and the URL, a stderr line echoing
// the env, a command-line tool echoing its env and argv), and reads every
// channel toolfold writes to: tool results, /healthz, /api/*, the
// dashboard, the logs, `toolfold tools` and `toolfold call`. No secret may
// appear in any of them.
func TestNoSecretInAnyOutput(t *testing.T) {
	secrets := map[string]string{
		"Q_SECRET": "q-secret-8f3a91", "H_SECRET": "h-secret-27bc54",
		"E_SECRET": "e-secret-d41e07", "U_SECRET": "u-secret-5a5a5a",
		"P_SECRET": "p-secret-71c3e9",
	}
	// A server that refuses everyone and, carelessly, says with what.
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "invalid credentials: "+r.Header.Get("Authorization")+" for "+r.URL.String(), http.StatusUnauthorized)
	}))
	t.Cleanup(echo.Close)
	closed := "http://" + freeAddr(t)
	host := strings.TrimPrefix(echo.URL, "http://")
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{
		"refusing": map[string]any{"url": "http://user:${U_SECRET}@" + host + "/mcp?key=${Q_SECRET}",
			"headers": map[string]any{"Authorization": "Bearer ${H_SECRET}"}},
		"gone": map[string]any{"url": closed + "/mcp?api_key=${Q_SECRET}"},
		// The key in the URL's path, as some hosted servers want it.
		"pathkey": map[string]any{"url": "http://" + host + "/mcp/${P_SECRET}/sse"},
		"leaky":   map[string]any{"command": "sh", "args": []string{"-c", `echo "fatal: the token $TOKEN was rejected" >&2; exit 1`}, "env": map[string]any{"TOKEN": "${E_SECRET}"}},
	}, "commands": map[string]any{
		// A program as a tool, echoing the secret in its env and its argv.
		"leakcmd": map[string]any{"command": "sh", "env": map[string]any{"TOKEN": "${E_SECRET}"}, "actions": map[string]any{
			"fail": map[string]any{"argv": []string{"-c", `echo "fatal: the token $TOKEN was rejected, given $0" >&2; exit 1`, "--key=${Q_SECRET}"}}}},
	}})
	environ := []string{"TOOLFOLD_CACHE_DIR=" + t.TempDir()}
	for k, v := range secrets {
		environ = append(environ, k+"="+v)
	}
	var outputs []string
	saw := func(channel, text string) { outputs = append(outputs, "== "+channel+" ==\n"+text) }

	// toolfold tools: its warnings name each failed server.
	tools := exec.Command(binary, "tools", "--config", path)
	tools.Env = append(os.Environ(), environ...)
	var toolsOut, toolsErr bytes.Buffer
	tools.Stdout, tools.Stderr = &toolsOut, &toolsErr
	_ = tools.Run()
	saw("toolfold tools stdout", toolsOut.String())
	saw("toolfold tools stderr", toolsErr.String())
	if !strings.Contains(toolsErr.String(), `"gone"`) {
		t.Errorf("toolfold tools does not report the failed server:\n%s", toolsErr.String())
	}

	// toolfold call: a command's failed result, stderr quoted back.
	call := exec.Command(binary, "call", "--config", path, "leakcmd__fail")
	call.Env = append(os.Environ(), environ...)
	var callOut, callErr bytes.Buffer
	call.Stdout, call.Stderr = &callOut, &callErr
	_ = call.Run()
	saw("toolfold call stdout", callOut.String())
	saw("toolfold call stderr", callErr.String())
	if !strings.Contains(callOut.String(), "was rejected, given --key=***") {
		t.Errorf("toolfold call does not show the command's failure:\n%s", callOut.String())
	}

	// toolfold serve: logs, /healthz, tool results.
	serve, addr := startCmdOnFreeAddr(t, func(addr string) *exec.Cmd {
		cmd := exec.Command(binary, "serve", "--http", addr, "--config", path, "--mode", "flat", "--log-level", "debug")
		cmd.Env = append(os.Environ(), environ...)
		return cmd
	})
	base := "http://" + addr
	s := httpSession(t, base, "e2e-go")
	for _, tool := range []string{"refusing__x", "gone__x", "leaky__x", "pathkey__x", "leakcmd__fail"} {
		res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
		if err != nil {
			saw("tools/call "+tool, err.Error())
			continue
		}
		saw("tools/call "+tool, fmt.Sprint(resultText(res)))
	}
	saw("tools/list", s.names())
	health, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(health.Body)
	health.Body.Close()
	saw("/healthz", string(body))
	for _, want := range []string{`"refusing"`, `"gone"`, `"leaky"`, `"pathkey"`, "401", "rejected", "/mcp/***/sse"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/healthz lacks %s: the failures must still be explained:\n%s", want, body)
		}
	}
	for _, page := range []string{"/api/groups", "/api/tools", "/"} {
		resp, err := http.Get(base + page)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %s", page, resp.Status)
		}
		saw("GET "+page, string(body))
	}
	s.Close()
	_ = serve.cmd.Process.Signal(os.Interrupt)
	select {
	case <-serve.done: // its stderr is complete
		saw("serve logs", serve.stderr.String())
	case <-time.After(30 * time.Second):
		t.Error("toolfold serve did not stop within 30 s of an interrupt")
	}

	all := strings.Join(outputs, "\n")
	for name, secret := range secrets {
		if strings.Contains(all, secret) {
			t.Errorf("the secret %s appears in toolfold's output", name)
		}
	}
	if t.Failed() || os.Getenv("SHOW") != "" {
		t.Logf("everything toolfold printed:\n%s", all)
	}
}
