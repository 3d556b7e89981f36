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
	"testing"
	"time"

	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/groupsext"
	"github.com/toolfold/toolfold/internal/view"
)

// frame is one JSON-RPC message as it went over the wire.
type frame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func (f frame) String() string {
	if f.Method != "" {
		return f.Method
	}
	return "response " + string(f.ID)
}

// wireClient speaks raw JSON-RPC to the gateway and returns, for each
// request, every frame that arrived up to and including its response.
type wireClient interface {
	exchange(t *testing.T, id int, method string, params any) []frame
	notify(t *testing.T, method string)
}

// The steps every transport is checked with: which frames each request
// brings, in order. A list_changed a call causes comes before its result,
// once; a call that changes nothing brings none, and no stray one follows
// later (the ping after each call would carry it).
func checkOrdering(t *testing.T, c wireClient) {
	t.Helper()
	c.exchange(t, 1, "initialize", map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "wire", "version": "1"},
	})
	c.notify(t, "notifications/initialized")
	enable := func(groups ...string) map[string]any {
		return map[string]any{"name": "enable_tools", "arguments": map[string]any{"groups": groups}}
	}
	disable := map[string]any{"name": "disable_tools", "arguments": map[string]any{"groups": []string{"code"}}}
	steps := []struct {
		what   string
		method string
		params any
		want   string
	}{
		{"enabling a group", "tools/call", enable("code", "code.repos"), "notifications/tools/list_changed, response 2"},
		{"the ping after it", "ping", nil, "response 3"},
		{"enabling it again", "tools/call", enable("code"), "response 4"},
		{"the ping after that", "ping", nil, "response 5"},
		{"calling a tool", "tools/call", map[string]any{"name": "c", "arguments": map[string]any{}}, "response 6"},
		{"disabling", "tools/call", disable, "notifications/tools/list_changed, response 7"},
		{"the last ping", "ping", nil, "response 8"},
	}
	for i, s := range steps {
		frames := c.exchange(t, i+2, s.method, s.params)
		var got []string
		for _, f := range frames {
			got = append(got, f.String())
		}
		if strings.Join(got, ", ") != s.want {
			t.Fatalf("%s brought %q, want %q", s.what, strings.Join(got, ", "), s.want)
		}
	}
}

func TestListChangedPrecedesResultOverStdio(t *testing.T) {
	g := newGateway(t, gateway.Options{Mode: expose.Groups}, nil)
	checkOrdering(t, serveStdioWire(t, g))
}

type stdioWire struct {
	in     io.Writer
	frames chan frame
}

// serveStdioWire serves g over pipes until the test ends, with a reader
// that turns each line of g's stdout into a frame.
func serveStdioWire(t *testing.T, g *gateway.Gateway) *stdioWire {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.ServeStdio(ctx, inR, outW) }()
	frames := make(chan frame, 64)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var f frame
			if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
				f = frame{Method: "unparsable: " + sc.Text()}
			}
			frames <- f
		}
		close(frames)
	}()
	t.Cleanup(func() {
		inW.Close()
		cancel()
		<-done
		outW.Close()
	})
	return &stdioWire{in: inW, frames: frames}
}

func (w *stdioWire) send(t *testing.T, msg map[string]any) {
	t.Helper()
	b, _ := json.Marshal(msg)
	if _, err := w.in.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
}

func (w *stdioWire) notify(t *testing.T, method string) {
	w.send(t, map[string]any{"jsonrpc": "2.0", "method": method})
}

