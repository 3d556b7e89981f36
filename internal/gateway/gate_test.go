package gateway_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/logtest"
)

// withBearer stands in for the HTTP side (internal/httpapi): it names the
// caller of each request by its bearer token ("Bearer alice" is alice) as
// the SDK's auth.TokenInfo, which is all the gateway reads of a caller.
func withBearer(h http.Handler) http.Handler {
	return auth.RequireBearerToken(func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: "user " + token, Expiration: time.Now().Add(time.Hour), Extra: map[string]any{"caller": token}}, nil
	}, nil)(h)
}

func bearer(who string) map[string]string { return map[string]string{"Authorization": "Bearer " + who} }

// gateServer serves rawGateway over HTTP behind withBearer, logging into
// logs, with its group endpoint for "grp" (which holds every tool) beside
// it at /grp, and returns the base URL.
func gateServer(t *testing.T, src *fakeSource, logs *logtest.Buffer, opts *gateway.HTTPOptions) (string, *gateway.Gateway) {
	t.Helper()
	g := rawGatewayWith(t, src, &gateway.Options{Mode: expose.Flat, Logger: logs.Logger(slog.LevelInfo)})
	main, err := g.HTTPHandler(opts)
	if err != nil {
		t.Fatal(err)
	}
	grp, err := g.GroupHandler("grp", false, opts)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", withBearer(main))
	mux.Handle("/grp", withBearer(grp))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL, g
}

// openSessionAs opens an initialized 2025-11-25 session at url as who.
func openSessionAs(t *testing.T, url, who string) string {
	t.Helper()
	code, _, body, header := postMCP(t, url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}`, bearer(who))
	id := header.Get("Mcp-Session-Id")
	if code != http.StatusOK || id == "" {
		t.Fatalf("initialize as %s: %d %s", who, code, body)
	}
	if code, _, body, _ := postMCP(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, bearer(who), inSession(id)); code != http.StatusAccepted {
		t.Fatalf("notifications/initialized as %s: %d %s", who, code, body)
	}
	return id
}

func inSession(id string) map[string]string {
	return map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-11-25"}
}

func callBody(id int, tool string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, id, tool)
}

// TestSessionRidingIsRefusedOnEveryPath: a caller who sends another
// caller's session id is refused whatever the request would take: the
// byte path (fast), the typed path (slow, a tool without one), a
// cancellation of the owner's call in flight, a list. The owner's own
// requests, sent the same way, are served: the matrix can fail.
func TestSessionRidingIsRefusedOnEveryPath(t *testing.T) {
	src := &fakeSource{answer: answerText("raw"), cancelled: make(chan string, 1), took: make(chan string, 8)}
	logs := &logtest.Buffer{}
	base, _ := gateServer(t, src, logs, nil)
	url := base + "/mcp"
	alice := openSessionAs(t, url, "alice")

	// alice's call that never answers is in flight on the byte path.
	hung := make(chan int, 1)
	go func() {
		code, _, _, _ := postMCP(t, url, callBody(7, "hang"), bearer("alice"), inSession(alice))
		hung <- code
	}()
	if got := <-src.took; got != "hang" {
		t.Fatalf("the source took %q, want hang", got)
	}

	for _, tc := range []struct{ name, body string }{
		{"byte path", callBody(2, "fast")},
		{"typed path", callBody(3, "slow")},
		{"list", `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`},
		{"cancel the owner's call", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, body, _ := postMCP(t, url, tc.body, bearer("bob"), inSession(alice))
			if code != http.StatusForbidden || !strings.Contains(body, "session user mismatch") {
				t.Errorf("bob on alice's session: %d %s; want 403 session user mismatch", code, body)
			}
		})
	}
	select {
	case tool := <-src.cancelled:
		t.Fatalf("bob's cancellation withdrew alice's call of %s", tool)
	default:
	}
	for _, tool := range []string{"fast", "slow"} {
		code, _, body, _ := postMCP(t, url, callBody(10, tool), bearer("alice"), inSession(alice))
		if code != http.StatusOK || !strings.Contains(body, `"result"`) {
			t.Errorf("alice's own call of %s: %d %s", tool, code, body)
		}
	}
	// alice can cancel her own call: the positive control of the cancel row.
	if code, _, body, _ := postMCP(t, url, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`, bearer("alice"), inSession(alice)); code != http.StatusAccepted {
		t.Fatalf("alice cancelling her call: %d %s", code, body)
	}
	if tool := <-src.cancelled; tool != "hang" {
		t.Fatalf("cancelled %q, want hang", tool)
	}
	<-hung
}

