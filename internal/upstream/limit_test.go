package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/logtest"
	"github.com/toolfold/toolfold/internal/racetest"
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

// A server that does not page its list may send one larger than the Go
// SDK's 16 MiB line (20,000 tools of the recorded catalogs' size make 29
// MB): it starts with the default bounds, and every tool is kept. (Fewer,
// longer tools than that keep the test quick; the bench's scale sweep
// starts a real 20,000-tool server.) The race detector makes reading 17
// MB take ten seconds here: the test runs in scripts/test.sh's tier
// without it.
func TestBigListPastSixteenMiBServes(t *testing.T) {
	if racetest.Enabled {
		t.Skip("runs without -race (scripts/test.sh): the race detector makes a 17 MB read take ten seconds")
	}
	const tools, descBytes = 2500, 7000
	if listBytes := tools * descBytes; listBytes <= 16<<20 {
		t.Fatalf("the list is %d bytes: the test must exceed the SDK's 16 MiB to mean anything", listBytes)
	}
	fx := fixture(t, "bulk", map[string]string{"FIXTURE_TOOLS": strconv.Itoa(tools), "FIXTURE_DESCRIPTION_BYTES": strconv.Itoa(descBytes)})
	m := newTestManager(t, map[string]config.ServerConfig{"big": fx}, &Options{ProtocolVersion: "2025-11-25"})
	got, err := m.Tools(t.Context(), "big")
	if err != nil {
		t.Fatalf("a server with a list of more than 16 MiB did not start with the default bounds: %v", err)
	}
	if len(got) != tools+2 || got[len(got)-1].Name != fmt.Sprintf("tool_%05d", tools-1) {
		t.Fatalf("kept %d tools, want all %d", len(got), tools+2)
	}
}

// A server that pages its list is followed to the last page.
func TestPagedToolListIsFollowed(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "paged", Version: "1"}, &mcp.ServerOptions{PageSize: 7})
	for i := range 30 {
		srv.AddTool(&mcp.Tool{Name: fmt.Sprintf("t%02d", i), InputSchema: objectSchema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return textResult("ok"), nil
		})
	}
	m := newTestManager(t, map[string]config.ServerConfig{"paged": {Command: "unused"}}, &Options{dial: inMemoryDialer(srv)})
	tools, err := m.Tools(t.Context(), "paged")
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 30 || tools[29].Name != "t29" {
		t.Fatalf("kept %d tools (%v), want all 30 over five pages", len(tools), names(tools))
	}
}

// A remote server's answer larger than its maxMessageBytes is not read
// whole: the call fails naming the limit, in a plain JSON answer and in
// an event stream alike, and the next call is served.
func TestRemoteAnswerPastItsBoundFails(t *testing.T) {
	newServer := func() *mcp.Server {
		srv := newFixtureServer()
		srv.AddTool(&mcp.Tool{Name: "big", InputSchema: objectSchema}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return textResult(strings.Repeat("x", int(num(args(req), "n")))), nil
		})
		return srv
	}
	for _, jsonAnswers := range []bool{true, false} {
		t.Run(map[bool]string{true: "json", false: "stream"}[jsonAnswers], func(t *testing.T) {
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newServer() }, &mcp.StreamableHTTPOptions{JSONResponse: jsonAnswers})
			ts := httptest.NewServer(h)
			t.Cleanup(ts.Close)
			cfg := config.ServerConfig{URL: ts.URL, Transport: config.TransportHTTP, Lazy: true, MaxMessageBytes: 64 << 10, Timeout: config.Duration(20 * time.Second)}
			m := newTestManager(t, map[string]config.ServerConfig{"remote": cfg}, nil)
			if got := mustCall(t, m, "remote", "big", map[string]any{"n": 1000}); len(got) != 1000 {
				t.Fatalf("a small answer came back as %d bytes", len(got))
			}
			_, err := call(t, m, "remote", "big", map[string]any{"n": 1 << 20})
			if err == nil || !strings.Contains(err.Error(), "maxMessageBytes") && !strings.Contains(err.Error(), "exceeded 65536 bytes") {
				t.Fatalf("an answer of 1 MiB past a bound of 64 KiB: err = %v, want one naming the bound", err)
			}
			if got := mustCall(t, m, "remote", "add", map[string]any{"a": 40, "b": 2}); got != "42" {
				t.Errorf("after the refused answer, add = %q", got)
			}
		})
	}
}

// A server's tool list is kept within its maxTools and descriptions
// within MaxDescriptionBytes, cut on a character boundary; each is
// logged once per server, naming it and the tools.
func TestToolListBounds(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "many", Version: "1"}, nil)
	long := strings.Repeat("é", 60) // 120 bytes, two per character
	for i := range 30 {
		desc := fmt.Sprintf("tool %d", i)
		if i%10 == 3 {
			desc = long
		}
		srv.AddTool(&mcp.Tool{Name: fmt.Sprintf("t%02d", i), Description: desc, InputSchema: objectSchema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return textResult("ok"), nil
		})
	}
	var logs logtest.Buffer
	cfg := config.ServerConfig{Command: "unused", MaxTools: 20}
	m := newTestManager(t, map[string]config.ServerConfig{"many": cfg},
		&Options{dial: inMemoryDialer(srv), Logger: logs.Logger(slog.LevelInfo), MaxDescriptionBytes: 51})
	tools, err := m.Tools(context.Background(), "many")
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 20 || tools[19].Name != "t19" {
		t.Fatalf("kept %d tools (%v), want the first 20", len(tools), names(tools))
	}
	for _, tl := range tools {
		if tl.Name == "t03" || tl.Name == "t13" {
			if len(tl.Description) > 51 || !strings.HasSuffix(tl.Description, "…") || !utf8.ValidString(tl.Description) {
				t.Errorf("%s: description %q (%d bytes) is not cut to 51 bytes on a character boundary", tl.Name, tl.Description, len(tl.Description))
			}
		} else if !strings.HasPrefix(tl.Description, "tool ") {
			t.Errorf("%s: description %q changed", tl.Name, tl.Description)
		}
	}
	// A re-read finds the same: nothing more is logged.
	list, _ := m.servers["many"].knownTools()
	m.servers["many"].bound(append(list, list...))
	out := logs.String()
	if strings.Count(out, "more tools than its maxTools") != 1 || !strings.Contains(out, "upstream=many") || !strings.Contains(out, "first_left_out=t20") {
		t.Errorf("the maxTools warning, once, naming the server:\n%s", out)
	}
	if strings.Count(out, "descriptions longer than toolfold keeps were cut") != 1 || !strings.Contains(out, `tools="t03, t13"`) {
		t.Errorf("the description warning, once, naming the tools:\n%s", out)
	}
}
