package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/relay"
)

// stdioTransport runs a stdio server like the SDK's CommandTransport, but
// reads its stdout through a filter that skips lines that cannot be
// JSON-RPC (a start-up banner, a stray print), reporting each, as the
// TypeScript SDK does: one such line would otherwise end the connection,
// and the server with it.
type stdioTransport struct {
	cmd *exec.Cmd
	// intake, if set before Connect, is told when the reader drains and
	// of each request for input it hands on (see rawLines).
	intake *relay.Intake
	// terminateGrace is how long Close waits after closing stdin before
	// SIGTERM, and after SIGTERM before SIGKILL.
	terminateGrace time.Duration
	// skipped is told each line left out, shortened. Set before Connect.
	skipped func(line string)
	// broken, if set before Connect, handles the lines that start like
	// an answer and are not valid JSON (jsonLines.broken); nil means
	// raw.brokenAnswer.
	broken func(line []byte) (replacement []byte, answered bool)
	// raw, if set before Connect, is the fast path's side door (raw.go):
	// it writes to stdin beside the SDK and takes its answers off stdout
	// before the SDK reads them.
	raw *rawConn
	// maxMessage bounds one message from the server (maxMessageBytes);
	// zero means config.DefaultMaxMessageBytes.
	maxMessage int
	// tooLarge, if set before Connect, is told of each message skipped
	// for its size (see rawLines).
	tooLarge func(id []byte, request bool)
	// release, if set, undoes the sandbox's set-up of this start once the
	// process has been waited for (sandbox.Prepare).
	release func()
	// start, if set, starts cmd inside its sandbox instead of cmd.Start.
	start func() error
}

var _ mcp.Transport = (*stdioTransport)(nil)

func (t *stdioTransport) Connect(context.Context) (mcp.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	start := t.cmd.Start
	if t.start != nil {
		start = t.start
	}
	if err := start(); err != nil {
		if t.release != nil {
			t.release()
		}
		return nil, err
	}
	skipped := t.skipped
	if skipped == nil {
		skipped = func(string) {}
	}
	// The connection is closed by closing stdin (then signals), never by
	// closing stdout, whose last bytes may still be on their way.
	var writer io.WriteCloser = &childStdin{WriteCloser: stdin, cmd: t.cmd, grace: t.terminateGrace, release: t.release}
	maxMessage := t.maxMessage
	if maxMessage <= 0 {
		maxMessage = int(config.DefaultMaxMessageBytes)
	}
	// Lines over the bound are read past here, never held; the fast
	// path's answers are taken off, so the filter below never decodes
	// them; any other line (a banner included) passes on to it as it came.
	out := &rawLines{src: stdout, raw: t.raw, max: maxMessage, tooLarge: t.tooLarge, intake: t.intake}
	if t.raw != nil {
		w := &lockedWriter{w: writer}
		t.raw.w = w
		writer = w
	}
	broken := t.broken
	if broken == nil {
		broken = t.raw.brokenAnswer
	}
	lines := &jsonLines{r: bufio.NewReader(out), skipped: skipped, broken: broken, lineStart: true}
	// The SDK's own bound only backs this one up: the lines it reads are
	// bounded already (twice, for what its decoder reads ahead).
	transport := &mcp.IOTransport{Reader: io.NopCloser(lines), Writer: writer, MaxLineLength: 2 * maxMessage}
	return transport.Connect(context.Background())
}

// childStdin is the server's stdin; closing it ends the server the way
// the MCP stdio transport says to: close stdin, wait, SIGTERM, wait,
// SIGKILL. Close returns once the process has been waited for.
type childStdin struct {
	io.WriteCloser
	cmd     *exec.Cmd
	grace   time.Duration
	release func() // nil, or run once the process was waited for
}

func (c *childStdin) Close() error {
	if err := c.WriteCloser.Close(); err != nil {
		return fmt.Errorf("closing stdin: %w", err)
	}
	exited := make(chan error, 1)
	go func() {
		err := c.cmd.Wait()
		if c.release != nil {
			c.release()
		}
		exited <- err
	}()
	wait := func() (error, bool) {
		t := time.NewTimer(c.grace)
		defer t.Stop()
		select {
		case err := <-exited:
			return err, true
		case <-t.C:
			return nil, false
		}
	}
	if err, ok := wait(); ok {
		return err
	}
	if c.cmd.Process.Signal(syscall.SIGTERM) == nil {
		if err, ok := wait(); ok {
			return err
		}
	}
	if err := c.cmd.Process.Kill(); err != nil {
		return err
	}
	if err, ok := wait(); ok {
		return err
	}
	return errors.New("the server did not exit after SIGKILL")
}

// jsonLines passes on the lines of r that are JSON-RPC messages and skips
// the rest, telling skipped. A line is judged whole: it passes if it is a
// JSON object with "jsonrpc": "2.0", or a non-empty array of such objects
// (a batch), so a banner that merely starts with a bracket ("[INFO] ready",
// "{'ok': 1}", a JSON log line) is skipped too. Blanks (JSON whitespace)
// at the start of a line pass at once, since the SDK's decoder ignores
// them; so blank lines pass. The rest of a line is held for judging up to
// maxJudged bytes; a longer one is judged by its first byte ("{" or "["
// passes) and streamed, so a large message costs no more than that bound.
type jsonLines struct {
	r       *bufio.Reader
	skipped func(line string)
	// broken, if set, is given each whole line that starts with "{" and
	// is not valid JSON, before it is skipped: an answer the server
	// broke (invalid.go). It returns the line the SDK reads instead, if
	// any, and whether the line was an answer, not to be reported.
	broken    func(line []byte) (replacement []byte, answered bool)
	maxJudged int  // 0 means maxJudgedLine
	lineStart bool // the next chunk read begins a line
	state     lineState
	line      []byte // the current line from its first non-blank byte, while it is judged
	more      []byte // the rest of the last chunk read, still to be handled
	rest      []byte // bytes being passed on, not yet read
	junk      []byte // the start of the line being skipped, for the report
	err       error  // r's error, returned once rest is drained
}

