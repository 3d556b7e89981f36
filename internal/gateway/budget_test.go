package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/view"
)

// TestAnswerBudgetRefusesOverItsBound: a hostile source answers every call
// with 2 MiB, and a client sends ten calls on the byte path without
// reading its answers (its stdout is a pipe nobody reads yet). Within a
// 5 MiB budget two answers are held; the other eight are replaced by an
// error that says why and what to change, and the count falls back to
// zero once the client reads.
func TestAnswerBudgetRefusesOverItsBound(t *testing.T) {
	big := strings.Repeat("x", 2<<20)
	const calls, budget = 10, 5 << 20
	for _, tool := range []string{"fast"} {
		t.Run(tool, func(t *testing.T) {
			src := &fakeSource{answer: func(string) (json.RawMessage, error) {
				return json.RawMessage(`{"content":[{"type":"text","text":"` + big + `"}]}`), nil
			}}
			typed := catalogtest.Tool("typed_big")
			typed.Handler = func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: big}}}, nil
			}
			g := specGateway(t, catalog.Spec{Tools: append(rawTools(src), typed)}, &gateway.Options{Mode: expose.Flat, AnswerBytesInFlight: budget})
			admitted := make(chan struct{}, 64)
			gateway.OnAnswerAdmitted(g, func() { admitted <- struct{}{} })

			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			done := make(chan error, 1)
			go func() { done <- g.ServeStdio(context.Background(), inR, outW) }()
			out := bufio.NewReaderSize(outR, 4<<20)
			send := func(line string) {
				t.Helper()
				if _, err := io.WriteString(inW, line+"\n"); err != nil {
					t.Fatal(err)
				}
			}
			read := func() string {
				t.Helper()
				line, err := out.ReadString('\n')
				if err != nil {
					t.Fatal(err)
				}
				return line
			}
			send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"slow","version":"1"}}}`)
			<-admitted
			read()
			send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			for i := range calls {
				send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q}}`, i, tool))
			}
			// Every answer has been counted or refused before the client
			// reads any.
			for range calls {
				<-admitted
			}
			held := g.AnswerBytesInFlight()
			if held > budget || held < 2*int64(len(big)) {
				t.Errorf("%d bytes counted in flight with ten 2 MiB answers unread; want two answers' worth, within %d", held, budget)
			}
			t.Logf("answer bytes in flight with %d answers of 2 MiB unread: %d (budget %d)", calls, held, budget)
			results, refused := 0, 0
			for range calls {
				switch line := read(); {
				case strings.Contains(line, `"result"`) && strings.Contains(line, big):
					results++
				case strings.Contains(line, `"code":-32000`) && strings.Contains(line, "answerBytesInFlight") && strings.Contains(line, "Retry later"):
					refused++
				default:
					t.Errorf("an answer neither whole nor refused: %.200s", line)
				}
			}
			if results != 2 || refused != calls-2 {
				t.Errorf("%d whole answers and %d refused; want 2 and %d", results, refused, calls-2)
			}
			if n := g.AnswerBytesInFlight(); n != 0 {
				t.Errorf("%d bytes still counted once every answer was read", n)
			}
			// Once read, the next caller is served whole.
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"after","method":"tools/call","params":{"name":%q}}`, tool))
			<-admitted
			if line := read(); !strings.Contains(line, `"id":"after","result"`) {
				t.Errorf("a call once the answers were read: %.200s", line)
			}
			inW.Close()
			if err := <-done; err != nil {
				t.Error(err)
			}
		})
	}
}

// blockedWriter is an HTTP client that reads nothing until released: its
// first Write waits for release.
type blockedWriter struct {
	header  http.Header
	release chan struct{}
	mu      sync.Mutex
	body    bytes.Buffer
}

func (w *blockedWriter) Header() http.Header { return w.header }
func (w *blockedWriter) WriteHeader(int)     {}
func (w *blockedWriter) Flush()              {}
func (w *blockedWriter) Write(p []byte) (int, error) {
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.body.Write(p)
}

// TestAnswerBudgetOverHTTP: the same over HTTP, for the typed path and the
// byte path: ten 2026-07-28 callers whose connections take nothing yet;
// two answers are held within 5 MiB, eight are refused, and the callers
// once they read get what was kept for them.
func TestAnswerBudgetOverHTTP(t *testing.T) {
	big := strings.Repeat("x", 2<<20)
	const calls, budget = 10, 5 << 20
	for _, tool := range []string{"typed_big", "fast"} {
		t.Run(tool, func(t *testing.T) {
			src := &fakeSource{answer: func(string) (json.RawMessage, error) {
				return json.RawMessage(`{"content":[{"type":"text","text":"` + big + `"}]}`), nil
			}}
			typed := catalogtest.Tool("typed_big")
			typed.Handler = func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: big}}}, nil
			}
			g := specGateway(t, catalog.Spec{Tools: append(rawTools(src), typed)}, &gateway.Options{Mode: expose.Flat, AnswerBytesInFlight: budget})
			admitted := make(chan struct{}, 64)
			gateway.OnAnswerAdmitted(g, func() { admitted <- struct{}{} })
			h, err := g.HTTPHandler(nil)
			if err != nil {
				t.Fatal(err)
			}
			release := make(chan struct{})
			writers := make([]*blockedWriter, calls)
			var served sync.WaitGroup
			for i := range writers {
				w := &blockedWriter{header: http.Header{}, release: release}
				writers[i] = w
				body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + tool + `","_meta":{` +
					`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"h","version":"1"},` +
					`"io.modelcontextprotocol/clientCapabilities":{}}}}`
				r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("Accept", "application/json, text/event-stream")
				r.Header.Set("Mcp-Protocol-Version", "2026-07-28")
				r.Header.Set("Mcp-Method", "tools/call")
				r.Header.Set("Mcp-Name", tool)
				served.Go(func() { h.ServeHTTP(w, r) })
			}
			for range calls {
				<-admitted
			}
			held := g.AnswerBytesInFlight()
			if held > budget || held < 2*int64(len(big)) {
				t.Errorf("%d bytes counted in flight with ten 2 MiB answers unread; want two answers' worth, within %d", held, budget)
			}
			close(release)
			served.Wait()
			results, refused := 0, 0
			for _, w := range writers {
				switch got := w.body.String(); {
				case strings.Contains(got, `"result"`) && strings.Contains(got, big):
					results++
				case strings.Contains(got, `"code":-32000`) && strings.Contains(got, "answerBytesInFlight"):
					refused++
				default:
					t.Errorf("an answer neither whole nor refused: %.300s", got)
				}
			}
			if results != 2 || refused != calls-2 {
				t.Errorf("%d whole answers and %d refused; want 2 and %d", results, refused, calls-2)
			}
			if n := g.AnswerBytesInFlight(); n != 0 {
				t.Errorf("%d bytes still counted once every answer was read", n)
			}
		})
	}
}

