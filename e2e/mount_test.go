package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestGatewayExampleServesConfigAndGoTools builds examples/gateway, a
// program that mounts a library server beside a config with the public
// gateway package, and drives it over stdio with the Go SDK client: the
// config's upstream (the npm memory server) and the in-process Go tool are
// listed and called side by side.
func TestGatewayExampleServesConfigAndGoTools(t *testing.T) {
	memory := nodeServer(t, "mcp-server-memory")
	cfg := writeConfig(t, map[string]any{"mcpServers": map[string]any{
		"memory": map[string]any{"command": memory, "env": map[string]any{"MEMORY_FILE_PATH": filepath.Join(t.TempDir(), "memory.jsonl")}},
	}})
	bin := filepath.Join(t.TempDir(), "gateway-example")
	if out, err := exec.Command("go", "build", "-o", bin, "../examples/gateway").CombinedOutput(); err != nil {
		t.Fatalf("building examples/gateway: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-config", cfg, "-mode", "flat")
	cmd.Env = append(cmd.Environ(), "TOOLFOLD_CACHE_DIR="+t.TempDir())
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	names := strings.Split(toolNames(t, cs), ",")
	for _, want := range []string{"convert_length", "memory__create_entities", "memory__read_graph"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s is not listed: %v", want, names)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "convert_length", Arguments: map[string]any{"value": 1, "from": "km", "to": "m"}})
	if err != nil || res.IsError {
		t.Fatalf("convert_length: %v %+v", err, res)
	}
	if got, _ := json.Marshal(res.StructuredContent); string(got) != `{"unit":"m","value":1000}` {
		t.Errorf("convert_length = %s", got)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory__create_entities", Arguments: map[string]any{
		"entities": []map[string]any{{"name": "toolfold", "entityType": "project", "observations": []string{"mounted"}}}}})
	if err != nil || res.IsError {
		t.Fatalf("memory__create_entities: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory__read_graph", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("memory__read_graph: %v %+v", err, res)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "mounted") {
		t.Errorf("read_graph does not show the entity: %s", text)
	}

	// It checks no token, so it refuses to serve other machines.
	out, err := exec.Command(bin, "-http", "0.0.0.0:0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "serves only on a loopback address") {
		t.Errorf("-http 0.0.0.0:0 = %v %s, want a refusal that names loopback", err, out)
	}
}