// lineState is what is being done with the current line.
type lineState int

const (
	judging  lineState = iota // held in line until it ends or grows past maxJudged
	passing                   // streamed on as read
	skipping                  // dropped, its start kept in junk
)

// maxJudgedLine bounds the bytes held to judge one line. JSON-RPC messages
// above it (a large tool list) are passed on by their first byte.
const maxJudgedLine = 1 << 20

// keptLineBuffer is the largest judging buffer kept between lines; a
// larger one, grown for one big message, is let go.
const keptLineBuffer = 64 << 10

// junkQuote bounds how much of a skipped line is quoted.
const junkQuote = 200

// blanks are the bytes JSON allows between values.
const blanks = " \t\r\n"

func (j *jsonLines) Read(p []byte) (int, error) {
	for len(j.rest) == 0 {
		chunk := j.more
		j.more = nil
		if chunk == nil {
			if j.err != nil {
				return 0, j.err
			}
			var err error
			chunk, err = j.r.ReadSlice('\n')
			if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
				j.err = err
			}
			if len(chunk) == 0 {
				if j.err != nil && !j.lineStart {
					j.lineStart = true
					j.end() // a last line without a newline
				}
				continue
			}
			if j.lineStart {
				j.state = judging
				if cap(j.line) > keptLineBuffer {
					j.line = nil
				}
				j.line = j.line[:0]
			}
			j.lineStart = chunk[len(chunk)-1] == '\n'
		}
		// Nothing more of this line will come.
		ended := chunk[len(chunk)-1] == '\n' || j.err != nil
		switch j.state {
		case passing:
			j.rest = chunk
		case skipping:
			j.keepJunk(chunk)
			if ended {
				j.report()
			}
		case judging:
			if n := len(chunk) - len(bytes.TrimLeft(chunk, blanks)); len(j.line) == 0 && n > 0 {
				j.rest = chunk[:n]
				if n < len(chunk) {
					j.more = chunk[n:]
				}
				continue
			}
			j.judge(chunk, ended)
		}
	}
	n := copy(p, j.rest)
	j.rest = j.rest[n:]
	return n, nil
}

// end settles a line that ended without a newline, at the end of r.
func (j *jsonLines) end() {
	switch j.state {
	case judging:
		j.judge(nil, true)
	case skipping:
		j.report()
	}
}

// judge adds chunk to the line being judged and decides its fate once the
// line has ended, its first byte rules it out, or it outgrows the bound.
func (j *jsonLines) judge(chunk []byte, ended bool) {
	j.line = append(j.line, chunk...)
	limit := j.maxJudged
	if limit <= 0 {
		limit = maxJudgedLine
	}
	switch {
	case len(j.line) == 0: // only blanks, passed on already
	case j.line[0] != '{' && j.line[0] != '[':
		j.skip(ended) // not JSON-RPC whatever follows: no need to hold it
	case len(j.line) > limit || ended && isJSONRPC(j.line):
		j.state, j.rest = passing, j.line
	case ended:
		if j.line[0] == '{' && j.broken != nil && !json.Valid(j.line) {
			if rep, answered := j.broken(j.line); answered {
				j.line = j.line[:0]
				j.state, j.rest = passing, rep
				return
			}
		}
		j.skip(true)
	}
}

// skip drops the line held so far, keeping its start for the report.
func (j *jsonLines) skip(ended bool) {
	j.state = skipping
	j.keepJunk(j.line)
	j.line = j.line[:0]
	if ended {
		j.report()
	}
}

func (j *jsonLines) keepJunk(b []byte) {
	if room := junkQuote - len(j.junk); room > 0 {
		j.junk = append(j.junk, b[:min(room, len(b))]...)
	}
}

// report tells of the line being skipped, once it has ended.
func (j *jsonLines) report() {
	j.skipped(lastLine(string(bytes.ToValidUTF8(j.junk, []byte("�")))))
	j.junk = j.junk[:0]
}

// isJSONRPC reports whether a whole line is a JSON-RPC message: an object
// whose "jsonrpc" member is "2.0", or a non-empty batch of them. Anything
// else would end the connection when the SDK reads it.
func isJSONRPC(line []byte) bool {
	type message struct {
		Version *string `json:"jsonrpc"`
	}
	is := func(m message) bool { return m.Version != nil && *m.Version == "2.0" }
	line = bytes.TrimSpace(line)
	if !json.Valid(line) {
		return false
	}
	if line[0] == '[' {
		var batch []message
		if json.Unmarshal(line, &batch) != nil || len(batch) == 0 {
			return false
		}
		return !slices.ContainsFunc(batch, func(m message) bool { return !is(m) })
	}
	var m message
	return json.Unmarshal(line, &m) == nil && is(m)
}
