package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/rawcall"
)

// spyWriter sits between the fast path and a server's stdin: it records
// each write, and fails them while fail is set.
type spyWriter struct {
	io.WriteCloser
	mu     sync.Mutex
	writes [][]byte
	fail   error
}

func (s *spyWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return 0, s.fail
	}
	s.writes = append(s.writes, bytes.Clone(p))
	return s.WriteCloser.Write(p)
}

func (s *spyWriter) recorded() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes
}

func (s *spyWriter) failWith(err error) {
	s.mu.Lock()
	s.fail = err
	s.mu.Unlock()
}

// runningConn starts server's process and returns its connection.
func runningConn(t *testing.T, m *Manager, server string) *connection {
	t.Helper()
	mustCall(t, m, server, "pid", nil)
	s, err := m.lookup(server)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil || s.conn.raw == nil {
		t.Fatalf("server %s has no fast path after a call", server)
	}
	return s.conn
}

// spyOnStdin puts a spyWriter under the connection's writer.
func spyOnStdin(c *connection) *spyWriter {
	w := c.raw.w
	w.mu.Lock()
	defer w.mu.Unlock()
	spy := &spyWriter{WriteCloser: w.w}
	w.w = spy
	return spy
}

// forwardInBatch sends a fast-path call whose request may wait for batch.
func forwardInBatch(t *testing.T, m *Manager, server, tool, args string, batch *rawcall.Batch) <-chan rawOutcome {
	t.Helper()
	out := make(chan rawOutcome, 1)
	if _, ok := m.ForwardRaw(server, tool, &rawcall.Call{
		Arguments: json.RawMessage(args), Batch: batch,
		Done: func(res json.RawMessage, err error) { out <- rawOutcome{bytes.Clone(res), err} },
	}); !ok {
		t.Fatalf("ForwardRaw(%s, %s) refused a call to a running server", server, tool)
	}
	return out
}

// The requests of calls forwarded in one batch reach the server in one
// write, when the batch ends, and are answered as any others.
func TestForwardRawBatchWritesItsRequestsOnce(t *testing.T) {
	m := newTestManager(t, map[string]config.ServerConfig{"fx": fixture(t, "serve", nil)}, nil)
	spy := spyOnStdin(runningConn(t, m, "fx"))
	var batch rawcall.Batch
	var outs []<-chan rawOutcome
	for i := range 3 {
		outs = append(outs, forwardInBatch(t, m, "fx", "add", fmt.Sprintf(`{"a":%d,"b":10}`, i), &batch))
	}
	if w := spy.recorded(); len(w) != 0 {
		t.Fatalf("%d writes before the batch ended: %q", len(w), w)
	}
	batch.End()
	if w := spy.recorded(); len(w) != 1 || bytes.Count(w[0], []byte("\n")) != 3 {
		t.Fatalf("the batch's end wrote %q; want its three requests in one write", w)
	}
	for i, out := range outs {
		if got, want := rawText(t, <-out), fmt.Sprint(i+10); got != want {
			t.Errorf("call %d answered %q, want %q", i, got, want)
		}
	}
}

// A batch whose write fails fails its calls, worded as CallTool words a
// broken connection; the connection's other writes go on.
func TestForwardRawBatchFailedWriteFailsItsCalls(t *testing.T) {
	m := newTestManager(t, map[string]config.ServerConfig{"fx": fixture(t, "serve", nil)}, nil)
	spy := spyOnStdin(runningConn(t, m, "fx"))
	broken := errors.New("broken pipe")
	var batch rawcall.Batch
	outs := []<-chan rawOutcome{
		forwardInBatch(t, m, "fx", "add", `{"a":1,"b":1}`, &batch),
		forwardInBatch(t, m, "fx", "pid", `{}`, &batch),
	}
	spy.failWith(broken)
	batch.End()
	for i, tool := range []string{"add", "pid"} {
		o := <-outs[i]
		if want := fmt.Sprintf(`upstream "fx" failed to answer tools/call %q: broken pipe`, tool); !errors.Is(o.err, broken) || errorOf(o.err) != want {
			t.Errorf("call %d: got %s %v, want the error %s", i, o.result, o.err, want)
		}
	}
	spy.failWith(nil)
	if got := mustCall(t, m, "fx", "add", map[string]any{"a": 2, "b": 3}); got != "5" {
		t.Errorf("add after a failed batch = %q", got)
	}
}

// flushRecorder is a Flusher for the answers held: it counts both.
type flushRecorder struct{ held, flushes int }

func (f *flushRecorder) Flush() func() { f.flushes++; return nil }

// watchedReader reads its chunks one per Read, then EOF, calling before
// each Read.
type watchedReader struct {
	chunks []string
	before func()
}

func (c *watchedReader) Read(p []byte) (int, error) {
	c.before()
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.chunks[0])
	if c.chunks[0] = c.chunks[0][n:]; c.chunks[0] == "" {
		c.chunks = c.chunks[1:]
	}
	return n, nil
}

