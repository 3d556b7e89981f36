package e2e

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

const searchList = "about,call_tool,describe_tools,find_tools,guidance"

// discover runs the flow of a client that never refreshes its list: find a
// tool by what it does, read its schema, call it, all in three calls.
func discover(t *testing.T, s *session) {
	text := s.mustData("find_tools", map[string]any{"query": "remember a fact so I can look it up later"})
	var found struct {
		Tools []struct{ Name, Group string }
	}
	if err := json.Unmarshal([]byte(text), &found); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range found.Tools {
		names = append(names, f.Name)
	}
	if !slices.Contains(names, "put_note") {
		t.Fatalf("find_tools did not find put_note in %v", names)
	}
	text = s.mustData("describe_tools", map[string]any{"names": []string{"put_note"}})
	if !strings.Contains(text, `"inputSchema"`) || !strings.Contains(text, `"key"`) {
		t.Errorf("describe_tools = %s", text)
	}
	s.mustCall("call_tool", map[string]any{"name": "put_note", "arguments": map[string]any{"key": "fact", "text": "the sky is blue"}})
	if text := s.mustCall("call_tool", map[string]any{"name": "get_note", "arguments": map[string]any{"key": "fact"}}); !strings.Contains(text, "the sky is blue") {
		t.Errorf("get_note = %s", text)
	}
	s.quiet()
}

func TestAutoModePerClient(t *testing.T) {
	if got := stdioSession(t, "cline").names(); got != groupsInitial {
		t.Errorf("cline got %q, want the groups mode", got)
	}
	// Claude Code searches its tools itself: it gets them all.
	if got := stdioSession(t, "claude-code").names(); strings.Count(got, ",") != 41 || strings.Contains(got, "find_tools") {
		t.Errorf("claude-code got %q, want the flat list", got)
	}
	s := stdioSession(t, "some-agent")
	if got := s.names(); got != searchList {
		t.Fatalf("an unknown client got %q, want the search mode", got)
	}
	discover(t, s)
}

func TestGroupsModeThroughCallTool(t *testing.T) {
	// A groups-mode client that ignores list_changed still reaches every
	// tool: find it, then call it through call_tool without enabling.
	s := stdioSession(t, "e2e-go", "--mode", "groups")
	text := s.mustData("find_tools", map[string]any{"query": "convert miles to kilometres"})
	if !strings.Contains(text, `"name":"convert_units"`) {
		t.Fatalf("find_tools = %s", text)
	}
	text = s.mustCall("call_tool", map[string]any{"name": "convert_units", "arguments": map[string]any{"value": 10, "from": "mi", "to": "km"}})
	if !strings.Contains(text, "16.09") {
		t.Errorf("convert_units = %s", text)
	}
	if got := s.names(); got != groupsInitial {
		t.Errorf("the list changed: %q", got)
	}
}

func TestStatelessHTTPServesSearch(t *testing.T) {
	base := startHTTP(t, "--stateless")
	s := httpSession(t, base, "cline")
	if got := s.names(); got != searchList {
		t.Fatalf("stateless endpoint: %q, want the search mode even for a refreshing client", got)
	}
	text := s.mustCall("call_tool", map[string]any{"name": "calculate", "arguments": map[string]any{"expression": "2^10"}})
	if !strings.Contains(text, `"value":1024`) {
		t.Errorf("calculate = %s", text)
	}
}

func TestTypeScriptClientSearchMode(t *testing.T) {
	rep := runTS(t, map[string]any{
		"command": binary, "args": []string{"demo"}, "clientName": "some-agent",
		"steps": []step{
			{"op": "list"},
			{"op": "call", "name": "find_tools", "arguments": map[string]any{"query": "what time is it in Tokyo"}},
			{"op": "call", "name": "describe_tools", "arguments": map[string]any{"names": []string{"current_time"}}},
			{"op": "call", "name": "call_tool", "arguments": map[string]any{"name": "current_time", "arguments": map[string]any{"time_zone": "Asia/Tokyo"}}},
			{"op": "call", "name": "guidance", "arguments": map[string]any{"topic": "groups"}},
			{"op": "call", "name": "find_tools", "arguments": map[string]any{"query": "convert time zone", "queries": []string{"time in another city"}}},
		},
	})
	s := rep.Steps
	if got := strings.Join(s[0].Tools, ","); got != searchList {
		t.Errorf("list = %q", got)
	}
	if !strings.Contains(string(s[1].Structured), `"name":"current_time"`) || !strings.Contains(s[1].Text, "current_time(") {
		t.Errorf("find_tools = %s\n%s", s[1].Text, s[1].Structured)
	}
	if !strings.Contains(s[2].Text, "time_zone") {
		t.Errorf("describe_tools = %s", s[2].Text)
	}
	if s[3].IsError || !strings.Contains(s[3].Text, "+09:00") {
		t.Errorf("current_time in Tokyo = %s", s[3].Text)
	}
	if !strings.Contains(s[4].Text, "| notes | available | 5 |") {
		t.Errorf("guidance = %s", s[4].Text)
	}
	if s[5].IsError || !strings.Contains(string(s[5].Structured), `"name":"convert_time_zone"`) {
		t.Errorf("find_tools with two phrasings = %s", s[5].Structured)
	}
}
