package cmdtool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// defaultPath is the child's PATH when toolfold itself has none.
const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// waitDelay is how long Run waits, once the program has exited or been
// killed, for its output pipes to close. A background grandchild that
// inherited the pipes would otherwise keep Run waiting forever.
const waitDelay = time.Second

// Rendering limits for the stderr tail shown to a model on failure.
const (
	stderrTailLines = 40
	stderrTailBytes = 4 << 10
)

// errTimedOut marks the cancellation caused by the Program's own timeout,
// as distinct from the caller's context ending.
var errTimedOut = errors.New("cmdtool: call timed out")

// Result is the outcome of one run of a program.
type Result struct {
	// Argv is what ran, argv[0] being the configured command.
	Argv []string
	// ExitCode is the program's exit status; -1 when it was killed by a
	// signal (as on timeout).
	ExitCode int
	// Stdout holds the first MaxOutput bytes of standard output, followed
	// by a truncation marker when more was written.
	Stdout string
	// Stderr holds the last MaxOutput bytes of standard error (the end is
	// where the reason for a failure usually is), preceded by a
	// truncation marker when more was written.
	Stderr string
	// TruncatedStdout and TruncatedStderr say whether output was dropped.
	TruncatedStdout, TruncatedStderr bool
	// TimedOut says the program ran past the timeout and its process
	// group was killed.
	TimedOut bool
	// Timeout is the limit that applied.
	Timeout time.Duration
	// Duration is the wall time from start to exit.
	Duration time.Duration
}

// IsError reports a failed call: a non-zero exit or a timeout. It maps to
// isError in an MCP tool result.
func (r *Result) IsError() bool { return r.TimedOut || r.ExitCode != 0 }

// Text renders the result for a model: stdout; then, for a failed call,
// the exit code (or the timeout) and the tail of stderr. A successful call
// that printed nothing on stdout shows its stderr instead (many programs
// report progress and results there), or "(no output)".
func (r *Result) Text() string {
	var b strings.Builder
	b.WriteString(r.Stdout)
	section := func() {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
	}
	switch {
	case r.TimedOut:
		section()
		fmt.Fprintf(&b, "timed out after %s; the program and its child processes were killed. Narrow the request or ask for a longer timeout in the config.", r.Timeout)
	case r.ExitCode != 0:
		section()
		fmt.Fprintf(&b, "exit code %d", r.ExitCode)
	}
	tail := tailOfText(r.Stderr, stderrTailLines, stderrTailBytes)
	switch {
	case r.IsError() && tail != "":
		section()
		b.WriteString("stderr:\n")
		b.WriteString(tail)
	case !r.IsError() && r.Stdout == "" && tail != "":
		b.WriteString(tail)
	case !r.IsError() && r.Stdout == "":
		b.WriteString("(no output)")
	}
	return b.String()
}

// tailOfText keeps the last lines of s, at most maxLines and maxBytes.
func tailOfText(s string, maxLines, maxBytes int) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return ""
	}
	cut := 0
	if len(s) > maxBytes {
		cut = len(s) - maxBytes
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut++
		}
	}
	lines := 0
	for i := len(s) - 1; i >= cut; i-- {
		if s[i] == '\n' {
			lines++
			if lines == maxLines {
				cut = i + 1
				break
			}
		}
	}
	if cut > 0 {
		return "…\n" + s[cut:]
	}
	return s
}

// Environ returns the complete environment a program runs with. Nothing
// else from toolfold's own environment is inherited, so secrets in it
// (tokens, cloud credentials, SSH agent sockets) do not leak to the
// program:
//
//	PATH     toolfold's PATH, or /usr/local/bin:/usr/bin:/bin if it has none
//	HOME     toolfold's HOME, when set (git, docker and kubectl read config there)
//	LANG     C.UTF-8 (stable, English messages that discovery can parse)
//	TERM     dumb (no colours, no cursor control, no pagers)
//	NO_COLOR 1
//
// then every entry of p.Env, which may override any of the above.
func Environ(p Program) []string {
	env := map[string]string{
		"PATH":     os.Getenv("PATH"),
		"LANG":     "C.UTF-8",
		"TERM":     "dumb",
		"NO_COLOR": "1",
	}
	if env["PATH"] == "" {
		env["PATH"] = defaultPath
	}
	if home := os.Getenv("HOME"); home != "" {
		env["HOME"] = home
	}
	for k, v := range p.Env {
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// ResolveCommand finds the executable p.Command names: a path when it
// contains a slash (relative to p.Dir), otherwise a file on the child's
// PATH. Relative PATH entries such as "." are skipped, so a file in the
// working directory cannot stand in for a program on PATH.
func ResolveCommand(p Program) (string, error) {
	name := p.Command
	if name == "" {
		return "", fmt.Errorf("command %q has no \"command\" set; set it to a program name or path", p.Name)
	}
	if strings.ContainsRune(name, '/') {
		path := name
		if !filepath.IsAbs(path) && p.Dir != "" {
			path = filepath.Join(p.Dir, path)
		}
		if err := checkExecutable(path); err != nil {
			return "", fmt.Errorf("command %q of %q cannot be run: %w; fix the path in \"command\" or install the program", name, p.Name, err)
		}
		return path, nil
	}
	pathList := defaultPath
	for _, kv := range Environ(p) {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathList = v
		}
	}
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		path := filepath.Join(dir, name)
		if checkExecutable(path) == nil {
			return path, nil
		}
	}
	return "", fmt.Errorf("command %q of %q was not found on PATH (%s): install it, or set \"command\" to its full path: %w",
		name, p.Name, pathList, exec.ErrNotFound)
}

func checkExecutable(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if info.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	if info.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not executable: %w", path, fs.ErrPermission)
	}
	return nil
}

