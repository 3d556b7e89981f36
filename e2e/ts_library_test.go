package e2e

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold"
)

// TestTypeScriptClientListsNonObjectResults: typed tools whose results are
// a string, a list or a number must not break the TypeScript client, which
// rejects any outputSchema that is not an object (its listTools throws, so
// one such tool makes the whole server unusable from it). The library wraps
// such results as {"result": ...}; the client checks each call's
// structuredContent against the advertised schema.
func TestTypeScriptClientListsNonObjectResults(t *testing.T) {
	srv := toolfold.NewServer(&toolfold.Options{Name: "wrapped", Mode: toolfold.ModeFlat})
	type textIn struct {
		Text string `json:"text"`
	}
	toolfold.AddTool(srv, &mcp.Tool{Name: "upper", Description: "Upper-case a text."},
		toolfold.Func(func(_ context.Context, in textIn) (string, error) { return strings.ToUpper(in.Text), nil }))
	toolfold.AddTool(srv, &mcp.Tool{Name: "words", Description: "Split a text into words."},
		toolfold.Func(func(_ context.Context, in textIn) ([]string, error) { return strings.Fields(in.Text), nil }))
	toolfold.AddTool(srv, &mcp.Tool{Name: "length", Description: "Count a text's bytes."},
		toolfold.Func(func(_ context.Context, in textIn) (int, error) { return len(in.Text), nil }))
	h, err := srv.Handler(nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	defer hs.Close()

	rep := runTS(t, map[string]any{
		"url": hs.URL,
		"steps": []step{
			{"op": "list"},
			{"op": "call", "name": "upper", "arguments": map[string]any{"text": "a b"}},
			{"op": "call", "name": "words", "arguments": map[string]any{"text": "a b"}},
			{"op": "call", "name": "length", "arguments": map[string]any{"text": "a b"}},
		},
	})
	if got := strings.Join(rep.Steps[0].Tools, ","); got != "length,upper,words" {
		t.Errorf("tools = %q", got)
	}
	want := []string{`{"result":"A B"}`, `{"result":["a","b"]}`, `{"result":3}`}
	for i, w := range want {
		s := rep.Steps[i+1]
		if s.IsError || string(s.Structured) != w {
			t.Errorf("%s: isError=%v structured=%s, want %s (text %q)", s.Name, s.IsError, s.Structured, w, s.Text)
		}
	}
}
