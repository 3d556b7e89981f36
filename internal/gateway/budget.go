package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"

	"github.com/toolfold/toolfold/internal/rawcall"
)

// The answer budget bounds the bytes of answers the gateway holds for
// clients that have not read them yet. Each message is bounded on its own
// (maxMessageBytes); their sum was not, and twenty slow callers of a tool
// with 50 MB answers held gigabytes. Every answer to a client passes one
// writer, whatever path made it: the stdio writer (frame.go) for the typed
// path and the byte path alike, and the HTTP front's writer (http.go) for
// the SDK's answers, JSON or events, and the HTTP byte paths'. An answer is
// counted from before it waits for its connection until its write returns;
// one that would take the count over the budget is replaced by an error
// that says so, and the callers within it are untouched.

// DefaultAnswerBytesInFlight is the answer budget when Options sets none:
// room for a few answers near the largest a server may send (64 MiB) at
// once, and a bound far below what a host's memory holds.
const DefaultAnswerBytesInFlight = 256 << 20

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// refusableBytes is the smallest answer the budget refuses: smaller ones
// (errors, pings, most results) are counted but always go out, so a
// gateway at its budget still talks to every client.
const refusableBytes = 64 << 10

// answerBudget counts the answer bytes in flight; a nil one counts nothing.
type answerBudget struct {
	// limit is the bound, negative for none: a config reload sets it
	// (setLimit), and the next answer is judged by it.
	limit atomic.Int64
	used  atomic.Int64
	log   *slog.Logger
	// admitted, set by tests, hears each answer counted or refused.
	admitted func()
}

// newAnswerBudget makes the budget of Options.AnswerBytesInFlight. It is
// made even without a bound, which a reload may set.
func newAnswerBudget(limit int64, log *slog.Logger) *answerBudget {
	b := &answerBudget{log: log}
	b.setLimit(limit)
	return b
}

// setLimit bounds the answers admitted from now on as
// Options.AnswerBytesInFlight says; answers held now stay counted.
func (b *answerBudget) setLimit(limit int64) {
	if limit == 0 {
		limit = DefaultAnswerBytesInFlight
	}
	b.limit.Store(max(limit, -1))
}

// admit counts the message p before it is written, and returns what to
// write (p, or the refusal that replaces it) and the bytes to release once
// the write returns.
func (b *answerBudget) admit(p []byte) ([]byte, int64) {
	if b == nil {
		return p, 0
	}
	if b.admitted != nil {
		defer b.admitted()
	}
	n := int64(len(p))
	limit := b.limit.Load()
	if limit < 0 {
		return p, 0 // no bound: nothing to count
	}
	used := b.used.Add(n)
	if used <= limit || n < refusableBytes {
		return p, n
	}
	b.used.Add(-n)
	msg := fmt.Sprintf("toolfold is holding too many large answers that their clients have not read yet (%s of answerBytesInFlight, %s): this answer of %s was dropped. Retry later, or raise answerBytesInFlight in toolfold's config",
		mib(used-n), mib(limit), mib(n))
	out, ok := refusal(p, msg)
	if !ok {
		// Not an answer (a request or notification of the gateway's
		// own): it goes out, counted.
		b.used.Add(n)
		return p, n
	}
	b.log.Warn("refused an answer over the answer budget", "bytes", n, "inFlight", used-n, "answerBytesInFlight", limit)
	return out, 0
}

func (b *answerBudget) release(n int64) {
	if b != nil && n != 0 {
		b.used.Add(-n)
	}
}

// inFlight is the bytes counted now.
func (b *answerBudget) inFlight() int64 {
	if b == nil {
		return 0
	}
	return b.used.Load()
}

// AnswerBytesInFlight is the bytes of answers the gateway holds now for
// clients that have not read them yet (Options.AnswerBytesInFlight).
func (g *Gateway) AnswerBytesInFlight() int64 { return g.answers.inFlight() }

// refusal is the error that replaces the result in p, framed as p is: a
// JSON-RPC message alone (stdio, a plain JSON body), maybe ending in a
// newline, or one server-sent event. It reports false for anything but a
// result.
func refusal(p []byte, msg string) ([]byte, bool) {
	prefix, body, suffix := p[:0], p, []byte(nil)
	if !bytes.HasPrefix(p, []byte("{")) {
		i := bytes.Index(p, []byte("data: "))
		if i < 0 {
			return nil, false
		}
		prefix, body = p[:i+len("data: ")], p[i+len("data: "):]
	}
	trimmed := bytes.TrimRight(body, "\r\n")
	suffix = body[len(trimmed):]
	body = trimmed
	id := rawcall.Member(body, "id")
	if id == nil || rawcall.Member(body, "method") != nil || rawcall.Member(body, "result") == nil {
		return nil, false
	}
	quoted, _ := json.Marshal(msg)
	out := make([]byte, 0, len(prefix)+len(id)+len(quoted)+64+len(suffix))
	out = append(out, prefix...)
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, id...)
	out = append(out, `,"error":{"code":-32000,"message":`...)
	out = append(out, quoted...)
	out = append(out, `}}`...)
	out = append(out, suffix...)
	return out, true
}

// budgetWriter passes an HTTP response's writes through the budget.
type budgetWriter struct {
	http.ResponseWriter
	b *answerBudget
}

func (w *budgetWriter) Write(p []byte) (int, error) {
	out, n := w.b.admit(p)
	defer w.b.release(n)
	if _, err := w.ResponseWriter.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w *budgetWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *budgetWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
