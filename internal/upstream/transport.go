package upstream

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/config"
)

// inheritedEnv names the variables of toolfold's own environment that a stdio
// server inherits; everything else it gets only through its config's env. The
// list is the one the official TypeScript SDK uses (so a config that works in
// Claude Desktop works here), plus locale, temp dirs, proxies and CA bundles,
// which npx and friends need on real machines. toolfold's own secrets (tokens it
// expands into other servers' env or headers) are thus not handed to every server.
var inheritedEnv = func() []string {
	common := []string{
		"PATH", "TZ", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES",
		"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
		"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS",
	}
	if runtime.GOOS == "windows" {
		return append(common, "APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA",
			"PROCESSOR_ARCHITECTURE", "PROGRAMFILES", "SYSTEMDRIVE", "SYSTEMROOT",
			"TEMP", "TMP", "USERNAME", "USERPROFILE", "PATHEXT", "COMSPEC")
	}
	return append(common, "HOME", "LOGNAME", "SHELL", "TERM", "USER", "TMPDIR", "XDG_RUNTIME_DIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME")
}()

// childEnv builds a stdio server's environment: the inherited variables that are
// set, then the config's env on top (config wins). Sorted, for a stable argv dump.
func childEnv(parent func(string) (string, bool), configured map[string]string) []string {
	env := map[string]string{}
	for _, name := range inheritedEnv {
		if v, ok := parent(name); ok {
			env[name] = v
		}
	}
	for k, v := range configured {
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// terminateGrace is how long closing a stdio server waits after closing its
// stdin before sending SIGTERM (and as long again before SIGKILL).
const terminateGrace = 2 * time.Second

// newCommand prepares (but does not start) a stdio server's process, its stderr
// going into tail.
func newCommand(cfg config.ServerConfig, tail *tailBuffer) *exec.Cmd {
	cmd := exec.Command(cfg.Command, cfg.Args...)
	cmd.Env = childEnv(os.LookupEnv, cfg.Env)
	cmd.Dir = cfg.Cwd
	cmd.Stderr = tail
	// A child that leaves a grandchild holding stderr open must not make Wait
	// (and so Close) hang forever.
	cmd.WaitDelay = terminateGrace
	setProcessGroup(cmd)
	return cmd
}

// headerTransport adds a remote server's configured headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

var _ http.RoundTripper = (*headerTransport)(nil)

func (h *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range h.headers {
		req.Header.Set(k, v)
	}
	return h.base.RoundTrip(req)
}

// newHTTPClient returns the client a remote server is reached with. It has no
// overall timeout: SSE streams stay open for the session's life; calls are
// bounded by their contexts instead.
func newHTTPClient(headers map[string]string) *http.Client {
	return &http.Client{Transport: &headerTransport{base: http.DefaultTransport, headers: headers}}
}

// describeTransport says where a server lives, for logs and errors, without
// secrets: the command's name (not its args, which may hold tokens) or the URL's
// scheme and host.
func describeTransport(cfg config.ServerConfig) string {
	if cfg.Command != "" {
		return "command " + cfg.Command
	}
	u := cfg.URL
	if i := strings.Index(u, "?"); i >= 0 {
		u = u[:i]
	}
	if at := strings.Index(u, "@"); at >= 0 {
		if s := strings.Index(u, "://"); s >= 0 && s < at {
			u = u[:s+3] + u[at+1:]
		}
	}
	return string(cfg.Transport) + " " + u
}

// errNoTransport reports a server with neither command nor url; the config
// package refuses such files, so this only guards hand-built configs.
var errNoTransport = errors.New(`it has neither "command" nor "url"`)

// dialer makes the transport for one connection attempt. For a stdio server it
// also returns the process (not started yet) and its stderr tail.
type dialer func(ctx context.Context, name string, cfg config.ServerConfig) (mcp.Transport, *exec.Cmd, *tailBuffer, error)

func defaultDialer(_ context.Context, _ string, cfg config.ServerConfig) (mcp.Transport, *exec.Cmd, *tailBuffer, error) {
	switch {
	case cfg.Command != "":
		tail := newTailBuffer(stderrTailSize)
		cmd := newCommand(cfg, tail)
		return &mcp.CommandTransport{Command: cmd, TerminateDuration: terminateGrace}, cmd, tail, nil
	case cfg.URL != "" && cfg.Transport == config.TransportSSE:
		return &mcp.SSEClientTransport{Endpoint: cfg.URL, HTTPClient: newHTTPClient(cfg.Headers)}, nil, nil, nil
	case cfg.URL != "":
		return &mcp.StreamableClientTransport{Endpoint: cfg.URL, HTTPClient: newHTTPClient(cfg.Headers)}, nil, nil, nil
	}
	return nil, nil, nil, fmt.Errorf("%w", errNoTransport)
}
