package httpapi

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
)

// operatorFixture is the fixture with everything the dashboard can show.
func operatorFixture(t *testing.T, clock *time.Time, adjust func(*Options)) *fixture {
	activity := NewActivity(func() time.Time { return *clock })
	return newFixture(t, func(o *Options) {
		o.Activity = activity
		o.Sessions = func() []SessionInfo {
			return []SessionInfo{
				{ID: "S1", Client: "claude-code", ClientVersion: "2.1", Protocol: "2025-11-25", Mode: "groups", Enabled: []string{"code", "code.repos"}, LastSeen: time.Now()},
				{ID: "S2", Client: "inspector", Protocol: "2025-11-25", Mode: "search", LastSeen: time.Now().Add(-time.Hour), Idle: true},
				{Client: "cursor", Protocol: "2025-06-18", Mode: "search"},
				{Client: "old-ide", Protocol: "2025-03-26", Mode: "flat"},
			}
		}
		o.InitialTools = func(mode string) ([]*mcp.Tool, error) {
			n := map[string]int{"flat": 7, "groups": 3, "grouped": 2, "search": 1}[mode]
			tools := make([]*mcp.Tool, n)
			for i := range tools {
				tools[i] = &mcp.Tool{Name: "t", Description: "a tool with a description of some length"}
			}
			return tools, nil
		}
		o.Find = func(phrasings []string, limit int) ([]FoundTool, error) {
			if strings.Join(phrasings, "|") == "nothing" {
				return nil, nil
			}
			if len(phrasings) > 1 && phrasings[1] == "fused" {
				return []FoundTool{{Name: "fused_" + strings.Join(phrasings, "_"), Score: 3}}, nil
			}
			return []FoundTool{{Name: "create_issue", Group: "code", Description: "Open an <issue>", Score: 2.5}, {Name: "list_issues", Score: 1}}, nil
		}
		if adjust != nil {
			adjust(o)
		}
	})
}

func TestDashboardIsTheOperatorsPage(t *testing.T) {
	clock := time.Date(2026, 11, 23, 12, 0, 30, 0, time.UTC)
	f := operatorFixture(t, &clock, nil)
	act := f.api.opts.Activity
	act.ToolCalled("create_issue", "", "github", "ok", time.Millisecond)
	act.ToolCalled("create_issue", "call_tool", "github", "tool_error", time.Millisecond)
	act.CallFailed("create_issue", "crash", "4bf92f3577b34da6a3ce929d0e0e4736")
	clock = clock.Add(10 * time.Minute)
	act.ToolCalled("create_issue", "", "github", "ok", time.Millisecond)
	act.ToolCalled("old_tool", "", "github", "ok", time.Millisecond)
	clock = clock.Add(8 * time.Minute) // the first two calls are 18 minutes old now, the others 8
	w := f.do(t, "GET", "/", nil)
	page := w.Body.String()
	if w.Code != 200 {
		t.Fatalf("GET / = %d: %s", w.Code, page)
	}
	for _, want := range []string{
		// sources with state and restarts; a healthy one shows no problem
		`<th class="num">restarts</th>`,
		// sessions with client, protocol, mode and enabled groups
		"claude-code", "2025-11-25", "code, code.repos", "cursor", "all reachable through call_tool", "old-ide", "all listed",
		// context per mode
		`<td>search</td><td class="num">1</td>`,
		// the query box
		`<form class="query" method="get" action="/">`,
		// when each HTTP session was last seen; a long-idle one marked
		"<th>last seen</th>", "1h0m0s ago", `<span class="idle"`,
		// the trace of a failed call
		`<section id="failures">`, `<td class="err">crash</td>`, `<code class="trace">4bf92f3577b34da6a3ce929d0e0e4736</code>`,
		// it reloads itself while no query is shown
		`<meta http-equiv="refresh" content="10">`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the dashboard lacks %q", want)
		}
	}
	// Only the search sessions have call_tool.
	if n := strings.Count(page, "all reachable through call_tool"); n != 2 {
		t.Errorf("%d sessions are said to reach tools through call_tool, want the two search ones only", n)
	}
	if n := strings.Count(page, `<span class="idle"`); n != 1 {
		t.Errorf("%d sessions are marked idle, want the one", n)
	}
	// Only create_issue's last call (8 minutes old) is in the window.
	if !strings.Contains(page, "<code>create_issue</code>") {
		t.Errorf("the activity lacks create_issue:\n%s", page)
	}
	if got := act.Recent(); len(got) != 2 || got[0].Calls15 != 1 || got[0].Errors15 != 0 || got[0].Calls5 != 0 {
		t.Errorf("recent = %+v: calls older than 15 minutes must fall out, the 8-minute-old ones count in 15 but not 5", got)
	}
	if strings.Count(page, "<details>") != 1 || !strings.Contains(page, "boom") {
		t.Errorf("only the failed source shows its stderr")
	}
	if strings.Contains(page, "<script") {
		t.Error("the dashboard needs no script")
	}
	if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "form-action 'self'") || strings.Contains(csp, "script-src") {
		t.Errorf("CSP = %q", csp)
	}

	// The query box ranks, escapes, and stops the page reloading.
	w = f.do(t, "GET", "/?q=open+an+issue", nil)
	page = w.Body.String()
	for _, want := range []string{`value="open an issue"`, `<table id="ranking">`, "<code>create_issue</code>", "2.50", "Open an &lt;issue&gt;"} {
		if !strings.Contains(page, want) {
			t.Errorf("the ranking lacks %q", want)
		}
	}
	if strings.Contains(page, `http-equiv="refresh"`) {
		t.Error("a page showing a query must not reload itself")
	}
	if page := f.do(t, "GET", "/?q=nothing", nil).Body.String(); !strings.Contains(page, "Nothing matched") {
		t.Error("an empty ranking must say so")
	}
}

