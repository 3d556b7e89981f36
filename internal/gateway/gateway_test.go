package gateway_test

import (
	"context"
	"encoding/json"
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
	"github.com/toolfold/toolfold/internal/view"
)

// client is a connected test client that collects list_changed
// notifications; server is the gateway's end of its session.
type client struct {
	*mcp.ClientSession
	server  *mcp.ServerSession
	changed chan struct{}
}

func newGateway(t testing.TB, opts gateway.Options, vopts *view.Options) *gateway.Gateway {
	t.Helper()
	space, err := view.NewSpace(catalogtest.Tree(t), vopts)
	if err != nil {
		t.Fatal(err)
	}
	g, err := gateway.New(space, &opts)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// specGateway serves the catalog built from spec, with opts.
func specGateway(t *testing.T, spec catalog.Spec, opts *gateway.Options) *gateway.Gateway {
	t.Helper()
	space, err := view.NewSpace(catalogtest.Build(t, spec), nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := gateway.New(space, opts)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func connect(t *testing.T, g *gateway.Gateway, name string) *client {
	t.Helper()
	c := &client{changed: make(chan struct{}, 16)}
	// The stateful protocol: a 2026-07-28 client has no view to unfold.
	c.ClientSession, c.server = connectBoth(t, g, name, "2025-11-25", &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			c.changed <- struct{}{}
		},
	})
	return c
}

// connectAt connects a client over in-memory transports on protocol ("":
// the SDK's newest), with opts (may be nil); both ends close with the test.
func connectAt(t *testing.T, g *gateway.Gateway, name, protocol string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cs, _ := connectBoth(t, g, name, protocol, opts)
	return cs
}

// connectBoth is connectAt that also returns the gateway's end.
func connectBoth(t *testing.T, g *gateway.Gateway, name, protocol string, opts *mcp.ClientOptions) (*mcp.ClientSession, *mcp.ServerSession) {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := g.Connect(ctx, gateway.ClientInfo{Name: name, ProtocolVersion: protocol}, st)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	var sessionOpts *mcp.ClientSessionOptions
	if protocol != "" {
		sessionOpts = &mcp.ClientSessionOptions{ProtocolVersion: protocol}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name}, opts).Connect(ctx, ct, sessionOpts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, ss
}

func (c *client) names(t *testing.T) string {
	t.Helper()
	res, err := c.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return toolNames(res.Tools)
}

func (c *client) call(t *testing.T, name string, args any) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res, answer(res)
}

// structured is a result's structuredContent as JSON.
func structured(res *mcp.CallToolResult) []byte {
	b, _ := json.Marshal(res.StructuredContent)
	return b
}

// answer is what tests read of a result: a meta-tool's data, its
// structuredContent as JSON (keys sorted, as the client decoded it; the
// text block is prose for a model), then every text block.
func answer(res *mcp.CallToolResult) string {
	var text []string
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		text = append(text, string(b))
	}
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	return strings.Join(text, "\n")
}

// The gateway writes a list_changed before the result of the call that
// caused it, and before Update returns. So once a call or an Update is
// over, settle makes sure the client has handled all of them: the client
// handles what it receives in order, notifications to the end before the
// next request, so when it has answered a ping sent from the gateway's end
// after them, every one of them has been put in c.changed.
func (c *client) settle(t *testing.T) {
	t.Helper()
	if err := c.server.Ping(context.Background(), nil); err != nil {
		t.Fatalf("ping from the gateway's end: %v", err)
	}
}

// waitChanged asserts that the change just made was announced, once.
func (c *client) waitChanged(t *testing.T) {
	t.Helper()
	c.settle(t)
	if n := len(c.changed); n != 1 {
		t.Fatalf("%d notifications/tools/list_changed for one change, want 1", n)
	}
	<-c.changed
}

// quiet asserts that nothing done so far was announced.
func (c *client) quiet(t *testing.T) {
	t.Helper()
	c.settle(t)
	if n := len(c.changed); n != 0 {
		t.Fatalf("%d unexpected notifications/tools/list_changed", n)
	}
}

