package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/groupsext"
	"github.com/toolfold/toolfold/internal/view"
)

// slowSpace is a catalog in which the source "slow" is still starting
// (known: nil), has started (its tools given), or failed (why).
func slowSpace(t *testing.T, known []string, failed string) *view.Space {
	t.Helper()
	spec := catalog.Spec{Tools: []*catalog.Tool{catalogtest.Tool("u")},
		Groups: []catalog.GroupSpec{{ID: "slow", Description: "Slow", Members: catalog.Members{Sources: []string{"slow"}}}}}
	switch {
	case failed != "":
		spec.UnavailableSources = map[string]string{"slow": failed}
	case known == nil:
		spec.PendingSources = []string{"slow"}
	}
	for _, id := range known {
		tool := catalogtest.Tool(id)
		tool.Source = "slow"
		spec.Tools = append(spec.Tools, tool)
	}
	space, err := view.NewSpace(catalogtest.Build(t, spec), nil)
	if err != nil {
		t.Fatal(err)
	}
	return space
}

// pendingGateway serves slowSpace with "slow" pending; waiting receives
// one value per request that starts waiting for it.
func pendingGateway(t *testing.T, opts gateway.Options) (g *gateway.Gateway, waiting <-chan struct{}) {
	t.Helper()
	g, err := gateway.New(slowSpace(t, nil, ""), &opts)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan struct{}, 16)
	gateway.OnPendingWait(g, func() { ch <- struct{}{} })
	return g, ch
}

// waiting waits until n requests wait for pending sources.
func waiting(t *testing.T, ch <-chan struct{}, n int) {
	t.Helper()
	for range n {
		select {
		case <-ch:
		case <-time.After(30 * time.Second):
			t.Fatal("the requests never started waiting")
		}
	}
}

type outcome struct {
	text string
	err  error
}

func goCall(cs *mcp.ClientSession, name string, args any) <-chan outcome {
	out := make(chan outcome, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			out <- outcome{err: err}
			return
		}
		out <- outcome{text: answer(res)}
	}()
	return out
}

func goList(cs *mcp.ClientSession) <-chan outcome {
	out := make(chan outcome, 1)
	go func() {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			out <- outcome{err: err}
			return
		}
		var names []string
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		out <- outcome{text: strings.Join(names, ",")}
	}()
	return out
}

func await(t *testing.T, what string, ch <-chan outcome) string {
	t.Helper()
	select {
	case o := <-ch:
		if o.err != nil {
			t.Fatalf("%s: %v", what, o.err)
		}
		return o.text
	case <-time.After(30 * time.Second):
		t.Fatalf("%s never answered", what)
	}
	return ""
}

// Requests that need the tools of a source still starting wait for the
// catalog that brings them, and then answer from it.
func TestPendingSourceRequestsWaitForItsTools(t *testing.T) {
	g, gWaits := pendingGateway(t, gateway.Options{Mode: expose.Flat})
	c := connect(t, g, "other")
	list := goList(c.ClientSession)
	call := goCall(c.ClientSession, "slow_tool", map[string]any{"x": "1"})
	waiting(t, gWaits, 2)

	s, sWaits := pendingGateway(t, gateway.Options{Mode: expose.Search})
	sc := connect(t, s, "other")
	find := goCall(sc.ClientSession, "find_tools", map[string]any{"query": "slow_tool"})
	callTool := goCall(sc.ClientSession, "call_tool", map[string]any{"name": "slow_tool", "arguments": map[string]any{}})
	waiting(t, sWaits, 2)

	for _, gw := range []*gateway.Gateway{g, s} {
		if err := gw.Update(slowSpace(t, []string{"slow_tool"}, "")); err != nil {
			t.Fatal(err)
		}
	}
	if got := await(t, "tools/list", list); got != "slow_tool,u" {
		t.Errorf("the first list of a client that does not refresh = %q", got)
	}
	if got := await(t, "slow_tool", call); got != `slow_tool {"x":"1"}` {
		t.Errorf("call = %q", got)
	}
	if got := await(t, "find_tools", find); !strings.Contains(got, `"slow_tool"`) {
		t.Errorf("find_tools = %s", got)
	}
	if got := await(t, "call_tool", callTool); got != "slow_tool {}" {
		t.Errorf("call_tool = %q", got)
	}
}

// A client known to refresh gets its list at once, and list_changed when
// the tools arrive.
func TestPendingSourceRefreshingClientIsToldLater(t *testing.T) {
	g, _ := pendingGateway(t, gateway.Options{Mode: expose.Flat, RefreshingClients: []string{"refresher"}})
	c := connect(t, g, "refresher")
	if got := c.names(t); got != "u" {
		t.Fatalf("first list = %q", got)
	}
	if err := g.Update(slowSpace(t, []string{"slow_tool"}, "")); err != nil {
		t.Fatal(err)
	}
	c.waitChanged(t)
	if got := c.names(t); got != "slow_tool,u" {
		t.Errorf("list after list_changed = %q", got)
	}
}

