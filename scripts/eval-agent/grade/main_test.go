package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGrade grades a small log: a request reached in two calls through
// call_tool, one whose first real call was wrong, one through a grouped
// tool's action, one that never called a tool.
func TestGrade(t *testing.T) {
	dir := t.TempDir()
	answers := map[string][]string{"R1": {"s__send"}, "R2": {"s__send"}, "R3": {"s__queue_create"}, "R4": {"s__x"}}
	log := []entry{
		{Run: "a", Agent: "x", Request: "R1", Method: "tools/list", Tokens: 100},
		{Run: "a", Agent: "x", Request: "R1", Method: "tools/call", Tool: "find_tools", Tokens: 300},
		{Run: "a", Agent: "x", Request: "R1", Method: "tools/call", Tool: "s__send", Tokens: 5000},
		{Run: "a", Agent: "x", Request: "R2", Method: "tools/call", Tool: "s__sned", Tokens: 10},
		{Run: "a", Agent: "x", Request: "R2", Method: "tools/call", Tool: "s__send", Tokens: 10},
		{Run: "a", Agent: "x", Request: "R3", Method: "tools/call", Tool: "s_queue", Params: json.RawMessage(`{"name":"s_queue","arguments":{"action":"queue_create"}}`), Tokens: 10},
		{Run: "a", Agent: "x", Request: "R4", Method: "tools/call", Tool: "find_tools", Tokens: 700},
	}
	var b bytes.Buffer
	for _, e := range log {
		line, _ := json.Marshal(e)
		b.Write(append(line, '\n'))
	}
	logPath, answersPath := filepath.Join(dir, "log.jsonl"), filepath.Join(dir, "answers.json")
	raw, _ := json.Marshal(answers)
	if err := os.WriteFile(logPath, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(answersPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(answersPath, []string{logPath}, true, &out); err != nil {
		t.Fatal(err)
	}
	var reports []report
	if err := json.Unmarshal(out.Bytes(), &reports); err != nil {
		t.Fatal(err)
	}
	r := reports[0]
	// R1 right in 3 requests after 400 tokens, R2 wrong (1, 0), R3 right
	// by its action (1, 0), R4 never called.
	if r.Requests != 4 || r.RightFirstCall != 0.5 || r.NeverCalled != 1 || r.RequestsMedian != 1 || r.TokensP90 != 400 || r.LargestAnswer != 5000 {
		t.Errorf("report = %+v", r)
	}
	if len(r.Wrong) != 2 || !strings.Contains(r.Wrong[0], "R2: called s__sned") {
		t.Errorf("wrong = %q", r.Wrong)
	}
}