// The answers rawLines reads together are handed over with a batch that
// ends before it reads again: their callers write them at once.
func TestRawLinesHoldsAnswersReadTogether(t *testing.T) {
	m := newTestManager(t, map[string]config.ServerConfig{"fx": fixture(t, "serve", nil)}, nil)
	c := runningConn(t, m, "fx")
	// The requests wait in a batch that never ends: the server never sees
	// them, and the answers come from the chunks below instead.
	var requests rawcall.Batch
	rec := &flushRecorder{}
	var sawAnswers []bool
	for range 3 {
		call := &rawcall.Call{Arguments: json.RawMessage(`{}`), Batch: &requests}
		call.Done = func(json.RawMessage, error) {
			sawAnswers = append(sawAnswers, call.Answers != nil)
			if call.Answers != nil {
				rec.held++
				call.Answers.Hold(rec)
			}
		}
		if _, ok := m.ForwardRaw("fx", "add", call); !ok {
			t.Fatal("ForwardRaw refused a call to a running server")
		}
	}
	var answers []string
	c.raw.w.mu.Lock()
	for line := range strings.Lines(string(c.raw.w.held)) {
		answers = append(answers, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[]}}`+"\n", rawcall.Member([]byte(line), "id")))
	}
	c.raw.w.mu.Unlock()
	if len(answers) != 3 {
		t.Fatalf("%d requests held, want 3", len(answers))
	}

	type seen struct{ held, flushes int }
	var reads []seen
	src := &watchedReader{
		chunks: []string{answers[0] + answers[1], answers[2]},
		before: func() { reads = append(reads, seen{rec.held, rec.flushes}) },
	}
	if _, err := io.Copy(io.Discard, &rawLines{src: src, raw: c.raw}); err != nil {
		t.Fatal(err)
	}
	// Before each read: nothing yet; both answers of the first read held
	// and flushed once; the third flushed on its own.
	if want := []seen{{0, 0}, {2, 1}, {3, 2}}; !slices.Equal(reads, want) {
		t.Errorf("answers held and flushes before each read: %v, want %v", reads, want)
	}
	if !slices.Equal(sawAnswers, []bool{true, true, true}) {
		t.Errorf("Done saw a batch of answers: %v, want one for each", sawAnswers)
	}
}

// TestRawLinesTakesEveryFramingTheSDKReads answers fast-path calls in the
// framings a server may use besides one plain object a line: a batch (an
// array line, which may also hold an answer of the SDK's) and an id
// written with escapes. Each call is answered as its line is read, and the
// SDK reads what is its own.
func TestRawLinesTakesEveryFramingTheSDKReads(t *testing.T) {
	sdkAnswer := `{"jsonrpc":"2.0","id":1,"result":{}}`
	for _, tc := range []struct {
		name    string
		answers func(ids []string) string
		sdk     string // what the SDK must read
	}{
		{
			name: "batch",
			answers: func(ids []string) string {
				return fmt.Sprintf(`[{"jsonrpc":"2.0","id":%s,"result":{"content":[]}},%s,{"jsonrpc":"2.0","id":%s,"result":{"content":[]}}]`+"\n", ids[0], sdkAnswer, ids[1])
			},
			sdk: "[" + sdkAnswer + "]\n",
		},
		{
			name: "batch of fast-path answers only",
			answers: func(ids []string) string {
				return fmt.Sprintf(`[{"jsonrpc":"2.0","id":%s,"result":{"content":[]}}, {"jsonrpc":"2.0","id":%s,"result":{"content":[]}}]`+"\n", ids[0], ids[1])
			},
		},
		{
			name: "escaped ids",
			answers: func(ids []string) string {
				var b strings.Builder
				for _, id := range ids {
					esc := strings.ReplaceAll(id, "-", `\u002d`)
					fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%s,"result":{"content":[]}}`+"\n", esc)
				}
				return b.String() + sdkAnswer + "\n"
			},
			sdk: sdkAnswer + "\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestManager(t, map[string]config.ServerConfig{"fx": fixture(t, "serve", nil)}, nil)
			c := runningConn(t, m, "fx")
			var requests rawcall.Batch // never ends: the server never sees the requests
			var done []error
			for range 2 {
				call := &rawcall.Call{Arguments: json.RawMessage(`{}`), Batch: &requests}
				call.Done = func(_ json.RawMessage, err error) { done = append(done, err) }
				if _, ok := m.ForwardRaw("fx", "add", call); !ok {
					t.Fatal("ForwardRaw refused a call to a running server")
				}
			}
			var ids []string
			c.raw.w.mu.Lock()
			for line := range strings.Lines(string(c.raw.w.held)) {
				ids = append(ids, string(rawcall.Member([]byte(line), "id")))
			}
			c.raw.w.mu.Unlock()
			if len(ids) != 2 {
				t.Fatalf("%d requests held, want 2", len(ids))
			}
			got, err := io.ReadAll(&rawLines{src: strings.NewReader(tc.answers(ids)), raw: c.raw})
			if err != nil {
				t.Fatal(err)
			}
			if len(done) != 2 || done[0] != nil || done[1] != nil {
				t.Errorf("calls answered: %v, want 2 without error", done)
			}
			if string(got) != tc.sdk {
				t.Errorf("the SDK read %q, want %q", got, tc.sdk)
			}
		})
	}
}
