package upstream

import (
	"bytes"
	"io"
	"mime"
	"net/http"
	"sync"

	"github.com/toolfold/toolfold/internal/relay"
)

// The intake of an HTTP server (relay.Intake): the SDK's client transport
// reads each event stream (a POST's response, the standalone GET stream,
// the SSE transport's stream) with a buffered line reader that yields each
// event, and hands it on, before it reads again; it reads the body only
// when no whole line is left in its buffer. So a Read of the body is that
// stream's drain, as a read that may wait is stdio's rawLines': every
// event before it has been handed on, or is counted below. The body is
// the one place toolfold sees the stream before the SDK, so it counts the
// requests for input there, one data line at a time.

// maxQuestionLine bounds the part of a line kept across reads to look for
// a request for input; a longer line (a large result) is not looked at,
// and a question that long is not counted: at worst one more round.
const maxQuestionLine = 64 << 10

// isEventStream reports whether a response is an event stream.
func isEventStream(h http.Header) bool {
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return mt == "text/event-stream"
}

// streamIntake is an event stream's body, told to its connection's
// intake: Reading when a read returned bytes, Drained when the SDK reads
// again or closes the body, Arrived for each request for input.
type streamIntake struct {
	io.ReadCloser
	intake *relay.Intake

	mu      sync.Mutex // Close may come from another goroutine than Read
	reading bool       // Reading said, Drained not yet
	line    []byte     // the start of a line not ended yet
	long    bool       // the current line outgrew maxQuestionLine
}

func (b *streamIntake) Read(p []byte) (int, error) {
	b.drain()
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.mu.Lock()
		if !b.reading {
			b.reading = true
			b.intake.Reading()
		}
		b.scan(p[:n])
		b.mu.Unlock()
	}
	return n, err
}

func (b *streamIntake) Close() error {
	b.drain()
	return b.ReadCloser.Close()
}

func (b *streamIntake) drain() {
	b.mu.Lock()
	if b.reading {
		b.reading = false
		b.intake.Drained()
	}
	b.mu.Unlock()
}

// scan counts the requests for input among the whole lines of chunk, with
// what the last read left of a line; b.mu is held.
func (b *streamIntake) scan(chunk []byte) {
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			b.keep(chunk)
			return
		}
		line := chunk[:i+1]
		chunk = chunk[i+1:]
		if len(b.line) > 0 || b.long {
			b.keep(line)
			line = b.line
		}
		if !b.long && isQuestion(bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))) {
			b.intake.Arrived()
		}
		b.line, b.long = b.line[:0], false
	}
}

// keep adds part of a line to what is kept of it, up to maxQuestionLine.
func (b *streamIntake) keep(part []byte) {
	if b.long || len(b.line)+len(part) > maxQuestionLine {
		b.line, b.long = nil, true
		return
	}
	b.line = append(b.line, part...)
}
