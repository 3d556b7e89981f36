package httpapi

import (
	"sort"
	"sync"
	"time"
)

// activityMinutes is how far back the dashboard's activity reaches.
const activityMinutes = 15

// Activity counts tool calls and errors per tool, minute by minute, over
// the last activityMinutes minutes, for the dashboard. It is an observer of
// the gateway (ToolCalled, SessionStarted); memory is bounded by the
// number of tools times activityMinutes.
type Activity struct {
	now func() time.Time

	mu    sync.Mutex
	tools map[string]*toolActivity
	// failures are the last maxFailures calls that did not end ok and were
	// traced, oldest first.
	failures []CallFailure
}

// maxFailures is how many failed calls the dashboard lists.
const maxFailures = 20

// CallFailure is a call that did not end ok, with the trace that shows
// where it failed.
type CallFailure struct {
	At      time.Time `json:"at"`
	Tool    string    `json:"tool"`
	Outcome string    `json:"outcome"`
	TraceID string    `json:"traceId"`
}

// toolActivity is one tool's counts in a ring of minutes.
type toolActivity struct {
	minute [activityMinutes]int64 // the minute (Unix minutes) each slot counts
	calls  [activityMinutes]int
	errors [activityMinutes]int
	via    [activityMinutes]int // calls that came through call_tool
}

// NewActivity returns an empty Activity; now is the clock (nil: time.Now).
func NewActivity(now func() time.Time) *Activity {
	if now == nil {
		now = time.Now
	}
	return &Activity{now: now, tools: map[string]*toolActivity{}}
}

// ToolCalled counts one call of tool; any outcome but ok (tool_error,
// crash, timeout, refused…) counts as an error.
func (a *Activity) ToolCalled(tool, via, _ string, outcome string, _ time.Duration) {
	m := a.now().Unix() / 60
	a.mu.Lock()
	defer a.mu.Unlock()
	t := a.tools[tool]
	if t == nil {
		t = &toolActivity{}
		a.tools[tool] = t
	}
	i := int(m % activityMinutes)
	if t.minute[i] != m {
		t.minute[i], t.calls[i], t.errors[i], t.via[i] = m, 0, 0, 0
	}
	t.calls[i]++
	if outcome != "ok" {
		t.errors[i]++
	}
	if via != "" {
		t.via[i]++
	}
}

// CallFailed keeps a traced call that did not end ok, for the dashboard to
// name its trace.
func (a *Activity) CallFailed(tool, outcome, traceID string) {
	f := CallFailure{At: a.now(), Tool: tool, Outcome: outcome, TraceID: traceID}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.failures) == maxFailures {
		a.failures = append(a.failures[:0], a.failures[1:]...)
	}
	a.failures = append(a.failures, f)
}

// Failures are the recent traced calls that did not end ok, newest first.
func (a *Activity) Failures() []CallFailure {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]CallFailure, len(a.failures))
	for i, f := range a.failures {
		out[len(out)-1-i] = f
	}
	return out
}

// SessionStarted is part of the observer; sessions are listed live instead.
func (a *Activity) SessionStarted(string) {}

// ToolActivity is one tool's calls over the recent minutes.
type ToolActivity struct {
	Tool string `json:"tool"`
	// Calls and Errors count the last 5 and the last 15 minutes.
	Calls5   int `json:"calls5"`
	Errors5  int `json:"errors5"`
	Calls15  int `json:"calls15"`
	Errors15 int `json:"errors15"`
	// ViaCallTool counts the last 15 minutes' calls made through call_tool.
	ViaCallTool int `json:"viaCallTool"`
	// PerMinute holds the calls of each of the last 15 minutes, oldest
	// first.
	PerMinute []int `json:"perMinute"`
}

// Recent reports every tool called in the last activityMinutes minutes,
// most called first.
func (a *Activity) Recent() []ToolActivity {
	now := a.now().Unix() / 60
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []ToolActivity
	for name, t := range a.tools {
		r := ToolActivity{Tool: name, PerMinute: make([]int, activityMinutes)}
		for i := range activityMinutes {
			age := now - t.minute[i]
			if t.calls[i] == 0 || age < 0 || age >= activityMinutes {
				continue
			}
			r.Calls15 += t.calls[i]
			r.Errors15 += t.errors[i]
			r.ViaCallTool += t.via[i]
			if age < 5 {
				r.Calls5 += t.calls[i]
				r.Errors5 += t.errors[i]
			}
			r.PerMinute[activityMinutes-1-age] += t.calls[i]
		}
		if r.Calls15 > 0 {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Calls15 != out[j].Calls15 {
			return out[i].Calls15 > out[j].Calls15
		}
		return out[i].Tool < out[j].Tool
	})
	return out
}
