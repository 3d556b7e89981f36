package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/view"
)

// fuzzMethods are the methods a client may send, with the params member
// the fuzzer fills.
var fuzzMethods = []struct{ method, member string }{
	{"tools/list", "cursor"}, {"prompts/list", "cursor"}, {"resources/list", "cursor"},
	{"resources/templates/list", "cursor"}, {"groups/list", "cursor"}, {"skills/list", "cursor"},
	{"tools/call", "name"}, {"tools/call", "arguments"}, {"prompts/get", "name"}, {"prompts/get", "arguments"},
	{"resources/read", "uri"}, {"resources/subscribe", "uri"}, {"resources/unsubscribe", "uri"},
	{"skills/get", "uri"}, {"completion/complete", "ref"}, {"logging/setLevel", "level"}, {"ping", "_meta"},
	{"tools/list", "_meta"}, {"tools/call", "_meta"},
}

// fuzzValue is value as a JSON value: itself when it is one, else quoted.
func fuzzValue(value string) string {
	if json.Valid([]byte(value)) {
		return value
	}
	q, _ := json.Marshal(value)
	return string(q)
}

// fuzzMessage builds the request: method m, its member set to value,
// the id as given (a JSON value or not: the gate must answer either).
func fuzzMessage(m uint8, id, value string) string {
	fm := fuzzMethods[int(m)%len(fuzzMethods)]
	params := `{"name":"a",` + fmt.Sprintf("%q", fm.member) + `:` + fuzzValue(value) + `}`
	if fm.member == "name" || fm.member == "uri" {
		params = `{` + fmt.Sprintf("%q", fm.member) + `:` + fuzzValue(value) + `}`
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"` + fm.method + `","params":` + params + `}`
}

// validRPC reports whether msg is one JSON-RPC 2.0 message.
func validRPC(msg []byte) bool {
	var m struct {
		JSONRPC string           `json:"jsonrpc"`
		Method  string           `json:"method"`
		Result  json.RawMessage  `json:"result"`
		Error   *json.RawMessage `json:"error"`
	}
	if json.Unmarshal(msg, &m) != nil || m.JSONRPC != "2.0" {
		return false
	}
	return m.Method != "" || (m.Result != nil) != (m.Error != nil)
}

// FuzzClientParams sends every client-supplied parameter of every method
// (cursor, names, URIs, arguments, _meta, the id) through the gateway's
// entry points: a stdio session and the HTTP handler, both protocol eras.
// Nothing may panic (a recovered panic is counted, and fails the run),
// every answer is one valid JSON-RPC message, and each entry point still
// answers a ping afterwards.
func FuzzClientParams(f *testing.F) {
	for _, seed := range []struct {
		m         uint8
		id, value string
	}{
		{0, `1`, `x`}, {0, `"a"`, `eHl6`}, {6, `2`, ``}, {6, `3`, "a\x00b"}, {8, `4`, `{"x":1}`},
		{10, `5`, `gh://r`}, {10, `6`, `file:///etc/passwd`}, {16, `7`, `{"progressToken":{}}`},
		{17, `8`, `[1,2]`}, {18, `9`, `{"io.modelcontextprotocol/protocolVersion":7}`}, {4, `null`, `x`},
		{5, `{}`, `x`}, {7, `1.5`, `[]`}, {15, `10`, `"nonsense"`}, {14, `11`, `{"type":"ref/prompt"}`},
	} {
		f.Add(seed.m, seed.id, seed.value)
	}
	gh := catalogtest.Tool("a")
	gh.Source = "gh"
	cat := catalogtest.Build(f, catalog.Spec{Tools: []*catalog.Tool{gh}, Groups: []catalog.GroupSpec{
		{ID: "code", Description: "Code", Members: catalog.Members{Sources: []string{"gh"}}},
	}})
	space, err := view.NewSpace(cat, nil)
	if err != nil {
		f.Fatal(err)
	}
	obs := &panicCounter{}
	g, err := gateway.New(space, &gateway.Options{Mode: expose.Flat, Extras: newRoutedExtras(), Observer: obs})
	if err != nil {
		f.Fatal(err)
	}
	h, err := g.HTTPHandler(nil)
	if err != nil {
		f.Fatal(err)
	}
	srv := httptest.NewServer(h)
	f.Cleanup(srv.Close)

	// One stdio session for the whole run, as one long-lived client.
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() {
		_ = g.ServeStdio(context.Background(), inR, outW)
		outW.Close()
	}()
	f.Cleanup(func() { inW.Close() })
	lines := make(chan []byte, 64)
	go func() {
		out := bufio.NewReaderSize(outR, 1<<20)
		for {
			msg, err := out.ReadBytes('\n')
			if err != nil {
				close(lines)
				return
			}
			lines <- msg
		}
	}()
	stdio := func(t testing.TB, line string) {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"+`{"jsonrpc":"2.0","id":"probe","method":"ping"}`+"\n"); err != nil {
			t.Fatalf("the stdio session ended: %v", err)
		}
		for {
			var msg []byte
			select {
			case m, ok := <-lines:
				if !ok {
					t.Fatalf("the stdio session ended after %s", line)
				}
				msg = m
			case <-time.After(20 * time.Second): // a hang guard, not a speed bet
				t.Fatalf("no answer to a ping within 20s after %s", line)
			}
			if !validRPC(msg) {
				t.Fatalf("the gateway wrote %q, not a JSON-RPC message, for %s", msg, line)
			}
			if strings.HasPrefix(string(msg), `{"jsonrpc":"2.0","id":"probe","result"`) {
				return
			}
		}
	}
	stdio(f, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}`)
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		f.Fatal(err)
	}

	stateless := map[string]string{"Mcp-Protocol-Version": "2026-07-28"}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"fuzz","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	httpPost := func(t testing.TB, body string, header map[string]string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a hang guard
		defer cancel()
		resp, err := srv.Client().Do(req.WithContext(ctx))
		if err != nil {
			t.Fatalf("the HTTP handler did not answer: %v", err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 500 {
			t.Fatalf("%d %s for %s", resp.StatusCode, data, body)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if msg, ok := strings.CutPrefix(line, "data: "); ok && !validRPC([]byte(msg)) {
				t.Fatalf("an event that is not JSON-RPC: %q for %s", msg, body)
			}
		}
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") && !validRPC(data) {
			t.Fatalf("an answer that is not JSON-RPC: %s for %s", data, body)
		}
	}

	f.Fuzz(func(t *testing.T, m uint8, id, value string) {
		msg := fuzzMessage(m, id, value)
		if strings.Contains(msg, "\n") {
			return // one line is one message on stdio; the screen has its own fuzz target
		}
		stdio(t, msg)
		// The 2026-07-28 era: the same request with its _meta, no session.
		if withMeta, ok := strings.CutSuffix(msg, `}}`); ok && !strings.Contains(msg, `"_meta":`) {
			httpPost(t, withMeta+","+meta+`}}`, stateless)
		}
		httpPost(t, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{`+meta+`}}`, stateless)
		if n := obs.count("typed") + obs.count("stdio-bytes") + obs.count("http") + obs.count("http-request-bytes"); n != 0 {
			t.Fatalf("%d handler panics were recovered; the last input was %s", n, msg)
		}
	})
}