func TestGroupsModeUnfoldsPerClient(t *testing.T) {
	g := newGateway(t, gateway.Options{Mode: expose.Groups}, nil)
	one, two := connect(t, g, "one"), connect(t, g, "two")
	const initial = "call_tool,disable_tools,enable_tools,find_tools,u"
	if got := one.names(t); got != initial {
		t.Fatalf("initial list = %q, want %q", got, initial)
	}

	res, text := one.call(t, "enable_tools", map[string]any{"groups": []string{"code", "code.repos"}})
	if res.IsError {
		t.Fatalf("enable failed: %s", text)
	}
	var er struct {
		Enabled      []string          `json:"enabled"`
		Instructions map[string]string `json:"instructions"`
		Tools        []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
		AvailableGroups []struct{ Name string } `json:"available_groups"`
	}
	if err := json.Unmarshal(structured(res), &er); err != nil {
		t.Fatalf("structuredContent does not decode: %v\n%s", err, text)
	}
	// The text block is for a model: prose, not the JSON again.
	if prose := res.Content[0].(*mcp.TextContent).Text; json.Valid([]byte(prose)) || !strings.Contains(prose, "Enabled: code, code.repos.") {
		t.Errorf("the text block is not the readable answer: %s", prose)
	}
	if strings.Join(er.Enabled, ",") != "code,code.repos" || er.Instructions["code.repos"] != "Mind the default branch." || len(er.Tools) != 4 {
		t.Errorf("enable result = %+v", er)
	}
	one.waitChanged(t)
	two.quiet(t)
	if got := one.names(t); got != "a,b,c,call_tool,d,disable_tools,enable_tools,find_tools,u" {
		t.Errorf("after enable: %q", got)
	}
	if got := two.names(t); got != initial {
		t.Errorf("the other client's list changed: %q", got)
	}

	// Nothing changes: no notification.
	res, text = one.call(t, "enable_tools", map[string]any{"groups": []string{"code"}})
	if !res.IsError || !strings.Contains(text, "already_enabled") {
		t.Errorf("re-enable: %v %s", res.IsError, text)
	}
	one.quiet(t)

	// Disable cascades and notifies once.
	_, text = one.call(t, "disable_tools", map[string]any{"groups": []string{"code"}})
	if !strings.Contains(text, `"disabled":["code","code.repos"]`) {
		t.Errorf("disable: %s", text)
	}
	one.waitChanged(t)
	if got := one.names(t); got != initial {
		t.Errorf("after disable: %q", got)
	}
}

// TestEnableToolsDescribesEachView: the sessions of the groups mode share
// the meta-tools' definitions while their views are as they began, and
// enable_tools describes a view that changed by what that view can enable.
func TestEnableToolsDescribesEachView(t *testing.T) {
	g := newGateway(t, gateway.Options{Mode: expose.Groups}, nil)
	one, two := connect(t, g, "one"), connect(t, g, "two")
	describe := func(c *client) string {
		t.Helper()
		res, err := c.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range res.Tools {
			if tl.Name == "enable_tools" {
				return tl.Description
			}
		}
		t.Fatal("no enable_tools listed")
		return ""
	}
	initial := describe(one)
	if !strings.Contains(initial, "\n- code ") || strings.Contains(initial, "code.repos") {
		t.Fatalf("the initial description does not offer code alone:\n%s", initial)
	}
	if got := describe(two); got != initial {
		t.Fatalf("two fresh sessions describe enable_tools apart:\n%s\n---\n%s", got, initial)
	}
	if res, text := one.call(t, "enable_tools", map[string]any{"groups": []string{"code"}}); res.IsError {
		t.Fatalf("enable failed: %s", text)
	}
	one.waitChanged(t)
	if got := describe(one); !strings.Contains(got, "\n- code.repos ") || strings.Contains(got, "\n- code ") {
		t.Errorf("after enabling code, enable_tools does not offer code.repos alone:\n%s", got)
	}
	if got := describe(two); got != initial {
		t.Errorf("the other session's enable_tools changed:\n%s", got)
	}
	if res, text := one.call(t, "disable_tools", map[string]any{"groups": []string{"code"}}); res.IsError {
		t.Fatalf("disable failed: %s", text)
	}
	one.waitChanged(t)
	if got := describe(one); got != initial {
		t.Errorf("after disabling code again, enable_tools reads:\n%s\nwant as it began:\n%s", got, initial)
	}
}