// TestAnswerBudgetFollowsUpdateWith: a reloaded answerBytesInFlight judges
// the next answer, on a client connected before the reload: lowered below
// one answer it refuses it, and taken off (-1) it lets it through.
func TestAnswerBudgetFollowsUpdateWith(t *testing.T) {
	big := strings.Repeat("x", 2<<20)
	src := &fakeSource{answer: func(string) (json.RawMessage, error) {
		return json.RawMessage(`{"content":[{"type":"text","text":"` + big + `"}]}`), nil
	}}
	spec := catalog.Spec{Tools: rawTools(src)}
	g := specGateway(t, spec, &gateway.Options{Mode: expose.Flat})
	admitted := make(chan struct{}, 64)
	gateway.OnAnswerAdmitted(g, func() { admitted <- struct{}{} })
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- g.ServeStdio(context.Background(), inR, outW) }()
	out := bufio.NewReaderSize(outR, 4<<20)
	exchange := func(line string) string {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
		<-admitted
		got, err := out.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	exchange(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name    string
		budget  int64 // 0: no reload before the call
		refused bool
	}{
		{name: "the default budget", refused: false},
		{name: "lowered to 1 MiB", budget: 1 << 20, refused: true},
		{name: "taken off", budget: -1, refused: false},
	}
	for i, s := range steps {
		if s.budget != 0 {
			if err := g.UpdateWith(specSpace(t, spec), &gateway.Options{Mode: expose.Flat, AnswerBytesInFlight: s.budget}); err != nil {
				t.Fatal(err)
			}
		}
		line := exchange(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"fast"}}`, i))
		refused := strings.Contains(line, "answerBytesInFlight") && !strings.Contains(line, big)
		if refused != s.refused {
			t.Errorf("%s: refused = %v, want %v: %.200s", s.name, refused, s.refused, line)
		}
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Error(err)
	}
}

// specSpace is the space of the catalog built from spec.
func specSpace(t *testing.T, spec catalog.Spec) *view.Space {
	t.Helper()
	space, err := view.NewSpace(catalogtest.Build(t, spec), nil)
	if err != nil {
		t.Fatal(err)
	}
	return space
}