// TestSessionOfAnotherEndpointIsLeftAlone: a session id sent to another
// endpoint is not found there, and nothing happens to it: it still counts
// against the one cap, still answers its own endpoint, and another
// endpoint cannot end it.
func TestSessionOfAnotherEndpointIsLeftAlone(t *testing.T) {
	src := &fakeSource{answer: answerText("raw")}
	base, g := gateServer(t, src, &logtest.Buffer{}, &gateway.HTTPOptions{MaxSessions: 2})
	main := openSessionAs(t, base+"/mcp", "alice")
	grp := openSessionAs(t, base+"/grp", "alice")

	for _, probe := range []struct{ url, id string }{{base + "/grp", main}, {base + "/mcp", grp}} {
		code, _, body, _ := postMCP(t, probe.url, callBody(2, "fast"), bearer("alice"), inSession(probe.id))
		if code != http.StatusNotFound {
			t.Errorf("a session sent to another endpoint: %d %s; want 404", code, body)
		}
		req, _ := http.NewRequest(http.MethodDelete, probe.url, nil)
		req.Header.Set("Mcp-Session-Id", probe.id)
		req.Header.Set("Authorization", "Bearer alice")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("DELETE of a session at another endpoint: %d; want 404", resp.StatusCode)
		}
	}
	if n := g.HTTPSessions(); n != 2 {
		t.Fatalf("%d sessions open after the probes, want 2", n)
	}
	// The cap still holds: both sessions count.
	code, _, body, _ := postMCP(t, base+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}`, bearer("alice"))
	if code != http.StatusServiceUnavailable {
		t.Fatalf("a third session at a cap of 2: %d %s; want 503", code, body)
	}
	for _, s := range []struct{ url, id string }{{base + "/mcp", main}, {base + "/grp", grp}} {
		code, _, body, _ := postMCP(t, s.url, callBody(3, "fast"), bearer("alice"), inSession(s.id))
		if code != http.StatusOK || !strings.Contains(body, "raw") {
			t.Errorf("the session at its own endpoint after the probes: %d %s", code, body)
		}
	}
}

// TestEveryCallIsAuditedOnce: each tools/call yields exactly one audit
// line naming its caller and path, on every path a call can take.
func TestEveryCallIsAuditedOnce(t *testing.T) {
	src := &fakeSource{answer: answerText("raw")}
	logs := &logtest.Buffer{}
	base, _ := gateServer(t, src, logs, nil)
	url := base + "/mcp"
	alice := openSessionAs(t, url, "alice")
	modern := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "fast"}
	modernCall := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"fast","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"m","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	modernTyped := strings.ReplaceAll(modernCall, `"fast"`, `"slow"`)

	calls := []struct {
		name, path string
		send       func() (int, string)
	}{
		{"session byte path", "http-session-bytes", func() (int, string) {
			c, _, b, _ := postMCP(t, url, callBody(2, "fast"), bearer("alice"), inSession(alice))
			return c, b
		}},
		{"session typed path", "typed", func() (int, string) {
			c, _, b, _ := postMCP(t, url, callBody(3, "slow"), bearer("alice"), inSession(alice))
			return c, b
		}},
		{"request byte path", "http-request-bytes", func() (int, string) {
			c, _, b, _ := postMCP(t, url, modernCall, bearer("carol"), modern)
			return c, b
		}},
		{"request typed path", "typed", func() (int, string) {
			h := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "slow"}
			c, _, b, _ := postMCP(t, url, modernTyped, bearer("carol"), h)
			return c, b
		}},
		{"group endpoint", "http-session-bytes", func() (int, string) {
			id := openSessionAs(t, base+"/grp", "dave")
			c, _, b, _ := postMCP(t, base+"/grp", callBody(4, "fast"), bearer("dave"), inSession(id))
			return c, b
		}},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			before := strings.Count(logs.String(), `msg="tool call"`)
			if code, body := c.send(); code != http.StatusOK || !strings.Contains(body, `"result"`) {
				t.Fatalf("%d %s", code, body)
			}
			lines := auditLines(logs.String())
			if len(lines) != before+1 {
				t.Fatalf("%d audit lines for one call:\n%s", len(lines)-before, strings.Join(lines[before:], "\n"))
			}
			last := lines[len(lines)-1]
			if !strings.Contains(last, "path="+c.path) || strings.Contains(last, "caller=anonymous") || !strings.Contains(last, "caller=") {
				t.Errorf("audit line %q; want the caller and path=%s", last, c.path)
			}
		})
	}
}

// TestStdioCallsAreAudited: on stdio, the byte path and the typed path
// each write one line naming the stdio client.
func TestStdioCallsAreAudited(t *testing.T) {
	src := &fakeSource{answer: answerText("raw")}
	logs := &logtest.Buffer{}
	g := rawGatewayWith(t, src, &gateway.Options{Mode: expose.Flat, Logger: logs.Logger(slog.LevelInfo)})
	w := serveWire(t, g)
	w.initialize("2025-11-25")
	for i, tool := range []string{"fast", "slow"} {
		w.send(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, 10+i, tool)
		if got := w.recv(); !strings.Contains(got, `"result"`) {
			t.Fatalf("%s: %s", tool, got)
		}
	}
	lines := auditLines(logs.String())
	if len(lines) != 2 || !strings.Contains(lines[0], "caller=stdio tool=fast") || !strings.Contains(lines[0], "path=stdio-bytes") ||
		!strings.Contains(lines[1], "caller=stdio tool=slow") || !strings.Contains(lines[1], "path=typed") {
		t.Fatalf("audit lines:\n%s", strings.Join(lines, "\n"))
	}
}

func auditLines(log string) []string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, `msg="tool call"`) {
			out = append(out, l)
		}
	}
	return out
}

// rawGatewayWith is rawGateway with options of the test's own, and every
// tool in one group, grp, for a group endpoint.
func rawGatewayWith(t *testing.T, src *fakeSource, opts *gateway.Options) *gateway.Gateway {
	t.Helper()
	tools := rawTools(src)
	var ids []catalog.ToolID
	for _, tl := range tools {
		ids = append(ids, tl.ID)
	}
	return specGateway(t, catalog.Spec{Tools: tools, Groups: []catalog.GroupSpec{{ID: "grp", Description: "every tool", Default: catalog.Enabled, Members: catalog.Members{Tools: ids}}}}, opts)
}

// TestNoByteForwardingTakesTheTypedPath: with byte forwarding off, every
// call a source could take as bytes goes through the typed path instead,
// on stdio, on an HTTP session and as a 2026-07-28 request.
func TestNoByteForwardingTakesTheTypedPath(t *testing.T) {
	src := &fakeSource{answer: answerText("raw")}
	logs := &logtest.Buffer{}
	g := rawGatewayWith(t, src, &gateway.Options{Mode: expose.Flat, NoByteForwarding: true, Logger: logs.Logger(slog.LevelInfo)})
	w := serveWire(t, g)
	w.initialize("2025-11-25")
	w.send(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"fast","arguments":{}}}`)
	if got := w.recv(); !strings.Contains(got, "typed fast") {
		t.Errorf("stdio: %s; want the typed path's answer", got)
	}
	h, err := g.HTTPHandler(nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := openHTTPSession(t, srv.URL, `{}`)
	c.initialized()
	if code, _, body, _ := c.post(callBody(2, "fast"), nil); code != http.StatusOK || !strings.Contains(body, "typed fast") {
		t.Errorf("HTTP session: %d %s; want the typed path's answer", code, body)
	}
	modern := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"fast","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"m","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	if code, _, body, _ := postMCP(t, srv.URL, modern, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "fast"}); code != http.StatusOK || !strings.Contains(body, "typed fast") {
		t.Errorf("2026-07-28 request: %d %s; want the typed path's answer", code, body)
	}
	if n := len(src.calls()); n != 0 {
		t.Errorf("the source took %d calls as bytes with byte forwarding off", n)
	}
	for _, l := range auditLines(logs.String()) {
		if !strings.Contains(l, "path=typed") {
			t.Errorf("audit line %q: want path=typed", l)
		}
	}
}

// TestIdleSessionOfACallerIsClosed: a session opened with a token and
// closed for idleness is gone from the SDK too (its owner's next request
// is not found), not only from the session table.
func TestIdleSessionOfACallerIsClosed(t *testing.T) {
	g := rawGatewayWith(t, &fakeSource{answer: answerText("raw")}, &gateway.Options{Mode: expose.Flat})
	opts := gateway.HTTPOptions{SessionTimeout: 20 * time.Millisecond}
	h, err := g.HTTPHandler(&opts)
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan string, 1)
	gateway.OnIdleSessionClosed(g, opts, func(id string) { closed <- id })
	srv := httptest.NewServer(withBearer(h))
	t.Cleanup(srv.Close)
	id := openSessionAs(t, srv.URL, "alice")
	if got := <-closed; got != id {
		t.Fatalf("closed %q, want %q", got, id)
	}
	for _, body := range []string{callBody(2, "fast"), `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`} {
		if code, _, out, _ := postMCP(t, srv.URL, body, bearer("alice"), inSession(id)); code != http.StatusNotFound {
			t.Errorf("alice's session closed for idleness still answers: %d %s", code, out)
		}
	}
}