func TestHiddenToolNamesTheFix(t *testing.T) {
	g := newGateway(t, gateway.Options{Mode: expose.Groups}, nil)
	c := connect(t, g, "x")
	res, text := c.call(t, "e", map[string]any{})
	if !res.IsError {
		t.Fatal("calling a hidden tool succeeded")
	}
	for _, want := range []string{`e is in the group "code.repos.br", which is not enabled`, `Call enable_tools with {"groups":["code","code.repos","code.repos.br"]}`, "call_tool"} {
		if !strings.Contains(text, want) {
			t.Errorf("message lacks %q:\n%s", want, text)
		}
	}
	// With the parent enabled the fix is shorter.
	c.call(t, "enable_tools", map[string]any{"groups": []string{"code", "code.repos"}})
	c.waitChanged(t)
	_, text = c.call(t, "e", map[string]any{})
	if !strings.Contains(text, `{"groups":["code.repos.br"]}`) {
		t.Errorf("message does not reuse enabled parents:\n%s", text)
	}
}

func TestCallToolWorksWithoutEnabling(t *testing.T) {
	g := newGateway(t, gateway.Options{Mode: expose.Groups}, nil)
	c := connect(t, g, "x")
	res, text := c.call(t, "call_tool", map[string]any{"name": "e", "arguments": map[string]any{"x": "hi"}})
	if res.IsError || text != `e {"x":"hi"}` {
		t.Fatalf("call_tool: %v %q", res.IsError, text)
	}
	c.quiet(t)
	if got := c.names(t); got != "call_tool,disable_tools,enable_tools,find_tools,u" {
		t.Errorf("call_tool changed the list: %q", got)
	}
	res, text = c.call(t, "call_tool", map[string]any{"name": "e", "arguments": map[string]any{"x": 5}})
	if !res.IsError || !strings.Contains(text, "argument x") {
		t.Errorf("bad arguments through call_tool: %v %q", res.IsError, text)
	}
}

func TestUnknownToolNamesNearest(t *testing.T) {
	g := newGateway(t, gateway.Options{Mode: expose.Groups}, nil)
	c := connect(t, g, "x")
	res, text := c.call(t, "enable_tool", map[string]any{})
	if !res.IsError || !strings.Contains(text, `there is no tool "enable_tool"; the nearest are "enable_tools"`) {
		t.Errorf("%v %q", res.IsError, text)
	}
}

func TestMaxToolsInDescriptionAndErrors(t *testing.T) {
	g := newGateway(t, gateway.Options{Mode: expose.Groups}, &view.Options{MaxTools: 3})
	c := connect(t, g, "x")
	res, err := c.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var desc string
	for _, tl := range res.Tools {
		if tl.Name == "enable_tools" {
			desc = tl.Description
		}
	}
	for _, want := range []string{"- code (2 tools), 1 group inside: Code", "- docs (2 tools): Documents", "At most 3 grouped tools can be enabled at once; 0 are now."} {
		if !strings.Contains(desc, want) {
			t.Errorf("enable_tools description lacks %q:\n%s", want, desc)
		}
	}
	_, text := c.call(t, "enable_tools", map[string]any{"groups": []string{"code", "code.repos"}})
	if !strings.Contains(text, `"reason":"over_limit"`) || !strings.Contains(text, `"count":4,"group":"code.repos","limit":3`) {
		t.Errorf("over limit: %s", text)
	}
}

func TestStaticModes(t *testing.T) {
	tests := []struct {
		mode expose.Mode
		list string
	}{
		{expose.Flat, "a,b,c,d,e,f,u"},
		{expose.Grouped, "code,docs,u"},
		{expose.Search, "call_tool,describe_tools,find_tools,guidance,u"},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			g := newGateway(t, gateway.Options{Mode: tt.mode}, nil)
			c := connect(t, g, "x")
			if got := c.names(t); got != tt.list {
				t.Errorf("list = %q, want %q", got, tt.list)
			}
			if !c.InitializeResult().Capabilities.Tools.ListChanged {
				t.Error("every mode announces list_changed: the catalog itself can change")
			}
		})
	}
	g := newGateway(t, gateway.Options{Mode: expose.Grouped}, nil)
	c := connect(t, g, "x")
	res, text := c.call(t, "code", map[string]any{"action": "repos.br.e", "x": "y"})
	if res.IsError || text != `e {"x":"y"}` {
		t.Errorf("grouped call: %v %q", res.IsError, text)
	}
	res, text = c.call(t, "code", map[string]any{"action": "nope"})
	if !res.IsError || !strings.Contains(text, `Set "action" to one of: a, b, repos.c, repos.d, repos.br.e`) {
		t.Errorf("unknown action: %v %q", res.IsError, text)
	}
}

