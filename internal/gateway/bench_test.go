package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/view"
)

func benchGateway(b *testing.B, mode expose.Mode) *gateway.Gateway {
	space, err := view.NewSpace(catalogtest.Synthetic(b, 1000, 50), nil)
	if err != nil {
		b.Fatal(err)
	}
	g, err := gateway.New(space, &gateway.Options{Mode: mode})
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// BenchmarkEnableRoundTrip is an enable_tools call, the reconciliation of
// the client's server, and the tools/list that follows, over an in-memory
// connection, for 1,000 tools in 50 groups.
func BenchmarkEnableRoundTrip(b *testing.B) {
	g := benchGateway(b, expose.Groups)
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := g.Connect(ctx, gateway.ClientInfo{}, st)
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	for i := 0; b.Loop(); i++ {
		method := "enable_tools"
		if i%2 == 1 {
			method = "disable_tools"
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: method, Arguments: map[string]any{"groups": []string{"server07"}}})
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %v", method, err, res)
		}
		if _, err := cs.ListTools(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIdleSession reports the memory one connected, idle groups-mode
// client holds on the server side (goal: under 50 KB), as bytes/session.
func BenchmarkIdleSession(b *testing.B) {
	g := benchGateway(b, expose.Groups)
	ctx := context.Background()
	const sessions = 200
	var sessionsHeld []*mcp.ServerSession
	var clientConns []mcp.Transport
	measure := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	var perSession float64
	for b.Loop() {
		before := measure()
		for range sessions {
			ct, st := mcp.NewInMemoryTransports()
			ss, err := g.Connect(ctx, gateway.ClientInfo{}, st)
			if err != nil {
				b.Fatal(err)
			}
			sessionsHeld = append(sessionsHeld, ss)
			clientConns = append(clientConns, ct)
		}
		after := measure()
		runtime.KeepAlive(clientConns) // the client ends count until measured
		perSession = float64(after-before) / sessions
		b.StopTimer()
		for _, ss := range sessionsHeld {
			ss.Close()
		}
		sessionsHeld, clientConns = nil, nil
		b.StartTimer()
	}
	b.ReportMetric(perSession, "bytes/session")
}

// BenchmarkIdleHTTPSession reports the Go heap one idle streamable-HTTP
// session holds (initialized, no stream open), through the gateway's front
// and the SDK's handler, for each mode's kind of server: groups (a server
// per session) and search (one shared server). Connections are not
// counted; ./scripts/bench.sh -only memory measures the whole process.
func BenchmarkIdleHTTPSession(b *testing.B) {
	for _, mode := range []expose.Mode{expose.Groups, expose.Search} {
		b.Run(string(mode), func(b *testing.B) {
			g := benchGateway(b, mode)
			h, err := g.HTTPHandler(nil)
			if err != nil {
				b.Fatal(err)
			}
			const sessions = 500
			measure := func() uint64 {
				runtime.GC()
				runtime.GC()
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				return m.HeapAlloc
			}
			post := func(id, body string) string {
				req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				if id != "" {
					req.Header.Set("Mcp-Session-Id", id)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				return rec.Header().Get("Mcp-Session-Id")
			}
			var perSession float64
			for b.Loop() {
				before := measure()
				var ids []string
				for range sessions {
					id := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"claude-code","version":"1"}}}`)
					if id == "" {
						b.Fatal("no session")
					}
					post(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
					ids = append(ids, id)
				}
				after := measure()
				perSession = float64(after-before) / sessions
				b.StopTimer()
				for _, id := range ids {
					req := httptest.NewRequest(http.MethodDelete, "/mcp", nil)
					req.Header.Set("Mcp-Session-Id", id)
					h.ServeHTTP(httptest.NewRecorder(), req)
				}
				b.StartTimer()
			}
			b.ReportMetric(perSession, "bytes/session")
		})
	}
}

// BenchmarkRenderAuto builds an auto-mode gateway over 5,000 tools of the
// recorded catalogs: every exposure and the search index its modes share.
func BenchmarkRenderAuto(b *testing.B) {
	cat := catalogtest.Build(b, catalogtest.Scaled(b, 5000))
	space, err := view.NewSpace(cat, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := gateway.New(space, &gateway.Options{Mode: expose.Auto}); err != nil {
			b.Fatal(err)
		}
	}
}