// enable_tools of a group whose source is starting enables its tools once
// they are known.
func TestPendingSourceEnableWaits(t *testing.T) {
	g, waits := pendingGateway(t, gateway.Options{Mode: expose.Groups})
	c := connect(t, g, "refresher")
	enable := goCall(c.ClientSession, "enable_tools", map[string]any{"groups": []string{"slow"}})
	waiting(t, waits, 1)
	if err := g.Update(slowSpace(t, []string{"slow_tool"}, "")); err != nil {
		t.Fatal(err)
	}
	if got := await(t, "enable_tools", enable); !strings.Contains(got, `"slow_tool"`) {
		t.Errorf("enable_tools = %s", got)
	}
}

// A source that failed is named with why; one still starting after the
// wait is named as such.
func TestPendingSourceFailureAndTimeoutAreExplained(t *testing.T) {
	g, waits := pendingGateway(t, gateway.Options{Mode: expose.Flat})
	c := connect(t, g, "other")
	call := goCall(c.ClientSession, "slow_tool", map[string]any{})
	waiting(t, waits, 1)
	if err := g.Update(slowSpace(t, nil, `upstream "slow" exited at start (exit status 1): Error: Cannot find module '/x.js'`)); err != nil {
		t.Fatal(err)
	}
	if got := await(t, "slow_tool", call); !strings.Contains(got, `The MCP server "slow" failed to start`) || !strings.Contains(got, "Cannot find module '/x.js'") {
		t.Errorf("call to a failed source's tool = %q", got)
	}

	// Nothing ever comes: the wait ends at its bound.
	short, _ := pendingGateway(t, gateway.Options{Mode: expose.Flat, StartWait: time.Millisecond})
	sc := connect(t, short, "other")
	_, text := sc.call(t, "slow_tool", map[string]any{})
	if !strings.Contains(text, `Still starting after`) || !strings.Contains(text, `"slow"`) {
		t.Errorf("call after the wait = %q", text)
	}
}

// An unknown name is put down to the failed source whose prefix it bears,
// separator included: a failed "git" does not claim "github__x", and a
// source with a custom prefix claims its names.
func TestPendingSourceFailureNamesTheSourceByItsPrefix(t *testing.T) {
	spec := catalog.Spec{
		Tools: []*catalog.Tool{catalogtest.Tool("u")},
		UnavailableSources: map[string]string{
			"git": "git failed: no repository", "github": "github failed: bad token", "custom": "custom failed: no such command",
		},
		SourcePrefixes: map[string]string{"git": "git__", "github": "github__", "custom": "cx__"},
	}
	g := specGateway(t, spec, &gateway.Options{Mode: expose.Flat})
	c := connect(t, g, "other")
	tests := []struct {
		name     string
		named    []string
		notNamed []string
	}{
		{"github__create_issue", []string{`"github"`, "bad token"}, []string{`"git"`, `"custom"`}},
		{"git__log", []string{`"git"`, "no repository"}, []string{`"github"`, `"custom"`}},
		{"cx__run", []string{`"custom"`, "no such command"}, []string{`"git"`, `"github"`}},
		{"custom__run", []string{`"git"`, `"github"`, `"custom"`}, nil}, // not its prefix: every failure is named
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, text := c.call(t, tt.name, map[string]any{})
			for _, want := range tt.named {
				if !strings.Contains(text, want) {
					t.Errorf("the answer does not name %s:\n%s", want, text)
				}
			}
			for _, not := range tt.notNamed {
				if strings.Contains(text, "The MCP server "+not) {
					t.Errorf("the answer blames %s:\n%s", not, text)
				}
			}
		})
	}
}

// The first tools/list of a client that would not refresh waits for a
// source still starting at most MaxListWait, even when the start wait is
// longer: clients give up on a request sooner. Calls still wait the whole
// start wait.
func TestPendingSourceListWaitIsCapped(t *testing.T) {
	g, waits := pendingGateway(t, gateway.Options{Mode: expose.Flat, StartWait: time.Hour})
	gateway.SetMaxListWait(g, time.Millisecond)
	c := connect(t, g, "other")
	if got := await(t, "tools/list", goList(c.ClientSession)); got != "u" {
		t.Errorf("the list after its wait = %q, want the tools known so far", got)
	}
	waiting(t, waits, 1) // the list did wait
	call := goCall(c.ClientSession, "slow_tool", map[string]any{})
	waiting(t, waits, 1)
	if err := g.Update(slowSpace(t, []string{"slow_tool"}, "")); err != nil {
		t.Fatal(err)
	}
	if got := await(t, "slow_tool", call); got != "slow_tool {}" {
		t.Errorf("call = %q", got)
	}
}