func TestAutoModeByClientName(t *testing.T) {
	g := newGateway(t, gateway.Options{Mode: expose.Auto, RefreshingClients: []string{"Refresher"}}, nil)
	tests := []struct {
		info gateway.ClientInfo
		want expose.Mode
	}{
		{gateway.ClientInfo{Name: "refresher"}, expose.Groups},
		{gateway.ClientInfo{Name: "claude-ai"}, expose.Search},
		// A 2026-07-28 client's list must not vary per connection.
		{gateway.ClientInfo{Name: "refresher", ProtocolVersion: "2026-07-28"}, expose.Search},
		{gateway.ClientInfo{Name: "refresher", Stateless: true}, expose.Search},
	}
	for _, tt := range tests {
		if got := g.ModeFor(tt.info); got != tt.want {
			t.Errorf("ModeFor(%+v) = %s, want %s", tt.info, got, tt.want)
		}
	}
	def := newGateway(t, gateway.Options{Mode: expose.Auto}, nil)
	for name, want := range map[string]expose.Mode{
		// Clients that search their tools themselves get them all.
		"claude-code": expose.Flat, "Visual Studio Code - Insiders": expose.Flat, "codex-mcp-client": expose.Flat,
		"cline":     expose.Groups,
		"claude-ai": expose.Search, "cursor-vscode": expose.Search, "mcp-inspector": expose.Search, "": expose.Search,
	} {
		if got := def.ModeFor(gateway.ClientInfo{Name: name}); got != want {
			t.Errorf("default list: ModeFor(%q) = %s, want %s", name, got, want)
		}
	}
	noSearchers := newGateway(t, gateway.Options{Mode: expose.Auto, SearchingClients: []string{}}, nil)
	if got := noSearchers.ModeFor(gateway.ClientInfo{Name: "claude-code"}); got != expose.Groups {
		t.Errorf("with no searching clients, claude-code gets %s, want groups", got)
	}
	if got := def.Presentation(gateway.ClientInfo{Name: "cline", Extension: true}); got != "groups-extension" {
		t.Errorf("a client of the groups extension gets %s", got)
	}
	if got := connect(t, g, "Refresher").names(t); got != "call_tool,disable_tools,enable_tools,find_tools,u" {
		t.Errorf("refreshing client got %q", got)
	}
	if got := connect(t, g, "other").names(t); got != "call_tool,describe_tools,find_tools,guidance,u" {
		t.Errorf("other client got %q", got)
	}
}

func TestSearchModeFindDescribeCall(t *testing.T) {
	g := newGateway(t, gateway.Options{Mode: expose.Search}, nil)
	c := connect(t, g, "x")
	res, text := c.call(t, "find_tools", map[string]any{"query": "branches", "limit": 3})
	if res.IsError {
		t.Fatalf("find: %s", text)
	}
	var found struct {
		Tools []struct {
			Name, Group string
		} `json:"tools"`
		Groups []struct{ Name string } `json:"groups"`
	}
	if err := json.Unmarshal(structured(res), &found); err != nil {
		t.Fatal(err)
	}
	if len(found.Tools) == 0 || found.Tools[0].Name != "e" || found.Tools[0].Group != "code.repos.br" {
		t.Fatalf("find result = %s", text)
	}
	_, text = c.call(t, "describe_tools", map[string]any{"names": []string{"e", "nope"}})
	if !strings.Contains(text, `"name":"e"`) || !strings.Contains(text, `"inputSchema":{"properties":{"x":{"type":"string"}},"type":"object"}`) || !strings.Contains(text, `there is no tool \"nope\"`) {
		t.Errorf("describe = %s", text)
	}
	res, text = c.call(t, "call_tool", map[string]any{"name": "e", "arguments": map[string]any{"x": "1"}})
	if res.IsError || text != `e {"x":"1"}` {
		t.Errorf("call = %v %s", res.IsError, text)
	}
	res, text = c.call(t, "find_tools", map[string]any{"query": "  "})
	if !res.IsError || !strings.Contains(text, "needs a query") {
		t.Errorf("empty query: %v %s", res.IsError, text)
	}
	res, text = c.call(t, "find_tools", map[string]any{"query": "x", "group": "cod"})
	if !res.IsError || !strings.Contains(text, `there is no group "cod" (did you mean "code"?)`) {
		t.Errorf("bad group: %v %s", res.IsError, text)
	}
}

