package toolfold_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolfold/toolfold"
)

// post sends one JSON-RPC message to h and returns the answer.
func post(h http.Handler, session, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		r.Header.Set("Mcp-Session-Id", session)
		r.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// openSession initializes a session on h and returns its id.
func openSession(t *testing.T, h http.Handler) string {
	t.Helper()
	w := post(h, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
	id := w.Header().Get("Mcp-Session-Id")
	if w.Code != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d %s", w.Code, w.Body)
	}
	if w := post(h, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); w.Code >= 300 {
		t.Fatalf("initialized: %d %s", w.Code, w.Body)
	}
	return id
}

// TestEachHandlerKeepsItsOwnSessionTimeout: handlers made from one server
// with different options close idle sessions after their own timeout, not
// after the first handler's. The bubble's clock is fake, so the test
// waits on no real time.
func TestEachHandlerKeepsItsOwnSessionTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := toolfold.NewServer(&toolfold.Options{Mode: toolfold.ModeFlat})
		long, err := srv.Handler(&toolfold.HTTPOptions{SessionTimeout: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		short, err := srv.Handler(&toolfold.HTTPOptions{SessionTimeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		handlers := []struct {
			name     string
			h        http.Handler
			wantOpen bool
		}{{"an hour", long, true}, {"a minute", short, false}}
		ids := make([]string, len(handlers))
		for i, hh := range handlers {
			ids[i] = openSession(t, hh.h)
		}
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		for i, hh := range handlers {
			w := post(hh.h, ids[i], `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
			if open := w.Code == http.StatusOK; open != hh.wantOpen {
				t.Errorf("timeout %s: after two idle minutes the session answers %d (open=%v, want %v)", hh.name, w.Code, open, hh.wantOpen)
			}
		}
		for i, hh := range handlers {
			r := httptest.NewRequest(http.MethodDelete, "/mcp", nil)
			r.Header.Set("Mcp-Session-Id", ids[i])
			hh.h.ServeHTTP(httptest.NewRecorder(), r)
		}
	})
}