// TestLimitedHandlerTakesAGroupStillToCome: a token limited to a group
// that a source still starting may bring (one derived from its tools) is
// served as a client without a limit is: its first list waits for the
// source, and then reaches the group's tools, and no others of the
// source.
func TestLimitedHandlerTakesAGroupStillToCome(t *testing.T) {
	g, waits := pendingGateway(t, gateway.Options{Mode: expose.Flat})
	h, err := g.LimitedHandler([]string{"slow.part"}, false, nil)
	if err != nil {
		t.Fatalf("a limit to a group still to come was refused: %v", err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	// A session of its own, which lists afresh (a 2026-07-28 client may
	// answer a list from its cache).
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "x"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: srv.URL}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	list := goList(cs)
	waiting(t, waits, 1) // the list waits for slow, as without a limit
	if err := g.Update(slowWithPart(t)); err != nil {
		t.Fatal(err)
	}
	if got := await(t, "list once slow started", list); got != "p,u" {
		t.Errorf("the list that waited for slow = %q, want slow.part's p and the ungrouped u", got)
	}
	if got := await(t, "list once slow started", goList(cs)); got != "p,u" {
		t.Errorf("once slow started the limited view lists %q, want slow.part's p and the ungrouped u", got)
	}
	// A group nothing may bring any more is still refused.
	if _, err := g.LimitedHandler([]string{"slow.pard"}, false, nil); err == nil || !strings.Contains(err.Error(), `did you mean "slow.part"`) {
		t.Errorf("a limit to a group that cannot come: %v", err)
	}
}

// TestLimitedViewWaitsForItsSources: a client limited to groups (a token's
// reach) is answered as one without a limit while a source of its groups
// starts: find_tools and call_tool wait for the tools and then answer.
func TestLimitedViewWaitsForItsSources(t *testing.T) {
	g, waits := pendingGateway(t, gateway.Options{Mode: expose.Search})
	limited := func(groups ...string) *mcp.ClientSession {
		h, err := g.LimitedHandler(groups, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "other"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: srv.URL}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	cs := limited("slow")
	callTool := goCall(cs, "call_tool", map[string]any{"name": "slow_tool", "arguments": map[string]any{}})
	find := goCall(cs, "find_tools", map[string]any{"query": "slow_tool"})
	waiting(t, waits, 2)
	if err := g.Update(slowSpace(t, []string{"slow_tool"}, "")); err != nil {
		t.Fatal(err)
	}
	if got := await(t, "call_tool", callTool); got != "slow_tool {}" {
		t.Errorf("call_tool of a limited client = %q, want the tool's answer once it started", got)
	}
	if got := await(t, "find_tools", find); !strings.Contains(got, `"slow_tool"`) {
		t.Errorf("find_tools of a limited client = %s", got)
	}
}

// A gateway that starts on a stand-in catalog (Options.Building) answers
// initialize at once and holds every other request, even a refreshing
// client's list, which a starting source would not hold, until the real
// catalog comes; then nobody is told list_changed, since nobody was
// answered from the stand-in.
func TestBuildingGatewayHoldsAllButTheHandshake(t *testing.T) {
	for _, mode := range []expose.Mode{expose.Flat, expose.Groups, expose.Search} {
		t.Run(string(mode), func(t *testing.T) {
			g, waits := pendingGateway(t, gateway.Options{Mode: mode, Building: true, RefreshingClients: []string{"refresher"}})
			c := connect(t, g, "refresher") // initialize is answered
			// So is a 2026-07-28 client's server/discover.
			connectAt(t, g, "modern", "2026-07-28", nil)
			if n := len(waits); n != 0 {
				t.Fatalf("%d handshake requests waited for the catalog", n)
			}
			list := goList(c.ClientSession)
			waiting(t, waits, 1)
			if err := g.Update(slowSpace(t, []string{"slow_tool"}, "")); err != nil {
				t.Fatal(err)
			}
			got := await(t, "tools/list", list)
			if mode == expose.Flat && got != "slow_tool,u" {
				t.Errorf("the list held for the catalog = %q, want slow_tool,u", got)
			}
			if got == "" {
				t.Error("the held list came back empty")
			}
			c.quiet(t)
			// From then on, changes are told as always.
			if err := g.Update(slowSpace(t, []string{"slow_tool", "slow_two"}, "")); err != nil {
				t.Fatal(err)
			}
			if mode != expose.Search {
				c.waitChanged(t)
			}
		})
	}
}

// A part of a building gateway (a token's limited view, a group's
// endpoint) holds as the gateway does while the catalog is built, and
// once it is, a part made then holds nothing.
func TestBuildingGatewayPartsHoldOnlyWhileBuilding(t *testing.T) {
	g, waits := pendingGateway(t, gateway.Options{Mode: expose.Flat, Building: true})
	listVia := func(h http.Handler) <-chan outcome {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "x"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: srv.URL}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return goList(cs)
	}
	early, err := g.LimitedHandler(nil, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	held := listVia(early)
	waiting(t, waits, 1)
	if err := g.Update(slowSpace(t, []string{"slow_tool"}, "")); err != nil {
		t.Fatal(err)
	}
	if got := await(t, "the limited list held while building", held); got != "slow_tool,u" {
		t.Errorf("the limited list held while building = %q, want slow_tool,u", got)
	}
	late, err := g.GroupHandler("slow", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := await(t, "a group endpoint's list after the build", listVia(late)); got != "slow_tool" {
		t.Errorf("the group endpoint lists %q, want slow_tool", got)
	}
	if n := len(waits); n != 0 {
		t.Errorf("%d requests waited for a catalog already built", n)
	}
}

// A client whose session is made just as the catalog changes (a pending
// start's first catalog comes as clients connect) is served the new one:
// an Update between the session's making and its tracking does not leave
// it on the old catalog.
func TestSessionMadeDuringAnUpdateMovesToIt(t *testing.T) {
	g, _ := pendingGateway(t, gateway.Options{Mode: expose.Groups, Building: true})
	spec := catalog.Spec{Tools: []*catalog.Tool{catalogtest.Tool("u")},
		Groups: []catalog.GroupSpec{{ID: "slow", Description: "Slow", Members: catalog.Members{Sources: []string{"slow"}}}}}
	tool := catalogtest.Tool("slow_tool")
	tool.Source = "slow"
	spec.Tools = append(spec.Tools, tool)
	built, err := view.NewSpace(catalogtest.Build(t, spec), &view.Options{InitialGroups: []catalog.GroupID{"slow"}})
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	gateway.BeforeTrack(g, func() {
		once.Do(func() {
			if err := g.Update(built); err != nil {
				t.Error(err)
			}
		})
	})
	c := connect(t, g, "other")
	if got := c.names(t); !strings.Contains(got, "slow_tool") {
		t.Errorf("the first list = %q, want the initial group's slow_tool from the catalog that came as the session was made", got)
	}
	c.quiet(t)
}

// A client of the grouping extension that cannot hear
// groups/list_changed (every one but a stdio 2025-11-25 session) is
// answered groups/list once the sources still starting have come, with
// the groups they bring, as a first tools/list is.
func TestGroupsListWaitsForStartingSources(t *testing.T) {
	g, waits := pendingGateway(t, gateway.Options{Mode: expose.Flat})
	c := extClient(t, g, "2026-07-28")
	listed := make(chan string, 1)
	go func() {
		res, err := mcp.CallCustomMethod[*groupsext.ListParams, *groupsext.ListResult](context.Background(), c.ClientSession, groupsext.MethodList, &groupsext.ListParams{})
		if err != nil {
			listed <- err.Error()
			return
		}
		var names []string
		for _, gr := range res.Groups {
			names = append(names, gr.Name)
		}
		listed <- strings.Join(names, ",")
	}()
	waiting(t, waits, 1)
	if err := g.Update(slowWithPart(t)); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-listed:
		if !strings.Contains(got, "slow-part") {
			t.Errorf("groups/list = %q, want slow-part, which came with the source", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("groups/list never answered")
	}
}

// slowWithPart is the catalog once slow has started and brought tools p
// and s, p in slow.part, a group derived from its tools.
func slowWithPart(t *testing.T) *view.Space {
	t.Helper()
	spec := catalog.Spec{Tools: []*catalog.Tool{catalogtest.Tool("u")}, Groups: []catalog.GroupSpec{
		{ID: "slow", Members: catalog.Members{Sources: []string{"slow"}}},
		{ID: "slow.part", Parent: "slow", Derived: true, Members: catalog.Members{Tools: []catalog.ToolID{"p"}}},
	}}
	for _, id := range []string{"p", "s"} {
		tool := catalogtest.Tool(id)
		tool.Source = "slow"
		spec.Tools = append(spec.Tools, tool)
	}
	space, err := view.NewSpace(catalogtest.Build(t, spec), nil)
	if err != nil {
		t.Fatal(err)
	}
	return space
}
