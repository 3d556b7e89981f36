package upstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/redact"
	"github.com/toolfold/toolfold/internal/relay"
	"github.com/toolfold/toolfold/internal/sandbox"
	"github.com/toolfold/toolfold/internal/sdkshim"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
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

// headerTransport adds a remote server's configured headers to every request,
// and remembers the last HTTP error the server answered, so a failed start can
// say "HTTP 401 Unauthorized: <the server's words>" instead of the SDK's
// terser message.
//
// It also watches the server's messages for
// notifications/groups/list_changed: the streamable client connection cannot
// be wrapped (see lifetimeTransport), and the SDK drops notifications it
// does not know.
type headerTransport struct {
	base          http.RoundTripper
	headers       map[string]string
	secrets       *redact.Secrets // masked in the kept error (a 401 body may echo the token)
	lastError     atomic.Pointer[string]
	groupsChanged atomic.Pointer[func()]
	// maxMessage bounds a plain JSON response's body (maxMessageBytes);
	// the SDK bounds each event of a stream with the same figure
	// (MaxEventSize). Zero: no bound of toolfold's.
	maxMessage int64
	// intake, if set before the connection starts, watches every event
	// stream's body (streamIntake).
	intake *relay.Intake
}

// watchGroupsChanged sets what runs when a response carries
// notifications/groups/list_changed.
func (h *headerTransport) watchGroupsChanged(fn func()) { h.groupsChanged.Store(&fn) }

var _ http.RoundTripper = (*headerTransport)(nil)

// traceHeaders writes traceparent, tracestate and baggage; it holds no
// state.
var traceHeaders = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// errorBodySnippet bounds how much of an error response's body is kept.
const errorBodySnippet = 300

func (h *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range h.headers {
		req.Header.Set(k, v)
	}
	if trace.SpanContextFromContext(req.Context()).IsValid() {
		// The gateway traces this request (its client span is in the
		// context): say so in the headers too, for servers and proxies
		// that read trace context there rather than in _meta.
		traceHeaders.Inject(req.Context(), propagation.HeaderCarrier(req.Header))
	}
	resp, err := h.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	if resp.StatusCode < 400 {
		if h.maxMessage > 0 && resp.Body != nil && isJSONBody(resp.Header) {
			resp.Body = &boundedBody{ReadCloser: resp.Body, left: h.maxMessage, limit: config.ByteSize(h.maxMessage)}
		}
		if h.intake != nil && resp.Body != nil && isEventStream(resp.Header) {
			resp.Body = &streamIntake{ReadCloser: resp.Body, intake: h.intake}
		}
		if fn := h.groupsChanged.Load(); fn != nil && resp.Body != nil {
			resp.Body = sdkshim.WatchMethod(resp.Body, notificationGroupsChange, *fn)
		}
		return resp, nil
	}
	// Peek at the body for the server's explanation, then hand the whole
	// body on to the SDK unchanged.
	head := make([]byte, errorBodySnippet)
	n, _ := io.ReadFull(resp.Body, head)
	head = head[:n]
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	msg := "HTTP " + resp.Status
	if body := strings.Join(strings.Fields(strings.ToValidUTF8(string(head), "")), " "); body != "" {
		msg += ": " + body
	}
	msg = h.secrets.String(msg)
	h.lastError.Store(&msg)
	return resp, nil
}

// lastHTTPError is the last error status the server answered, or "".
func (h *headerTransport) lastHTTPError() string {
	if h == nil {
		return ""
	}
	if p := h.lastError.Load(); p != nil {
		return *p
	}
	return ""
}

// secretsOf gathers what a server's config holds secret: header values,
// the URL's userinfo and query, every value a ${VAR} reference put anywhere
// in its entry (a URL's path, args), and the literal env values whose
// names say they are secret. Other literal env values ("mode": "banner",
// "NODE_ENV": "production", a data directory) and literal args are
// settings, and masking them would garble every message that mentions them.
func secretsOf(cfg config.ServerConfig) *redact.Secrets {
	s := &redact.Secrets{}
	for k, v := range cfg.Env {
		if secretName.MatchString(k) {
			s.Add(v)
		}
	}
	for _, v := range cfg.Headers {
		s.Add(v)
	}
	for name, v := range cfg.Expanded {
		if !notSecretVariables[name] {
			s.Add(v)
		}
	}
	s.AddURL(cfg.URL)
	return s
}

