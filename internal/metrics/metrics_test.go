package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestMetricsAreServed(t *testing.T) {
	m := New(func() []Source {
		return []Source{{Name: "memory", Kind: "mcp", State: "ready", Tools: 9}, {Name: "broken", Kind: "mcp", State: "failed"}, {Name: "sleepy", Kind: "mcp", State: "idle", Tools: 3, IdleStops: 2, Restarts: 4, Held: 2}}
	})
	m.Read(Gauges{
		OpenSessions:        func() map[string]int { return map[string]int{"main": 2, "group:github": 1} },
		InitialTokens:       func() map[string]int { return map[string]int{"search": 812} },
		AnswerBytesInFlight: func() int64 { return 4096 },
	})
	m.ToolCalled("memory__read_graph", "", "memory", "ok", 3*time.Millisecond)
	m.ToolCalled("memory__read_graph", "", "memory", "tool_error", time.Millisecond)
	m.ToolCalled("memory__read_graph", "call_tool", "memory", "ok", time.Millisecond)
	m.ToolCalled("nope", "", "", "refused", 0)
	m.ToolCalled("memory__read_graph", "", "memory", "crash", time.Millisecond)
	m.ToolCalled("memory__read_graph", "", "memory", "timeout", time.Millisecond)
	m.SessionStarted("groups")
	m.HandlerPanicked("stdio-bytes")
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`toolfold_tool_calls_total{outcome="ok",source="memory",tool="memory__read_graph",via=""} 1`,
		`toolfold_tool_calls_total{outcome="ok",source="memory",tool="memory__read_graph",via="call_tool"} 1`,
		`toolfold_tool_calls_total{outcome="refused",source="",tool="nope",via=""} 1`,
		`toolfold_tool_calls_total{outcome="crash",source="memory",tool="memory__read_graph",via=""} 1`,
		`toolfold_tool_calls_total{outcome="timeout",source="memory",tool="memory__read_graph",via=""} 1`,
		`toolfold_tool_call_duration_seconds_count{source="memory",tool="memory__read_graph"} 5`,
		`toolfold_source_restarts_total{kind="mcp",source="sleepy"} 4`,
		`toolfold_source_held_items{source="sleepy"} 2`,
		`toolfold_source_held_items{source="memory"} 0`,
		`toolfold_sessions_open{endpoint="main"} 2`,
		`toolfold_sessions_open{endpoint="group:github"} 1`,
		`toolfold_initial_list_tokens{mode="search"} 812`,
		`toolfold_sessions_total{mode="groups"} 1`,
		`toolfold_handler_panics_total{path="stdio-bytes"} 1`,
		`toolfold_answer_bytes_in_flight 4096`,
		`toolfold_source_up{kind="mcp",source="memory",state="ready"} 1`,
		`toolfold_source_up{kind="mcp",source="broken",state="failed"} 0`,
		`toolfold_source_tools{kind="mcp",source="memory"} 9`,
		`toolfold_source_up{kind="mcp",source="sleepy",state="idle"} 0`,
		`toolfold_source_idle_stops_total{kind="mcp",source="sleepy"} 2`,
		`go_goroutines`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestConfigReloadsAreCountedByResult(t *testing.T) {
	m := New(nil)
	m.ConfigReloaded("refused")
	m.ConfigReloaded("refused")
	m.ConfigReloaded("unchanged")
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{`toolfold_config_reloads_total{result="refused"} 2`, `toolfold_config_reloads_total{result="unchanged"} 1`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
