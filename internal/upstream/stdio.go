package upstream

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioTransport runs a stdio server like the SDK's CommandTransport, but
// reads its stdout through a filter that skips lines that cannot be
// JSON-RPC (a start-up banner, a stray print), reporting each, as the
// TypeScript SDK does: one such line would otherwise end the connection,
// and the server with it.
type stdioTransport struct {
	cmd *exec.Cmd
	// terminateGrace is how long Close waits after closing stdin before
	// SIGTERM, and after SIGTERM before SIGKILL.
	terminateGrace time.Duration
	// skipped is told each line left out, shortened. Set before Connect.
	skipped func(line string)
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
	if err := t.cmd.Start(); err != nil {
		return nil, err
	}
	skipped := t.skipped
	if skipped == nil {
		skipped = func(string) {}
	}
	// The connection is closed by closing stdin (then signals), never by
	// closing stdout, whose last bytes may still be on their way.
	reader := io.NopCloser(&jsonLines{r: bufio.NewReader(stdout), skipped: skipped, lineStart: true})
	transport := &mcp.IOTransport{Reader: reader, Writer: &childStdin{WriteCloser: stdin, cmd: t.cmd, grace: t.terminateGrace}}
	return transport.Connect(context.Background())
}

// childStdin is the server's stdin; closing it ends the server the way
// the MCP stdio transport says to: close stdin, wait, SIGTERM, wait,
// SIGKILL. Close returns once the process has been waited for.
type childStdin struct {
	io.WriteCloser
	cmd   *exec.Cmd
	grace time.Duration
}

func (c *childStdin) Close() error {
	if err := c.WriteCloser.Close(); err != nil {
		return fmt.Errorf("closing stdin: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- c.cmd.Wait() }()
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

// jsonLines passes on the lines of r that may be JSON-RPC messages (they
// start with "{" or "[", after blanks; blank lines pass too) and skips the
// rest, telling skipped. It streams: a line is judged by its first bytes,
// so a message of any size costs no more than bufio's buffer.
type jsonLines struct {
	r         *bufio.Reader
	skipped   func(line string)
	lineStart bool   // the next chunk begins a line
	skipping  bool   // the current line is being skipped
	rest      []byte // a chunk being passed on, not yet read
	junk      []byte // the start of the line being skipped, for the report
	err       error  // r's error, returned once rest is drained
}

// junkQuote bounds how much of a skipped line is quoted.
const junkQuote = 200

func (j *jsonLines) Read(p []byte) (int, error) {
	for len(j.rest) == 0 {
		if j.err != nil {
			return 0, j.err
		}
		chunk, err := j.r.ReadSlice('\n')
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			j.err = err
		}
		if len(chunk) == 0 {
			if j.err != nil && j.skipping {
				j.report() // a skipped last line without a newline
			}
			continue
		}
		if j.lineStart {
			first := bytes.TrimLeft(chunk, " \t\r\n")
			j.skipping = len(first) > 0 && first[0] != '{' && first[0] != '['
		}
		lineEnds := chunk[len(chunk)-1] == '\n'
		j.lineStart = lineEnds
		if !j.skipping {
			j.rest = chunk
			continue
		}
		if room := junkQuote - len(j.junk); room > 0 {
			j.junk = append(j.junk, chunk[:min(room, len(chunk))]...)
		}
		if lineEnds || j.err != nil {
			j.report()
		}
	}
	n := copy(p, j.rest)
	j.rest = j.rest[n:]
	return n, nil
}

// report tells of the line being skipped, once it has ended.
func (j *jsonLines) report() {
	j.skipped(lastLine(string(bytes.ToValidUTF8(j.junk, []byte("�")))))
	j.junk, j.skipping = j.junk[:0], false
}
