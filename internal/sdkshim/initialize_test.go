package sdkshim_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/sdkshim"
)

// TestSDKKeepsTheInitializeParams: a session keeps its client's initialize
// params as sent, for its life, which is why the HTTP front hands it a
// compact, bounded copy (CompactInitialize).
func TestSDKKeepsTheInitializeParams(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "bare"}, nil)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("n", 10_000)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: long, Version: "1"}, nil).Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if p := ss.InitializeParams(); p == nil || p.ClientInfo == nil || p.ClientInfo.Name != long {
		t.Fatal("the session no longer keeps the client's initialize params as sent; the compact copy may be unnecessary")
	}
}

// TestCompactInitializeOpensASession: the SDK's streamable handler takes
// the compact request as an initialize, and its session keeps the compact
// params: the padding is gone, what the SDK reads is there.
func TestCompactInitializeOpensASession(t *testing.T) {
	kept := make(chan *mcp.InitializeParams, 1)
	s := mcp.NewServer(&mcp.Implementation{Name: "bare"}, &mcp.ServerOptions{
		InitializedHandler: func(_ context.Context, req *mcp.InitializedRequest) { kept <- req.Session.InitializeParams() },
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	info := json.RawMessage(`{"name":"` + strings.Repeat("n", 10_000) + `","version":"1","icons":[{"src":"` + strings.Repeat("i", 10_000) + `"}]}`)
	compact, err := sdkshim.CompactInitialize(json.RawMessage(`1`), "initialize", "2025-11-25", json.RawMessage(`{"roots":{"listChanged":true}}`), info)
	if err != nil {
		t.Fatal(err)
	}
	code, body, header := post(t, srv.URL, string(compact), nil)
	id := sdkshim.SessionStarted(header)
	if code != http.StatusOK || id == "" {
		t.Fatalf("the compact initialize: %d %s", code, body)
	}
	post(t, srv.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, inSession(id, ""))
	p := <-kept
	if p.ProtocolVersion != "2025-11-25" || p.Capabilities == nil || p.Capabilities.RootsV2 == nil || !p.Capabilities.RootsV2.ListChanged {
		t.Errorf("the session kept %+v; want the protocol version and the roots capability", p)
	}
	if p.ClientInfo == nil || len(p.ClientInfo.Name) != len(sdkshim.ClipInfo(strings.Repeat("n", 10_000))) || len(p.ClientInfo.Icons) != 0 {
		t.Errorf("the session kept clientInfo %+v; want the name clipped and no icons", p.ClientInfo)
	}
}
