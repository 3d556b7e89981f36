package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// session is a Go SDK client connected to the toolfold binary.
type session struct {
	*mcp.ClientSession
	t       *testing.T
	changed chan struct{}
	count   atomic.Int32
}

func newClient(t *testing.T, name string) (*mcp.Client, *session) {
	s := &session{t: t, changed: make(chan struct{}, 16)}
	c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1.0.0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			s.count.Add(1)
			s.changed <- struct{}{}
		},
	})
	return c, s
}

// stdioSession spawns `toolfold serve args...` and connects to it.
func stdioSession(t *testing.T, name string, args ...string) *session {
	t.Helper()
	return stdioSessionEnv(t, name, nil, args...)
}

// statefulProtocol is what the Go clients here speak unless a test says
// otherwise: the protocol with sessions, on which a groups-mode client has
// a view that enable_tools unfolds. (On 2026-07-28 nothing varies per
// connection; the tests of that era name it.)
const statefulProtocol = "2025-11-25"

// stdioSessionEnv is stdioSession with extra environment variables.
func stdioSessionEnv(t *testing.T, name string, environ []string, args ...string) *session {
	t.Helper()
	return stdioSessionAt(t, name, statefulProtocol, environ, args...)
}

// stdioSessionAt is stdioSessionEnv on a given protocol.
func stdioSessionAt(t *testing.T, name, protocol string, environ []string, args ...string) *session {
	t.Helper()
	c, s := newClient(t, name)
	cmd := exec.Command(binary, serveArgs(args...)...)
	cmd.Env = append(append(cmd.Environ(), "TOOLFOLD_DEMO_SANDBOX="+t.TempDir()), environ...)
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatalf("connecting to toolfold over stdio: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	s.ClientSession = cs
	return s
}

// httpSession connects to a running toolfold over streamable HTTP.
func httpSession(t *testing.T, base, name string) *session {
	t.Helper()
	return httpSessionAt(t, base, name, statefulProtocol)
}

// httpSessionAt is httpSession on a given protocol.
func httpSessionAt(t *testing.T, base, name, protocol string) *session {
	t.Helper()
	c, s := newClient(t, name)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatalf("connecting to toolfold over HTTP: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	s.ClientSession = cs
	return s
}

func (s *session) names() string {
	s.t.Helper()
	return toolNames(s.t, s.ClientSession)
}

// toolNames is a client's tool list, sorted and joined with commas.
func toolNames(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tl := range res.Tools {
		out = append(out, tl.Name)
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

func (s *session) call(name string, args any) (bool, string) {
	s.t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		s.t.Fatalf("tools/call %s: %v", name, err)
	}
	return res.IsError, resultText(res)
}

// callData is call with the result's data: its structuredContent as JSON
// (a meta-tool's), else its text.
func (s *session) callData(name string, args any) (bool, string) {
	s.t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		s.t.Fatalf("tools/call %s: %v", name, err)
	}
	return res.IsError, resultData(res)
}

// resultData is a result's structuredContent as JSON, or its text when it
// has none: what a program reads of a meta-tool's answer.
func resultData(res *mcp.CallToolResult) string {
	if res.StructuredContent == nil {
		return resultText(res)
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return resultText(res)
	}
	return string(b)
}

// resultText is a result's text content, joined with newlines.
func resultText(res *mcp.CallToolResult) string {
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	return strings.Join(text, "\n")
}

func (s *session) mustCall(name string, args any) string {
	s.t.Helper()
	isErr, text := s.call(name, args)
	if isErr {
		s.t.Fatalf("%s failed: %s", name, text)
	}
	return text
}

// mustData calls a meta-tool that must succeed and returns its data, the
// structuredContent as JSON: its text block is prose for a model.
func (s *session) mustData(name string, args any) string {
	s.t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil || res.IsError {
		s.t.Fatalf("%s failed: %v %s", name, err, resultText(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		s.t.Fatal(err)
	}
	return string(b)
}

func (s *session) waitChanged() {
	s.t.Helper()
	select {
	case <-s.changed:
	case <-time.After(10 * time.Second):
		s.t.Fatal("no notifications/tools/list_changed arrived")
	}
	s.quiet()
}

func (s *session) quiet() {
	s.t.Helper()
	select {
	case <-s.changed:
		s.t.Fatal("an unexpected notifications/tools/list_changed arrived")
	case <-time.After(300 * time.Millisecond):
	}
}

const groupsInitial = "about,call_tool,disable_tools,enable_tools,find_tools"

// unfold runs the groups-mode flow every client must get right.
func unfold(t *testing.T, s *session) {
	if got := s.names(); got != groupsInitial {
		t.Fatalf("initial tools/list = %q, want %q", got, groupsInitial)
	}
	if !s.InitializeResult().Capabilities.Tools.ListChanged {
		t.Error("the groups mode must announce tools.listChanged")
	}

	// A hidden tool names the fix.
	isErr, text := s.call("put_note", map[string]any{"key": "k", "text": "v"})
	if !isErr || !strings.Contains(text, `Call enable_tools with {"groups":["notes"]}`) {
		t.Fatalf("hidden tool: isError=%v %s", isErr, text)
	}

	// call_tool reaches it without enabling anything.
	text = s.mustCall("call_tool", map[string]any{"name": "calculate", "arguments": map[string]any{"expression": "2 + 3 * 4"}})
	if !strings.Contains(text, `"value":14`) {
		t.Errorf("calculate through call_tool = %s", text)
	}
	s.quiet()

	text = s.mustData("enable_tools", map[string]any{"groups": []string{"notes"}})
	var res struct {
		Enabled      []string          `json:"enabled"`
		Instructions map[string]string `json:"instructions"`
		Tools        []struct{ Name string }
	}
	if err := json.Unmarshal([]byte(text), &res); err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Enabled, ",") != "notes" || !strings.Contains(res.Instructions["notes"], "lost when the server stops") || len(res.Tools) != 5 {
		t.Errorf("enable result = %s", text)
	}
	s.waitChanged()
	if got := s.names(); got != "about,call_tool,delete_note,disable_tools,enable_tools,find_tools,get_note,list_notes,put_note,search_notes" {
		t.Errorf("after enabling notes: %q", got)
	}
	s.mustCall("put_note", map[string]any{"key": "todo", "text": "write the tests"})
	if text := s.mustCall("get_note", map[string]any{"key": "todo"}); !strings.Contains(text, `"text":"write the tests"`) {
		t.Errorf("get_note = %s", text)
	}
	s.mustCall("disable_tools", map[string]any{"groups": []string{"notes"}})
	s.waitChanged()
	if got := s.names(); got != groupsInitial {
		t.Errorf("after disabling: %q", got)
	}
}

func TestStdioGoClient(t *testing.T) {
	s := stdioSession(t, "e2e-go", "--mode", "groups")
	unfold(t, s)
}

func TestHTTPTwoSessions(t *testing.T) {
	base := startHTTP(t, "--mode", "groups")
	one, two := httpSession(t, base, "one"), httpSession(t, base, "two")
	if got := two.names(); got != groupsInitial {
		t.Fatalf("second session's initial list = %q", got)
	}
	unfold(t, one)
	// The whole time, the other session heard nothing and kept its list.
	if n := two.count.Load(); n != 0 {
		t.Errorf("the other session got %d list_changed notifications", n)
	}
	if got := two.names(); got != groupsInitial {
		t.Errorf("the other session's list changed: %q", got)
	}
	// Views are separate: enabling in two does not show in one.
	two.mustCall("enable_tools", map[string]any{"groups": []string{"math"}})
	two.waitChanged()
	if got := one.names(); strings.Contains(got, "calculate") {
		t.Errorf("session one sees session two's group: %q", got)
	}
}

func TestStdioModes(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--mode", "search"}, "about,call_tool,describe_tools,find_tools,guidance"},
		{[]string{"--mode", "grouped"}, "about,files,json,math,notes,text,time"},
		{[]string{"--mode", "groups", "--groups", "math"}, "about,calculate,call_tool,convert_base,convert_units,disable_tools,enable_tools,find_tools,statistics"},
		{[]string{"--mode", "flat", "--exclude-groups", "files,text", "--read-only"}, "about,calculate,convert_base,convert_units,current_time,format_time,get_note,json_diff,json_format,json_query,json_validate,list_notes,parse_time,search_notes,statistics,time_between,add_duration,convert_time_zone"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			s := stdioSession(t, "e2e-go", tt.args...)
			want := strings.Split(tt.want, ",")
			slices.Sort(want)
			if got := s.names(); got != strings.Join(want, ",") {
				t.Errorf("tools/list = %q, want %q", got, strings.Join(want, ","))
			}
		})
	}
}
