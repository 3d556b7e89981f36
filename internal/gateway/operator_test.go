package gateway_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
)

// TestSessionsListLiveClients: the operator sees each connected client
// with its protocol, its mode and, in the groups mode, its enabled groups.
func TestSessionsListLiveClients(t *testing.T) {
	g := newGateway(t, gateway.Options{}, nil)
	a := connect(t, g, "cline")
	connect(t, g, "some-agent")
	connectAt(t, g, "modern", "2026-07-28", nil)
	a.call(t, "enable_tools", map[string]any{"groups": []string{"code", "docs"}})
	got := fmt.Sprint(g.Sessions())
	want := fmt.Sprint([]gateway.SessionInfo{
		{Client: "cline", Protocol: "2025-11-25", Mode: "groups", Enabled: []string{"code", "docs"}},
		{Client: "modern", Protocol: "2026-07-28", Mode: "search"},
		{Client: "some-agent", Protocol: "2025-11-25", Mode: "search"},
	})
	if got != want {
		t.Errorf("sessions = %s\nwant       %s", got, want)
	}
}

// TestFindWorksInEveryMode: the dashboard's query box ranks tools even
// when the gateway serves a mode without find_tools.
func TestFindWorksInEveryMode(t *testing.T) {
	for _, m := range []expose.Mode{expose.Flat, expose.Grouped, expose.Search} {
		g := newGateway(t, gateway.Options{Mode: m}, nil)
		res, err := g.Find([]string{"tool a"}, 3)
		if err != nil || len(res.Tools) == 0 {
			t.Errorf("%s: Find = %+v, %v", m, res, err)
		}
	}
}

type countingObserver struct{ calls, sessions int }

func (c *countingObserver) ToolCalled(string, string, string, string, time.Duration) { c.calls++ }
func (c *countingObserver) SessionStarted(string)                                    { c.sessions++ }

func TestObserversTellEveryone(t *testing.T) {
	a, b := &countingObserver{}, &countingObserver{}
	obs := gateway.Observers{a, b}
	obs.ToolCalled("t", "", "s", "ok", 0)
	obs.SessionStarted("flat")
	if a.calls != 1 || b.calls != 1 || a.sessions != 1 || b.sessions != 1 {
		t.Errorf("observers heard %+v %+v", a, b)
	}
}