func (w *stdioWire) exchange(t *testing.T, id int, method string, params any) []frame {
	t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	w.send(t, msg)
	var out []frame
	for {
		select {
		case f, ok := <-w.frames:
			if !ok {
				t.Fatalf("stdout closed before the response to %d; got %v", id, out)
			}
			out = append(out, f)
			if string(f.ID) == fmt.Sprint(id) && f.Method == "" {
				return out
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("no response to %s %d; got %v", method, id, out)
		}
	}
}

func TestListChangedPrecedesResultOverHTTP(t *testing.T) {
	g := newGateway(t, gateway.Options{Mode: expose.Groups}, nil)
	h, err := g.HTTPHandler(nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	checkOrdering(t, &httpWire{url: srv.URL})
}

type httpWire struct {
	url, session string
}

func (w *httpWire) post(t *testing.T, msg map[string]any) *http.Response {
	t.Helper()
	b, _ := json.Marshal(msg)
	req, err := http.NewRequest(http.MethodPost, w.url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if w.session != "" {
		req.Header.Set("Mcp-Session-Id", w.session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode >= 300 {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST %v: %s %s", msg["method"], resp.Status, body)
	}
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		w.session = id
	}
	return resp
}

func (w *httpWire) notify(t *testing.T, method string) {
	resp := w.post(t, map[string]any{"jsonrpc": "2.0", "method": method})
	resp.Body.Close()
}

// exchange reads the request's own response stream: a notification sent on
// the call's context travels there, ahead of the result.
func (w *httpWire) exchange(t *testing.T, id int, method string, params any) []frame {
	t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	resp := w.post(t, msg)
	defer resp.Body.Close()
	var out []frame
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var f frame
		if err := json.NewDecoder(resp.Body).Decode(&f); err != nil {
			t.Fatal(err)
		}
		return append(out, f)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var f frame
		if err := json.Unmarshal([]byte(data), &f); err != nil {
			t.Fatalf("bad event %q: %v", data, err)
		}
		out = append(out, f)
		if string(f.ID) == fmt.Sprint(id) && f.Method == "" {
			return out
		}
	}
	t.Fatalf("the stream ended before the response to %d; got %v (%v)", id, out, sc.Err())
	return nil
}

// A 2025-11-25 client of the grouping extension over stdio is told when
// any group changes (nested ones too); when only the members change it
// hears tools/list_changed alone, as the draft has membership announced.
func TestGroupsListChangedOverStdio(t *testing.T) {
	g := newGateway(t, gateway.Options{Mode: expose.Auto}, nil)
	w := serveStdioWire(t, g)
	init := w.exchange(t, 1, "initialize", map[string]any{
		"protocolVersion": "2025-11-25", "clientInfo": map[string]any{"name": "wire", "version": "1"},
		"capabilities": map[string]any{"extensions": map[string]any{groupsext.ID: map[string]any{}}},
	})
	if !strings.Contains(string(init[len(init)-1].Result), `"io.modelcontextprotocol/grouping":{"listChanged":true}`) {
		t.Fatalf("the extension's listChanged is not advertised: %s", init[len(init)-1].Result)
	}
	w.notify(t, "notifications/initialized")

	update := func(groups ...catalog.GroupSpec) {
		t.Helper()
		var tools []*catalog.Tool
		for _, id := range []string{"a", "b", "c", "d", "e", "f", "u", "x"} {
			tools = append(tools, catalogtest.Tool(id))
		}
		space, err := view.NewSpace(catalogtest.Build(t, catalog.Spec{Tools: tools, Groups: groups}), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Update(space); err != nil {
			t.Fatal(err)
		}
	}
	code := catalog.GroupSpec{ID: "code", Description: "Code", Members: catalog.Members{Tools: []catalog.ToolID{"a", "b"}}}
	docs := catalog.GroupSpec{ID: "docs", Description: "Documents", Members: catalog.Members{Tools: []catalog.ToolID{"a", "f"}}}
	// A new top-level group: the client hears of it.
	update(code, docs, catalog.GroupSpec{ID: "ops", Description: "Operations", Members: catalog.Members{Tools: []catalog.ToolID{"x"}}})
	waitFrame(t, w.frames, groupsext.NotificationListChanged)
	ops := catalog.GroupSpec{ID: "ops", Description: "Operations", Members: catalog.Members{Tools: []catalog.ToolID{"x"}}}
	// A nested group: groups/list shows every group, so the client hears.
	update(code, docs, ops, catalog.GroupSpec{ID: "ops.deploy", Parent: "ops", Description: "Deploys", Members: catalog.Members{Tools: []catalog.ToolID{"c"}}})
	waitFrame(t, w.frames, groupsext.NotificationListChanged)
	// The tool c moved into it: its membership changed too.
	waitFrame(t, w.frames, "notifications/tools/list_changed")
	// Only a group's tools change: groups/list is the same, so no
	// groups/list_changed, but tools/list_changed for the memberships; the
	// list's frames must not carry a groups one.
	update(code, docs, ops, catalog.GroupSpec{ID: "ops.deploy", Parent: "ops", Description: "Deploys", Members: catalog.Members{Tools: []catalog.ToolID{"c", "e"}}})
	waitFrame(t, w.frames, "notifications/tools/list_changed")
	for _, f := range w.exchange(t, 2, "groups/list", map[string]any{}) {
		if f.Method == groupsext.NotificationListChanged {
			t.Errorf("groups/list_changed sent though the top-level groups did not change")
		}
	}
}

// waitFrame reads frames until one of the given method arrives.
func waitFrame(t *testing.T, frames <-chan frame, method string) {
	t.Helper()
	for {
		select {
		case f, ok := <-frames:
			if !ok {
				t.Fatalf("stdout closed before %s", method)
			}
			if f.Method == method {
				return
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("no %s arrived", method)
		}
	}
}