// Run builds the argv for a model's arguments (see BuildArgv) and runs it.
// A non-zero exit or a timeout is not an error: it is reported in the
// Result (see Result.IsError). An error means nothing useful ran: bad
// arguments (a *ParamError inside), a program that cannot be found or
// started, or ctx ending before the program did.
func Run(ctx context.Context, p Program, a Action, args map[string]any) (*Result, error) {
	argv, err := BuildArgv(p, a, args)
	if err != nil {
		return nil, err
	}
	return runArgv(ctx, p, argv, timeoutOf(p), maxOutputOf(p))
}

func timeoutOf(p Program) time.Duration {
	if p.Timeout > 0 {
		return p.Timeout
	}
	return DefaultTimeout
}

func maxOutputOf(p Program) int64 {
	if p.MaxOutput > 0 {
		return p.MaxOutput
	}
	return DefaultMaxOutput
}

// runArgv runs argv (argv[0] is p.Command) without a shell, in its own
// process group, with p.Dir, Environ(p), stdin from /dev/null, a timeout
// and capped output.
func runArgv(ctx context.Context, p Program, argv []string, timeout time.Duration, maxOutput int64) (*Result, error) {
	path, err := ResolveCommand(p)
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithTimeoutCause(ctx, timeout, errTimedOut)
	defer cancel()

	cmd := exec.CommandContext(runCtx, path, argv[1:]...)
	cmd.Dir = p.Dir
	cmd.Env = Environ(p)
	// Its own process group, so a timeout kills everything it started,
	// not just the direct child.
	setProcessGroup(cmd)
	cmd.Cancel = func() error { return killProcessGroup(cmd.Process) }
	cmd.WaitDelay = waitDelay
	stdout := &capBuffer{limit: maxOutput}
	stderr := &capBuffer{limit: maxOutput, keepTail: true}
	cmd.Stdout = stdout
	cmd.Stderr = stderr

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %q for %q: %w", path, p.Name, err)
	}
	waitErr := cmd.Wait()
	duration := time.Since(start)
	// Whatever the program left behind in its group (a background child
	// holding our pipe, a forgotten sleep) goes with it.
	_ = killProcessGroup(cmd.Process)

	res := &Result{
		Argv:     argv,
		ExitCode: cmd.ProcessState.ExitCode(),
		Timeout:  timeout,
		Duration: duration,
	}
	res.Stdout, res.TruncatedStdout = stdout.text()
	res.Stderr, res.TruncatedStderr = stderr.text()
	if errors.Is(waitErr, exec.ErrWaitDelay) {
		res.Stderr += "\n[a background process kept the output open after the program exited; it was killed]"
	}
	if runCtx.Err() != nil {
		if context.Cause(runCtx) == errTimedOut {
			res.TimedOut = true
			return res, nil
		}
		return res, fmt.Errorf("%s %s was stopped because the call ended: %w", p.Name, strings.Join(argv[1:], " "), ctx.Err())
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) && !errors.Is(waitErr, exec.ErrWaitDelay) {
		return res, fmt.Errorf("waiting for %q of %q: %w", path, p.Name, waitErr)
	}
	return res, nil
}

// capBuffer keeps at most limit bytes of a stream: the first ones, or the
// last ones with keepTail. It accepts and counts everything beyond that, so
// the writer never blocks on a full pipe, and memory stays bounded
// (2*limit at most for the tail).
type capBuffer struct {
	limit    int64
	keepTail bool

	mu    sync.Mutex
	buf   []byte
	total int64
}

// Write implements io.Writer; it never fails.
func (c *capBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += int64(len(p))
	if !c.keepTail {
		if room := c.limit - int64(len(c.buf)); room > 0 {
			c.buf = append(c.buf, p[:min(int64(len(p)), room)]...)
		}
		return len(p), nil
	}
	if int64(len(p)) >= c.limit {
		c.buf = append(c.buf[:0], p[int64(len(p))-c.limit:]...)
		return len(p), nil
	}
	c.buf = append(c.buf, p...)
	if int64(len(c.buf)) > 2*c.limit {
		c.buf = append(c.buf[:0], c.buf[int64(len(c.buf))-c.limit:]...)
	}
	return len(p), nil
}

// text returns the kept bytes with a truncation marker, cut on a UTF-8
// boundary, and whether anything was dropped.
func (c *capBuffer) text() (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := c.buf
	if c.keepTail && int64(len(kept)) > c.limit {
		kept = kept[int64(len(kept))-c.limit:]
	}
	if int64(len(kept)) == c.total {
		return string(kept), false
	}
	if c.keepTail {
		for len(kept) > 0 && !utf8.RuneStart(kept[0]) {
			kept = kept[1:]
		}
		dropped := c.total - int64(len(kept))
		return fmt.Sprintf("[output truncated: %s before this not shown]\n", humanBytes(dropped)) + string(kept), true
	}
	// Drop a rune cut in half at the end.
	if i := lastRuneStart(kept); i >= 0 && !utf8.FullRune(kept[i:]) {
		kept = kept[:i]
	}
	dropped := c.total - int64(len(kept))
	return string(kept) + fmt.Sprintf("\n[output truncated: %s more not shown; narrow the request]", humanBytes(dropped)), true
}

func lastRuneStart(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			return i
		}
	}
	return -1
}

// humanBytes writes a byte count the way people read it: "512 bytes",
// "1.2 MiB".
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		if n == 1 {
			return "1 byte"
		}
		return fmt.Sprintf("%d bytes", n)
	}
	value, exp := float64(n)/unit, 0
	for value >= unit && exp < 4 {
		value /= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", value, "KMGTP"[exp])
}