func TestGuidanceTopics(t *testing.T) {
	g := newGateway(t, gateway.Options{Mode: expose.Search}, nil)
	c := connect(t, g, "x")
	tests := []struct {
		args map[string]any
		want []string
		err  bool
	}{
		{args: map[string]any{}, want: []string{"# Tools available", "6 tools in 4 groups, plus 1 always available", "- **code** (2 tools), 1 group inside: Code"}},
		{args: map[string]any{"topic": "groups"}, want: []string{"| group | state | tools | context tokens | description |", "|     code.repos.br | available | 1 |"}},
		{args: map[string]any{"topic": "code.repos"}, want: []string{"# Group code.repos", "## Instructions\n\nMind the default branch.", "| c | Tool c |", "- **code.repos.br** (1 tool): Branches"}},
		{args: map[string]any{"topic": "tool", "tool_name": "a"}, want: []string{"# a", "| x | string | no |", "In group code, docs."}},
		{args: map[string]any{"topic": "cod"}, err: true, want: []string{`there is no topic "cod" (did you mean "code"?)`}},
	}
	for _, tt := range tests {
		res, text := c.call(t, "guidance", tt.args)
		if res.IsError != tt.err {
			t.Errorf("guidance %v: isError = %v: %s", tt.args, res.IsError, text)
		}
		for _, w := range tt.want {
			if !strings.Contains(text, w) {
				t.Errorf("guidance %v lacks %q:\n%s", tt.args, w, text)
			}
		}
	}
}

func TestStatelessClients(t *testing.T) {
	g := newGateway(t, gateway.Options{Mode: expose.Groups}, nil)
	if got := g.Presentation(gateway.ClientInfo{Name: "claude-code", Stateless: true}); got != "groups-stateless" {
		t.Errorf("a stateless client in the groups mode gets %s, want the meta-tools without a view", got)
	}
	if _, err := g.HTTPHandler(&gateway.HTTPOptions{Stateless: true}); err != nil {
		t.Errorf("a stateless endpoint in the groups mode: %v", err)
	}
	auto := newGateway(t, gateway.Options{}, nil)
	if _, err := auto.HTTPHandler(&gateway.HTTPOptions{Stateless: true}); err != nil {
		t.Errorf("a stateless endpoint in the auto mode: %v", err)
	}
	if got := auto.ModeFor(gateway.ClientInfo{Name: "cline", Stateless: true}); got != expose.Search {
		t.Errorf("auto, stateless: %s", got)
	}
	if got := newGateway(t, gateway.Options{Mode: expose.Flat}, nil).ModeFor(gateway.ClientInfo{Stateless: true}); got != expose.Flat {
		t.Errorf("a static mode stays as configured for stateless clients: %s", got)
	}
}

func TestResetToolsSetsTheFinalState(t *testing.T) {
	g := newGateway(t, gateway.Options{Mode: expose.Groups, ResetTools: true}, nil)
	c := connect(t, g, "x")
	if got := c.names(t); !strings.Contains(got, "reset_tools") {
		t.Fatalf("reset_tools is not offered: %q", got)
	}
	c.call(t, "enable_tools", map[string]any{"groups": []string{"docs"}})
	c.waitChanged(t)
	res, text := c.call(t, "reset_tools", map[string]any{"code": true, "code.repos": true})
	if res.IsError {
		t.Fatalf("reset: %s", text)
	}
	for _, want := range []string{`"enabled":["code","code.repos"]`, `"disabled":["docs"]`, `"instructions":{"code.repos":"Mind the default branch."}`} {
		if !strings.Contains(text, want) {
			t.Errorf("reset result lacks %s: %s", want, text)
		}
	}
	c.waitChanged(t)
	if got := c.names(t); got != "a,b,c,call_tool,d,disable_tools,enable_tools,find_tools,reset_tools,u" {
		t.Errorf("after reset: %q", got)
	}
	res, text = c.call(t, "reset_tools", map[string]any{"code": "yes"})
	if !res.IsError || !strings.Contains(text, `every value must be true or false ("code" is not)`) {
		t.Errorf("bad reset arguments: %v %s", res.IsError, text)
	}
	// With several wrong values, the first by name is named, every time.
	for range 5 {
		res, text = c.call(t, "reset_tools", map[string]any{"code": true, "e": 1, "d": "no", "c": []int{}, "b": nil, "a1": "x"})
		if !res.IsError || !strings.Contains(text, `("a1" is not)`) {
			t.Fatalf("bad reset arguments name another key than the first: %s", text)
		}
	}
	// Off by default.
	if got := connect(t, newGateway(t, gateway.Options{Mode: expose.Groups}, nil), "y").names(t); strings.Contains(got, "reset_tools") {
		t.Errorf("reset_tools must be off by default: %q", got)
	}
}

