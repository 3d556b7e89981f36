package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/rawcall"
)

// failure is a source's error that classifies itself, as package
// upstream's do.
type failure string

func (f failure) Error() string   { return "the server " + string(f) + "ed" }
func (f failure) Outcome() string { return string(f) }

// failingTools fail as their names say: "crash" and "timeout" as a source
// that could not answer (a tool error made of the failure, the failure
// noted), "broken" as a tool that answered with an error. Each has a fast
// path that fails the same way.
func failingTools() []*catalog.Tool {
	asResult := func(err error) *mcp.CallToolResult {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
	}
	var tools []*catalog.Tool
	for _, id := range []string{"crash", "timeout", "broken"} {
		tl := catalogtest.Tool(id)
		tl.Source = "src"
		tl.ChecksArguments = true
		tl.Handler = func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if id == "broken" {
				return asResult(failure("broke")), nil
			}
			gateway.NoteFailure(ctx, failure(id))
			return asResult(failure(id)), nil
		}
		tl.Forward = func(call *rawcall.Call) (func(), bool) {
			call.MapError = func(err error) (json.RawMessage, error) { return json.Marshal(asResult(err)) }
			if id == "broken" {
				go call.Finish(json.RawMessage(`{"isError":true,"content":[]}`), nil)
			} else {
				go call.Finish(nil, failure(id))
			}
			return func() {}, true
		}
		tools = append(tools, tl)
	}
	return tools
}

// TestSourceFailuresAreOutcomesOfTheirOwn: a crash and a timeout count
// apart from a tool's own error, on the byte path and the typed path.
func TestSourceFailuresAreOutcomesOfTheirOwn(t *testing.T) {
	obs := &recordingObserver{}
	g := specGateway(t, catalog.Spec{Tools: failingTools()}, &gateway.Options{Mode: expose.Flat, Observer: obs})
	w := serveWire(t, g)
	w.initialize("2025-11-25")
	id := 2
	for _, meta := range []string{``, `,"_meta":{"progressToken":"p"}`} { // bytes, then typed
		for _, tool := range []string{"crash", "timeout", "broken"} {
			w.send(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q%s}}`, id, tool, meta)
			if got := w.recv(); !strings.Contains(got, `"isError":true`) {
				t.Errorf("%s answered %s", tool, got)
			}
			id++
		}
	}
	w.close()
	obs.mu.Lock()
	defer obs.mu.Unlock()
	want := "crash|src|crash,timeout|src|timeout,broken|src|tool_error"
	if got := strings.Join(obs.calls, ","); got != want+","+want {
		t.Errorf("outcomes = %s\nwant       %s (twice)", got, want)
	}
}

// TestOpenSessionsByEndpoint: the metrics' gauge of open sessions names
// the endpoint each session is open on, and the operator's list says when
// each was last seen.
func TestOpenSessionsByEndpoint(t *testing.T) {
	g := newGateway(t, gateway.Options{Mode: expose.Groups}, nil)
	main, err := g.HTTPHandler(nil)
	if err != nil {
		t.Fatal(err)
	}
	group, err := g.GroupHandler("docs", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Before any session, each endpoint served reads 0: an alert on the
	// gauge must see 0, not "absent".
	if got := g.OpenSessions(); got["main"] != 0 || got["group:docs"] != 0 || len(got) != 2 {
		t.Errorf("open sessions before any = %v, want main:0 group:docs:0", got)
	}
	for _, h := range []http.Handler{main, group, group} {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		if _, err := connectHTTP(t, srv.URL); err != nil {
			t.Fatal(err)
		}
	}
	if got := g.OpenSessions(); got["main"] != 1 || got["group:docs"] != 2 || len(got) != 2 {
		t.Errorf("open sessions = %v, want main:1 group:docs:2", got)
	}
	for _, s := range g.Sessions() {
		if s.LastSeen.IsZero() || s.Idle {
			t.Errorf("session %s: last seen %v, idle %v; want just seen, not idle", s.ID, s.LastSeen, s.Idle)
		}
	}
}