// TestDashboardRanksSeveralPhrasings: the query box takes several
// phrasings (q repeated, one per box), ranks them in one fused call, shows
// them back and offers a box for another while find_tools has room.
func TestDashboardRanksSeveralPhrasings(t *testing.T) {
	clock := time.Now()
	f := operatorFixture(t, &clock, nil)
	boxes := func(page string) int { return strings.Count(page, `<input type="search" name="q"`) }
	if page := f.do(t, "GET", "/", nil).Body.String(); boxes(page) != 2 {
		t.Errorf("an empty query box has %d inputs, want 2 (a query and another wording)", boxes(page))
	}
	page := f.do(t, "GET", "/?q=open+issue&q=fused&q=", nil).Body.String()
	for _, want := range []string{`value="open issue"`, `value="fused"`, "<code>fused_open issue_fused</code>"} {
		if !strings.Contains(page, want) {
			t.Errorf("two phrasings: the page lacks %q", want)
		}
	}
	if boxes(page) != 3 {
		t.Errorf("two phrasings show %d inputs, want 3 (room for a third)", boxes(page))
	}
	if page := f.do(t, "GET", "/?q=a&q=b&q=c", nil).Body.String(); boxes(page) != 3 {
		t.Errorf("three phrasings show %d inputs, want 3 (find_tools ranks no more)", boxes(page))
	}
}

// TestDashboardSaysWhyAGroupHasNoTools: a parent group's tools are in its
// sub-groups; an empty group is explained by its source's state or by its
// rules, never all alike as a source that is not ready.
func TestDashboardSaysWhyAGroupHasNoTools(t *testing.T) {
	f := newFixture(t, nil)
	f.cat.Store(catalogtest.Build(t, catalog.Spec{
		Tools:              []*catalog.Tool{catalogtest.Tool("a")},
		PendingSources:     []string{"slow"},
		UnavailableSources: map[string]string{"gone": "exited"},
		Groups: []catalog.GroupSpec{
			{ID: "kb"}, {ID: "kb.notes", Parent: "kb", Members: catalog.Members{Tools: []catalog.ToolID{"a"}}},
			{ID: "gone", Members: catalog.Members{Sources: []string{"gone"}}},
			{ID: "slow", Members: catalog.Members{Sources: []string{"slow"}}},
			{ID: "nomatch", Members: catalog.Members{Globs: []string{"zz*"}}},
		},
	}))
	page := f.do(t, "GET", "/", nil).Body.String()
	for group, want := range map[string]string{
		"kb":       "available: its tools are in its sub-groups",
		"kb.notes": "<td>available</td>",
		"gone":     "no tools: its source gone failed to start",
		"slow":     "no tools yet: its source is still starting",
		"nomatch":  "no tools: its rules match none of the catalog",
	} {
		_, row, _ := strings.Cut(page, `?group=`+group+`">`)
		row, _, _ = strings.Cut(row, "</tr>")
		if !strings.Contains(row, want) {
			t.Errorf("group %s: row %q lacks %q", group, row, want)
		}
	}
	if strings.Contains(page, "its source is not ready") {
		t.Error("the old blanket wording is still shown")
	}
}

// TestDashboardHidesOtherClientsFromALimitedToken: sessions, activity and
// the whole catalog's ranking are for an operator.
func TestDashboardHidesOtherClientsFromALimitedToken(t *testing.T) {
	clock := time.Now()
	f := operatorFixture(t, &clock, withTokens)
	h := http.Header{}
	h.Set("Authorization", "Bearer "+limitedToken)
	page := f.do(t, "GET", "/", h).Body.String()
	if strings.Contains(page, "claude-code") || strings.Contains(page, `id="find"`) {
		t.Errorf("a limited token sees other clients or the query box:\n%s", page)
	}
	h.Set("Authorization", "Bearer "+fullToken)
	if page := f.do(t, "GET", "/", h).Body.String(); !strings.Contains(page, "claude-code") {
		t.Error("a full token sees the sessions")
	}
}
