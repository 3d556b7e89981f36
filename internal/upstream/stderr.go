package upstream

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/toolfold/toolfold/internal/redact"
)

// stderrTailSize bounds what is kept of a child's stderr: enough for a stack trace
// or a usage message, small enough to put in /healthz for every server.
const stderrTailSize = 8 << 10

// tailBuffer is an io.Writer that keeps only the last max bytes written to it. A
// child's stderr is copied into one, so a server that logs forever costs a
// bounded amount of memory, and its last words are there when it dies.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
	// secrets are masked in what is read back: a server may print the
	// token it was given.
	secrets *redact.Secrets
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return n, nil
	}
	if over := len(t.buf) + len(p) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// String returns the kept text, starting at a line boundary when the beginning
// was cut off (half a line helps no one).
func (t *tailBuffer) String() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) == t.max {
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
	}
	return t.secrets.String(strings.ToValidUTF8(string(b), "�"))
}

// LastLine returns the last non-empty line written, trimmed, at most 300 bytes:
// what goes into an error message.
func (t *tailBuffer) LastLine() string {
	return lastLine(t.String())
}

func lastLine(s string) string {
	s = strings.TrimRight(s, " \t\r\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	s = strings.TrimSpace(s)
	const max = 300
	if len(s) > max {
		s = strings.ToValidUTF8(s[:max], "") + "…"
	}
	return s
}

// explainingPattern matches the stderr lines that usually say why a process
// failed: error and exception lines, a missing file, module or variable.
var explainingPattern = regexp.MustCompile(`(?i:\b(error|exception|fatal|panic|cannot|can't|could not|couldn't|unable|not found|no such|not set|missing|denied|refused|invalid|failed)\b)|[a-z](Error|Exception)\b|\b(ENOENT|EACCES|EADDRINUSE)\b`)

// stackFrame matches the frames of a stack trace (Node.js, Python, Go, Java),
// which repeat the error's place, not its cause.
var stackFrame = regexp.MustCompile(`^\s*(at |File "|goroutine |\S+\.go:\d+|\.\.\. \d+ more)`)

// maxExplaining bounds how many stderr lines an error message quotes.
const maxExplaining = 3

// Explanation returns the stderr lines that explain a failure, for an error
// message: the lines that read like an error (at most three, stack frames
// left out, each at most 300 bytes), or else the last non-empty line. A
// Node.js crash ends with its version ("Node.js v20.20.2"); the cause,
// "Error: Cannot find module …", is lines above it.
func (t *tailBuffer) Explanation() string {
	return explanation(t.String())
}

func explanation(s string) string {
	var picked []string
	for _, line := range strings.Split(s, "\n") {
		if !explainingPattern.MatchString(line) || stackFrame.MatchString(line) {
			continue
		}
		line = lastLine(line)
		if line == "" || slices.Contains(picked, line) {
			continue
		}
		picked = append(picked, line)
	}
	if len(picked) == 0 {
		return lastLine(s)
	}
	if len(picked) > maxExplaining {
		// The first ones: the cause comes before what it brought down.
		picked = picked[:maxExplaining]
	}
	return strings.Join(picked, " | ")
}
