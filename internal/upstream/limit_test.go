package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/rawcall"
)

// An answer larger than maxMessageBytes fails only its call, on the
// typed path and on the fast path, with an error that names the limit;
// the server keeps serving on the same process, and the answer is never
// held whole.
func TestOversizedAnswerFailsOnlyItsCall(t *testing.T) {
	fx := fixture(t, "bulk", nil)
	fx.MaxMessageBytes = 1 << 20
	m := newTestManager(t, map[string]config.ServerConfig{"fx": fx}, &Options{ProtocolVersion: "2025-11-25"})
	pid := mustCall(t, m, "fx", "pid", nil)
	const huge = 64 << 20
	want := `upstream "fx" sent a message of more than 1MiB (maxMessageBytes) in answer to tools/call "big"; the request was refused`

	_, err := call(t, m, "fx", "big", map[string]any{"n": huge})
	if !errors.Is(err, ErrTooLarge) || !strings.HasPrefix(errorOf(err), want) {
		t.Fatalf("typed path: got  %v\nwant %s", err, want)
	}
	if got := mustCall(t, m, "fx", "pid", nil); got != pid {
		t.Fatalf("the server was restarted (pid %s, then %s): the connection must carry on", pid, got)
	}

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	out, _ := forwardRaw(t, m, "fx", "big", `{"n":67108864}`, rawcall.Capabilities{}, nil)
	o := <-out
	runtime.ReadMemStats(&after)
	if !errors.Is(o.err, ErrTooLarge) || !strings.HasPrefix(errorOf(o.err), want) {
		t.Fatalf("fast path: got  %v\nwant %s", o.err, want)
	}
	// Reading past 64 MiB costs what the 1 MiB bound and a read buffer
	// cost, not the message: holding it would take at least 64 MiB.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("the fast path allocated %d MiB for an answer it refused", alloc>>20)
	}
	out, _ = forwardRaw(t, m, "fx", "pid", `{}`, rawcall.Capabilities{}, nil)
	if got := rawText(t, <-out); got != pid {
		t.Errorf("after the refused answer, pid = %q, want %s", got, pid)
	}
	if got := mustCall(t, m, "fx", "pid", nil); got != pid {
		t.Errorf("the server was restarted (pid %s, then %s)", pid, got)
	}
}

// rawLines reads past a line over its bound whatever the order of its
// members, and puts in its place what the request it answered needs.
func TestRawLinesRefusesOversizedLines(t *testing.T) {
	pad := strings.Repeat("y", 300)
	var stdin bytes.Buffer
	raw := &rawConn{w: &lockedWriter{w: nopWriteCloser{&stdin}}}
	var told []string
	r := &rawLines{max: 100, raw: raw, tooLarge: func(id []byte, request bool) {
		told = append(told, string(id)+map[bool]string{true: " request", false: ""}[request])
	}}
	r.src = strings.NewReader(strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		// The TypeScript SDK writes the result before the id.
		`{"result":{"content":[{"type":"text","text":"` + pad + `","id":"inner"}]},"jsonrpc":"2.0","id":7}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + pad + `"}}`,
		`{"jsonrpc":"2.0","id":"s-1","method":"sampling/createMessage","params":{"x":"` + pad + `"}}`,
		`{"jsonrpc":"2.0","id":2,"result":{}}`,
		"",
	}, "\n"))
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
	if len(lines) != 3 || lines[0] != `{"jsonrpc":"2.0","id":1,"result":{}}` || lines[2] != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Fatalf("the SDK read:\n%s", got)
	}
	var resp struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code int             `json:"code"`
			Data json.RawMessage `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(lines[1]), &resp); err != nil || string(resp.ID) != "7" || resp.Error == nil || resp.Error.Code != codeTooLarge {
		t.Errorf("in place of the oversized answer to 7 the SDK read %s (%v)", lines[1], err)
	}
	if !strings.Contains(stdin.String(), `"id":"s-1","error":{"code":-32600`) {
		t.Errorf("the server's oversized request was not refused; stdin got %q", stdin.String())
	}
	if want := []string{"7", " request", `"s-1" request`}; strings.Join(told, "|") != strings.Join(want, "|") {
		t.Errorf("told %q, want %q", told, want)
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
