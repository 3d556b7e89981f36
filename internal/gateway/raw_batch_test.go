package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolfold/toolfold/internal/rawcall"
)

// recordingWriter keeps each write to the client's stdout apart.
type recordingWriter struct {
	mu     sync.Mutex
	writes []string
}

func (r *recordingWriter) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes = append(r.writes, string(p))
	return len(p), nil
}

func (r *recordingWriter) recorded() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.writes...)
}

// heldRequests is a source that holds each call's request for the batch
// it came with.
type heldRequests struct{ held, flushes int }

func (h *heldRequests) Flush() func() { h.flushes++; return nil }

// chunkReader reads its chunks one per Read, then EOF, calling before
// each Read.
type chunkReader struct {
	chunks []string
	before func()
}

func (c *chunkReader) Read(p []byte) (int, error) {
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

// The calls the screen reads together come with one batch, which ends
// before the screen reads again: their source writes them at once.
func TestScreenBatchesTheCallsItReadsTogether(t *testing.T) {
	src := &heldRequests{}
	type seen struct{ held, flushes int }
	var reads []seen
	in := &chunkReader{
		chunks: []string{string(callLine(1, "")) + "\n" + string(callLine(2, "")) + "\n", string(callLine(3, "")) + "\n"},
		before: func() { reads = append(reads, seen{src.held, src.flushes}) },
	}
	edge := fastEdge(t, nil, in, &recordingWriter{}, func(call *rawcall.Call) (func(), bool) {
		if call.Batch == nil {
			t.Error("a call the screen read came without a batch")
			return nil, false
		}
		src.held++
		call.Batch.Hold(src)
		return func() {}, true
	})
	if f, err := edge.screen.next(); !errors.Is(err, io.EOF) {
		t.Fatalf("the screen handed on %v (%v); want every call taken, then EOF", f, err)
	}
	// Before each read: nothing yet; both calls of the first read held
	// and flushed once; the third flushed on its own.
	if want := []seen{{0, 0}, {2, 1}, {3, 2}}; !slices.Equal(reads, want) {
		t.Errorf("calls held and flushes before each read: %v, want %v", reads, want)
	}
}

// Answers handed over with a batch wait for its end and go out in one
// write; anything else written first takes them along, ahead of it.
func TestHeldAnswersGoOutInOneWrite(t *testing.T) {
	var calls []*rawcall.Call
	out := &recordingWriter{}
	edge := fastEdge(t, nil, strings.NewReader(""), out, func(call *rawcall.Call) (func(), bool) {
		calls = append(calls, call)
		return func() {}, true
	})
	for id := 1; id <= 3; id++ {
		if !edge.take(callLine(id, "")) {
			t.Fatalf("the fast path left call %d to the SDK", id)
		}
	}
	result := json.RawMessage(`{"content":[{"type":"text","text":"hi"}]}`)
	var answers rawcall.Batch
	for _, c := range calls[:2] {
		c.Answers = &answers
		c.Done(result, nil)
	}
	if w := out.recorded(); len(w) != 0 {
		t.Fatalf("answers written before their batch ended: %q", w)
	}
	answers.End()
	w := out.recorded()
	if len(w) != 1 || strings.Count(w[0], "\n") != 2 || !strings.Contains(w[0], `"id":1,`) || !strings.Contains(w[0], `"id":2,`) {
		t.Fatalf("the batch's end wrote %q; want both answers in one write", w)
	}

	// The third is held, and the SDK writes before the batch ends.
	calls[2].Answers = &answers
	calls[2].Done(result, nil)
	sdk := `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` + "\n"
	if _, err := edge.screen.out.Write([]byte(sdk)); err != nil {
		t.Fatal(err)
	}
	w = out.recorded()[1:]
	if len(w) != 1 || !strings.HasPrefix(w[0], `{"jsonrpc":"2.0","id":3,`) || !strings.HasSuffix(w[0], "\n"+sdk) {
		t.Fatalf("a write after a held answer wrote %q; want the answer, then the message, in one write", w)
	}
	answers.End()
	if got := out.recorded(); len(got) != 2 {
		t.Errorf("the batch's end wrote again what had gone: %q", got[2:])
	}
	// Every id is free again: the client may reuse them.
	edge.screen.mu.Lock()
	defer edge.screen.mu.Unlock()
	if n := len(edge.screen.inflight); n != 0 {
		t.Errorf("%d ids still in flight after their answers", n)
	}
	if !bytes.Contains([]byte(w[0]), []byte(`"resultType":"complete"`)) {
		t.Errorf("a held answer lost what the fast path adds to a 2026-07-28 result: %s", w[0])
	}
}
