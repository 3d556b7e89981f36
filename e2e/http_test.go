package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func get(t *testing.T, url string, header map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

// TestAdminSide checks the HTTP routes beside /mcp on the built binary.
func TestAdminSide(t *testing.T) {
	base := startHTTP(t)
	// No session yet: the gauge reads 0, so an alert on it is not blind.
	if code, body := get(t, base+"/metrics", nil); code != 200 || !strings.Contains(body, `toolfold_sessions_open{endpoint="main"} 0`) {
		t.Errorf("/metrics (%d) before any session lacks toolfold_sessions_open{endpoint=\"main\"} 0", code)
	}
	code, body := get(t, base+"/healthz", nil)
	var health struct {
		Status string `json:"status"`
		Tools  int    `json:"tools"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &health) != nil || health.Status != "serving" || health.Tools != 42 {
		t.Errorf("/healthz = %d %s", code, body)
	}
	code, body = get(t, base+"/api/groups", nil)
	if code != 200 || !strings.Contains(body, `"name": "files.search"`) || !strings.Contains(body, `"tokens"`) {
		t.Errorf("/api/groups = %d %s", code, body)
	}
	code, body = get(t, base+"/api/tools", nil)
	if code != 200 || !strings.Contains(body, `"name": "calculate"`) {
		t.Errorf("/api/tools = %d %.200s", code, body)
	}
	if code, _ := get(t, base+"/api/groups", map[string]string{"Origin": "https://evil.example"}); code != http.StatusForbidden {
		t.Errorf("a foreign Origin got %d, want 403", code)
	}
	if code, body := get(t, base+"/", nil); code != 200 || !strings.Contains(body, "files.search") {
		t.Errorf("dashboard = %d", code)
	}

	// /mcp/<group> serves that group alone, enabled.
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp/files.search"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := toolNames(t, cs); got != "glob_files,grep_files" {
		t.Errorf("/mcp/files.search lists %q", got)
	}

	// A call through /mcp shows in /metrics, under the tool call_tool reached.
	// A session (2025-11-25): requests without one count no session.
	main, err := mcp.NewClient(&mcp.Implementation{Name: "e2e"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer main.Close()
	if _, err := main.CallTool(context.Background(), &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "calculate", "arguments": map[string]any{"expression": "1+1"}}}); err != nil {
		t.Fatal(err)
	}
	code, body = get(t, base+"/metrics", nil)
	for _, want := range []string{`toolfold_tool_calls_total{outcome="ok",source="toolfold-demo",tool="calculate",via="call_tool"} 1`, `toolfold_sessions_total{mode="search"}`, `toolfold_source_up{kind="library",source="toolfold-demo",state="ready"} 1`,
		`toolfold_tool_call_duration_seconds_count{source="toolfold-demo",tool="calculate"} 1`,
		`toolfold_sessions_open{endpoint="main"} 1`,
		`toolfold_initial_list_tokens{mode="search"} `, `toolfold_initial_list_tokens{mode="flat"} `} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("/metrics (%d) lacks %s", code, want)
		}
	}
}
