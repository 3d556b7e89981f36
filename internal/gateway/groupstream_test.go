package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/groupsext"
	"github.com/toolfold/toolfold/internal/view"
)

// modernExtMeta is the _meta of a 2026-07-28 request from a client of the
// grouping extension.
const modernExtMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"m","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"extensions":{"` + groupsext.ID + `":{}}}}`

// TestModernHTTPClientHearsGroupsChange: a 2026-07-28 client of the
// grouping extension over HTTP is promised listChanged by server/discover,
// and hears notifications/groups/list_changed on its subscriptions/listen
// stream, stamped with that stream's id, when the top-level groups change.
func TestModernHTTPClientHearsGroupsChange(t *testing.T) {
	g := newGateway(t, gateway.Options{}, nil)
	h, err := g.HTTPHandler(nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	headers := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}

	_, _, body, _ := postMCP(t, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+modernExtMeta+`}}`, headers)
	if !strings.Contains(body, `"`+groupsext.ID+`":{"listChanged":true}`) {
		t.Errorf("server/discover does not promise groups listChanged:\n%s", body)
	}

	// A hang guard, not a timing: the stream must carry the notice.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(
		`{"jsonrpc":"2.0","id":"listen-7","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},`+modernExtMeta+`}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := make(chan string)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				select {
				case events <- data:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	next := func() map[string]any {
		t.Helper()
		select {
		case data, ok := <-events:
			if !ok {
				t.Fatal("the listen stream ended")
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(data), &m); err != nil {
				t.Fatalf("an event that is not JSON: %s", data)
			}
			return m
		case <-ctx.Done():
			t.Fatal("no event on the listen stream")
		}
		return nil
	}
	if ack := next(); ack["method"] != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first event %v, want the acknowledgement", ack)
	}
	space, err := view.NewSpace(sourcedCatalog(t, false), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(space); err != nil {
		t.Fatal(err)
	}
	for {
		m := next()
		if m["method"] != groupsext.NotificationListChanged {
			continue // tools/list_changed, also due
		}
		meta, _ := m["params"].(map[string]any)["_meta"].(map[string]any)
		if meta["io.modelcontextprotocol/subscriptionId"] != "listen-7" {
			t.Errorf("the notice names subscription %v, want listen-7", meta)
		}
		return
	}
}

// TestSessionHTTPClientHearsGroupsChange: a 2025-11-25 client of the
// grouping extension over HTTP is promised listChanged by initialize, and
// hears notifications/groups/list_changed on its session's standalone
// stream (GET) when the top-level groups change.
func TestSessionHTTPClientHearsGroupsChange(t *testing.T) {
	g := newGateway(t, gateway.Options{}, nil)
	h, err := g.HTTPHandler(nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	_, _, body, hdr := postMCP(t, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"s","version":"1"},"capabilities":{"extensions":{"`+groupsext.ID+`":{}}}}}`)
	id := hdr.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatalf("initialize opened no session: %s", body)
	}
	if !strings.Contains(body, `"`+groupsext.ID+`":{"listChanged":true}`) {
		t.Errorf("initialize does not promise groups listChanged:\n%s", body)
	}
	session := map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-11-25"}
	postMCP(t, srv.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, session)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range session {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %s", resp.Status)
	}
	space, err := view.NewSpace(sourcedCatalog(t, false), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(space); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(data, `"method":"`+groupsext.NotificationListChanged+`"`) {
			return
		}
	}
	t.Fatalf("the standalone stream ended without groups/list_changed: %v", sc.Err())
}
