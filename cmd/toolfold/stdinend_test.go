package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// handshakeThenEOF is what a script writes before closing stdin: the two
// handshake messages and one request, with nothing after.
const handshakeThenEOF = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"script","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
`

// TestRequestsBeforeStdinsEndAreAnswered: closing stdin ends the session,
// but what was read before it is answered first, by demo and by serve.
func TestRequestsBeforeStdinsEndAreAnswered(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a stdio server")
	}
	withServer := t.TempDir()
	writeConfigJSON(t, withServer, "toolfold.json", map[string]any{"mcpServers": map[string]any{"leaky": map[string]any{
		"command": testBinary(t), "env": map[string]string{"TOOLFOLD_TEST_HELPER": "mcp"}}}})
	for _, tc := range []struct {
		name, dir string
		args      []string
		tool      string
	}{
		{name: "demo", dir: t.TempDir(), args: []string{"demo"}, tool: "find_tools"},
		{name: "serve", dir: withServer, args: []string{"serve"}, tool: "find_tools"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(tc.dir)
			var out, errb bytes.Buffer
			cache := t.TempDir()
			e := env{stdin: io.NopCloser(strings.NewReader(handshakeThenEOF)), stdout: nopCloser{&out}, stderr: &errb,
				lookupEnv: func(k string) (string, bool) {
					if k == "TOOLFOLD_CACHE_DIR" {
						return cache, true
					}
					return "", false
				}}
			if code := run(context.Background(), tc.args, e); code != 0 {
				t.Fatalf("exit %d\nstderr: %s", code, errb.String())
			}
			answers := map[float64]json.RawMessage{}
			for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				var m struct {
					ID     float64         `json:"id"`
					Result json.RawMessage `json:"result"`
				}
				if json.Unmarshal([]byte(line), &m) == nil && m.Result != nil {
					answers[m.ID] = m.Result
				}
			}
			if answers[1] == nil || answers[2] == nil {
				t.Fatalf("answered ids %v, want both initialize (1) and tools/list (2)\nstdout: %s\nstderr: %s", keys(answers), out.String(), errb.String())
			}
			if !strings.Contains(string(answers[2]), tc.tool) {
				t.Errorf("tools/list does not list %s: %s", tc.tool, answers[2])
			}
		})
	}
}

func keys[V any](m map[float64]V) []float64 {
	var ks []float64
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
