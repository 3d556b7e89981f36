package sdkshim_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSDKSendsRawSchemasAsTheyAre: a tool whose input schema is a
// json.RawMessage goes out byte for byte (key order and "<" kept), and a
// client reads schemas back as generic maps. The gateway relies on the
// first to keep every upstream schema as JSON text (a fraction of the
// memory of the maps), and converts the second once, as a list arrives
// (upstream rawSchemas, which stays beside the upstream cache that shares
// its packing).
func TestSDKSendsRawSchemasAsTheyAre(t *testing.T) {
	const schema = `{"type":"object","properties":{"z":{"type":"string","description":"a <b> & c"},"a":{"type":"integer"}}}`
	s := mcp.NewServer(&mcp.Implementation{Name: "bare"}, nil)
	s.AddTool(&mcp.Tool{Name: "t", InputSchema: json.RawMessage(schema)}, noArgs)
	ct, st := mcp.NewInMemoryTransports()
	if _, err := s.Connect(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	var log lockedBuffer
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "pin", Version: "1"}, nil).Connect(context.Background(), &mcp.LoggingTransport{Transport: ct, Writer: &log}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) != 1 {
		t.Fatalf("ListTools = %v, %v", res, err)
	}
	if !strings.Contains(log.String(), `"inputSchema":`+schema) {
		t.Errorf("the SDK no longer sends a json.RawMessage schema as it is; the wire shows:\n%s", log.String())
	}
	if _, ok := res.Tools[0].InputSchema.(map[string]any); !ok {
		t.Errorf("the client now gives an input schema as %T, not map[string]any; revisit rawSchemas", res.Tools[0].InputSchema)
	}
}