// secretName matches the names of env variables that hold secrets
// (GITHUB_TOKEN, API_KEY, DB_PASSWORD, CLIENT_SECRET, AUTH, CREDENTIALS).
var secretName = regexp.MustCompile(`(?i)TOKEN|KEY|SECRET|PASS|AUTH|CRED`)

// notSecretVariables are variables a config reads for where things are or
// who runs them (${HOME}/notes), never secrets: masking them would hide
// every path in every message.
var notSecretVariables = map[string]bool{
	"HOME": true, "USERPROFILE": true, "USER": true, "USERNAME": true, "LOGNAME": true,
	"PWD": true, "TMPDIR": true, "TMP": true, "TEMP": true,
}

// describeTransport says where a server lives, for logs and errors, without
// secrets: the command's name (not its args, which may hold tokens) or the URL's
// scheme and host.
func describeTransport(cfg config.ServerConfig) string {
	if cfg.Command != "" {
		return "command " + cfg.Command + ", sandbox: " + cfg.SandboxSummary()
	}
	return string(cfg.Transport) + " " + redact.URL(cfg.URL)
}

// errNoTransport reports a server with neither command nor url; the config
// package refuses such files, so this only guards hand-built configs.
var errNoTransport = errors.New(`it has neither "command" nor "url"`)

// dialed is what one connection attempt is made of.
type dialed struct {
	transport mcp.Transport
	cmd       *exec.Cmd        // the stdio server's process, not started yet
	stderr    *tailBuffer      // where the process's stderr goes
	http      *headerTransport // a remote server's HTTP round tripper
}

// dialer makes the transport for one connection attempt; log is the
// server's logger.
type dialer func(ctx context.Context, name string, cfg config.ServerConfig, log *slog.Logger) (dialed, error)

func defaultDialer(_ context.Context, _ string, cfg config.ServerConfig, log *slog.Logger) (dialed, error) {
	switch {
	case cfg.Command != "":
		tail := newTailBuffer(stderrTailSize)
		tail.secrets = secretsOf(cfg)
		cmd := newCommand(cfg, tail)
		// The sandbox wraps every start (and so every restart) here, the
		// one place a stdio server's process is made.
		var prep sandbox.Prepared
		if cfg.Sandbox != nil {
			var err error
			if prep, err = sandbox.Prepare(cmd, cfg.Name, cfg.Sandbox, log); err != nil {
				return dialed{}, err
			}
		}
		return dialed{transport: &stdioTransport{cmd: cmd, terminateGrace: terminateGrace, release: prep.Release, start: prep.Start}, cmd: cmd, stderr: tail}, nil
	case cfg.URL != "":
		// No overall client timeout: SSE streams stay open for the session's
		// life; requests are bounded by their contexts instead.
		// maxMessageBytes bounds both kinds of answer: a JSON body here,
		// each event of a stream in the SDK.
		limit := cfg.EffectiveMaxMessageBytes()
		ht := &headerTransport{base: http.DefaultTransport, headers: cfg.Headers, secrets: secretsOf(cfg), maxMessage: int64(limit)}
		client := &http.Client{Transport: ht}
		if cfg.Transport == config.TransportSSE {
			return dialed{transport: &mcp.SSEClientTransport{Endpoint: cfg.URL, HTTPClient: client, MaxEventSize: int(limit)}, http: ht}, nil
		}
		return dialed{transport: &mcp.StreamableClientTransport{Endpoint: cfg.URL, HTTPClient: client, MaxEventSize: int(limit)}, http: ht}, nil
	}
	return dialed{}, errNoTransport
}

// isJSONBody tells a plain JSON answer from an event stream, whose
// events the SDK bounds one by one.
func isJSONBody(h http.Header) bool {
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return mt == "application/json"
}

// boundedBody fails a read once more than limit bytes have come: a remote
// server's answer larger than its maxMessageBytes fails the request it
// answers, as on stdio, instead of being read into memory whole.
type boundedBody struct {
	io.ReadCloser
	left  int64
	limit config.ByteSize
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body of exactly limit bytes from a larger one.
		var one [1]byte
		if n, err := b.ReadCloser.Read(one[:]); n == 0 {
			return 0, err
		}
		return 0, fmt.Errorf("%w: the server's answer is larger than %s (maxMessageBytes); raise the server's \"maxMessageBytes\" if that is expected", ErrTooLarge, b.limit)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
