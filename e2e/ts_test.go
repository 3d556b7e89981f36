package e2e

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// tsReport is what node/client.mjs prints.
type tsReport struct {
	ServerInfo   struct{ Name string } `json:"serverInfo"`
	Capabilities struct {
		Tools struct {
			ListChanged bool `json:"listChanged"`
		} `json:"tools"`
	} `json:"capabilities"`
	Steps []struct {
		Op      string   `json:"op"`
		Tools   []string `json:"tools"`
		Name    string   `json:"name"`
		IsError bool     `json:"isError"`
		Text    string   `json:"text"`
		Changes int      `json:"changes"`
		// Structured is the call's structuredContent, which the client
		// has checked against the tool's output schema.
		Structured json.RawMessage `json:"structured"`
		// request steps: a result, or an error
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Err    *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
		// list steps on 2026-07-28: the caching hints
		TTLMs      int    `json:"ttlMs"`
		CacheScope string `json:"cacheScope"`
	} `json:"steps"`
	Error string `json:"error"`
}

type step map[string]any

// runTS runs the TypeScript SDK client against toolfold with a plan.
func runTS(t *testing.T, plan map[string]any) tsReport {
	t.Helper()
	node := requireNode(t)
	raw, _ := json.Marshal(plan)
	cmd := exec.Command(node, "node/client.mjs", string(raw))
	cmd.Env = append(cmd.Environ(), "TOOLFOLD_DEMO_SANDBOX="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("node client: %v\n%s\n%s", err, out, stderr)
	}
	var rep tsReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("node client printed %q: %v", out, err)
	}
	if rep.Error != "" {
		t.Fatalf("node client failed: %s", rep.Error)
	}
	if len(rep.Steps) != len(plan["steps"].([]step)) {
		t.Fatalf("node client ran %d of %d steps", len(rep.Steps), len(plan["steps"].([]step)))
	}
	return rep
}

func TestTypeScriptClientGroupsMode(t *testing.T) {
	rep := runTS(t, map[string]any{
		"command": binary, "args": []string{"demo", "--mode", "groups"},
		"steps": []step{
			{"op": "list"},
			{"op": "call", "name": "put_note", "arguments": map[string]any{"key": "k", "text": "v"}},
			{"op": "call", "name": "call_tool", "arguments": map[string]any{"name": "calculate", "arguments": map[string]any{"expression": "6 * 7"}}},
			{"op": "quiet", "ms": 300},
			{"op": "call", "name": "enable_tools", "arguments": map[string]any{"groups": []string{"notes"}}},
			{"op": "waitChanged", "count": 1},
			{"op": "quiet", "ms": 300},
			{"op": "list"},
			{"op": "call", "name": "put_note", "arguments": map[string]any{"key": "k", "text": "from typescript"}},
			{"op": "call", "name": "get_note", "arguments": map[string]any{"key": "k"}},
		},
	})
	s := rep.Steps
	if !rep.Capabilities.Tools.ListChanged {
		t.Error("capabilities.tools.listChanged is not set")
	}
	if got := strings.Join(s[0].Tools, ","); got != groupsInitial {
		t.Errorf("initial list = %q", got)
	}
	if !s[1].IsError || !strings.Contains(s[1].Text, `{"groups":["notes"]}`) {
		t.Errorf("hidden tool: %+v", s[1])
	}
	if s[2].IsError || !strings.Contains(s[2].Text, `"value":42`) {
		t.Errorf("call_tool: %+v", s[2])
	}
	if s[3].Changes != 0 {
		t.Errorf("call_tool caused %d list_changed", s[3].Changes)
	}
	if s[5].Changes != 1 || s[6].Changes != 1 {
		t.Errorf("list_changed after enable: %d then %d, want exactly 1", s[5].Changes, s[6].Changes)
	}
	if got := strings.Join(s[7].Tools, ","); !strings.Contains(got, "get_note") || !strings.Contains(got, "put_note") {
		t.Errorf("list after enable = %q", got)
	}
	if s[9].IsError || !strings.Contains(s[9].Text, "from typescript") {
		t.Errorf("get_note: %+v", s[9])
	}
}