func TestGroupHandlerServesOneGroupAlone(t *testing.T) {
	g := newGateway(t, gateway.Options{Mode: expose.Groups}, nil)
	h, err := g.GroupHandler("code.repos", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := dialHandler(t, h, "").ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(res.Tools); got != "c,d,e" {
		t.Errorf("tools = %q, want the group's and its subgroup's tools only", got)
	}
	if _, err := g.GroupHandler("cod", false, nil); err == nil || !strings.Contains(err.Error(), `did you mean "code"`) {
		t.Errorf("unknown group: %v", err)
	}
}

type recordingObserver struct {
	mu    sync.Mutex
	calls []string
	modes []string
}

func (o *recordingObserver) ToolCalled(tool, via, source, outcome string, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if via != "" {
		tool += " via " + via
	}
	o.calls = append(o.calls, tool+"|"+source+"|"+outcome)
}

func (o *recordingObserver) SessionStarted(mode string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.modes = append(o.modes, mode)
}

func TestObserverHearsCallsAndSessions(t *testing.T) {
	obs := &recordingObserver{}
	g := newGateway(t, gateway.Options{Mode: expose.Groups, Observer: obs}, nil)
	c := connect(t, g, "x")
	c.call(t, "enable_tools", map[string]any{"groups": []string{"docs"}})
	c.call(t, "f", map[string]any{"x": "1"})
	c.call(t, "f", map[string]any{"x": 1})
	c.call(t, "e", map[string]any{})
	c.call(t, "made_up_name", map[string]any{})
	c.call(t, "call_tool", map[string]any{"name": "e", "arguments": map[string]any{}})
	c.call(t, "call_tool", map[string]any{"name": "made_up_name"})
	obs.mu.Lock()
	defer obs.mu.Unlock()
	// A call through call_tool counts under the tool it reached; one that
	// reaches none counts under call_tool.
	want := "enable_tools|toolfold|ok,f||ok,f||refused,e||refused,(unknown)||refused,e via call_tool||ok,call_tool||refused"
	if got := strings.Join(obs.calls, ","); got != want {
		t.Errorf("calls = %s\nwant    %s", got, want)
	}
	if strings.Join(obs.modes, ",") != "groups" {
		t.Errorf("sessions = %v", obs.modes)
	}
}

// TestLimitedHandlerServesOnlyWhatTheLimitReaches checks the main endpoint
// as a token limited to one group sees it in the groups mode: the same
// meta-tools, but other groups can be neither enabled nor called.
func TestLimitedHandlerServesOnlyWhatTheLimitReaches(t *testing.T) {
	g := newGateway(t, gateway.Options{Mode: expose.Groups}, nil)
	h, err := g.LimitedHandler([]string{"docs"}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "claude-code"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(name string, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			return err.Error()
		}
		return answer(res)
	}
	if got := call("enable_tools", map[string]any{"groups": []string{"code"}}); !strings.Contains(got, `"reason":"unknown_group"`) || !strings.Contains(got, `"available_groups":[{"description":"Documents","name":"docs"`) {
		t.Errorf("enabling a group outside the limit: %s", got)
	}
	if got := call("call_tool", map[string]any{"name": "b", "arguments": map[string]any{}}); !strings.HasPrefix(got, `there is no tool "b"`) {
		t.Errorf("calling a tool outside the limit: %s", got)
	}
	if got := call("call_tool", map[string]any{"name": "f", "arguments": map[string]any{}}); got != "f {}" {
		t.Errorf("calling a tool inside the limit: %s", got)
	}
	if _, err := g.LimitedHandler([]string{"dos"}, false, nil); err == nil || !strings.Contains(err.Error(), `did you mean "docs"`) {
		t.Errorf("a limit naming an unknown group: %v", err)
	}
}
