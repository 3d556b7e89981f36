package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/groupsext"
)

// The demo catalog as a client of the groups extension sees it.
const (
	demoRoots       = "files,json,math,notes,text,time"
	demoTopLevel    = "about"
	groupsStateless = "about,call_tool,enable_tools,find_tools"
)

// extGoSession connects a Go SDK client to toolfold, over stdio when base
// is empty and over HTTP otherwise, on protocol, declaring the groups
// extension when extension is set.
func extGoSession(t *testing.T, base, protocol, name string, extension bool, args ...string) *session {
	t.Helper()
	opts := &mcp.ClientOptions{}
	if extension {
		opts.Capabilities = &mcp.ClientCapabilities{Extensions: map[string]any{groupsext.ID: map[string]any{}}}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1.0.0"}, opts)
	if err := mcp.AddSendingCustomMethod[*groupsext.ListParams, *groupsext.ListResult](c, groupsext.MethodList); err != nil {
		t.Fatal(err)
	}
	if err := mcp.AddSendingCustomMethod[*groupsext.GetParams, *groupsext.GetResult](c, groupsext.MethodGet); err != nil {
		t.Fatal(err)
	}
	var transport mcp.Transport
	if base == "" {
		cmd := exec.Command(binary, append([]string{"serve"}, args...)...)
		cmd.Env = append(cmd.Environ(), "TOOLFOLD_DEMO_SANDBOX="+t.TempDir())
		transport = &mcp.CommandTransport{Command: cmd}
	} else {
		transport = &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}
	}
	cs, err := c.Connect(context.Background(), transport, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatalf("connecting on %s: %v", protocol, err)
	}
	t.Cleanup(func() { cs.Close() })
	return &session{ClientSession: cs, t: t, changed: make(chan struct{}, 16)}
}

func goListGroups(t *testing.T, s *session) string {
	t.Helper()
	res, err := mcp.CallCustomMethod[*groupsext.ListParams, *groupsext.ListResult](context.Background(), s.ClientSession, groupsext.MethodList, &groupsext.ListParams{})
	if err != nil {
		t.Fatalf("groups/list: %v", err)
	}
	var names []string
	for _, g := range res.Groups {
		names = append(names, g.Name)
	}
	return strings.Join(names, ",")
}

func goGetGroup(s *session, name string) (*groupsext.GetResult, error) {
	return mcp.CallCustomMethod[*groupsext.GetParams, *groupsext.GetResult](context.Background(), s.ClientSession, groupsext.MethodGet, &groupsext.GetParams{Name: name})
}

func contentNames(r *groupsext.GetResult) (tools, groups string) {
	var ts, gs []string
	for _, t := range r.Contents.Tools {
		ts = append(ts, t.Name)
	}
	for _, g := range r.Contents.Groups {
		gs = append(gs, g.Name)
	}
	slices.Sort(ts)
	return strings.Join(ts, ","), strings.Join(gs, ",")
}

// TestGroupsExtensionEndToEnd: a client of the groups extension discovers
// and calls the demo's tools through groups/list and groups/get alone, with
// the Go and the TypeScript SDK clients, over stdio and HTTP, on both
// protocols; the same clients without the extension get the search list.
func TestGroupsExtensionEndToEnd(t *testing.T) {
	httpBase := startHTTP(t)
	for _, transport := range []string{"stdio", "http"} {
		base := ""
		if transport == "http" {
			base = httpBase
		}
		for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
			t.Run("go/"+transport+"/"+protocol, func(t *testing.T) {
				s := extGoSession(t, base, protocol, "some-agent", true)
				if got := s.names(); got != demoTopLevel {
					t.Errorf("tools/list = %q, want only the ungrouped tool", got)
				}
				if got := goListGroups(t, s); got != demoRoots {
					t.Errorf("groups/list = %q", got)
				}
				files, err := goGetGroup(s, "files")
				if err != nil {
					t.Fatal(err)
				}
				tools, groups := contentNames(files)
				if !strings.Contains(tools, "read_file") || strings.Contains(tools, "grep_files") || groups != "files-search" {
					t.Errorf("files: tools %q, groups %q", tools, groups)
				}
				if files.Instructions == "" || files.Contents.Groups[0].Title != "files.search" {
					t.Errorf("files: instructions %q, child %+v", files.Instructions, files.Contents.Groups[0])
				}
				nested, err := goGetGroup(s, "files-search")
				if err != nil {
					t.Fatal(err)
				}
				if tools, _ := contentNames(nested); tools != "glob_files,grep_files" {
					t.Errorf("files-search: tools %q", tools)
				}
				_, err = goGetGroup(s, "files.search")
				var rpcErr *jsonrpc.Error
				if !errors.As(err, &rpcErr) || rpcErr.Code != groupsext.CodeNotFound {
					t.Errorf("an unknown group: %v", err)
				}
				if text := s.mustCall("calculate", map[string]any{"expression": "6*7"}); !strings.Contains(text, "42") {
					t.Errorf("a scoped tool called directly: %s", text)
				}
				plain := extGoSession(t, base, protocol, "some-agent", false)
				if got := plain.names(); got != searchList {
					t.Errorf("without the extension: %q, want the search list", got)
				}
			})
			t.Run("typescript/"+transport+"/"+protocol, func(t *testing.T) {
				plan := map[string]any{"command": binary, "args": []string{"serve"}, "clientName": "some-agent", "extension": true}
				if base != "" {
					plan = map[string]any{"url": base + "/mcp", "clientName": "some-agent", "extension": true}
				}
				if protocol == "2026-07-28" {
					plan["protocol"] = protocol
				}
				plan["steps"] = []step{
					{"op": "list"},
					{"op": "request", "method": "groups/list"},
					{"op": "request", "method": "groups/get", "params": map[string]any{"name": "text"}},
					{"op": "request", "method": "groups/get", "params": map[string]any{"name": "text-encode"}},
					{"op": "request", "method": "groups/get", "params": map[string]any{"name": "nope"}},
					{"op": "call", "name": "base64_encode", "arguments": map[string]any{"text": "hi"}},
				}
				rep := runTS(t, plan)
				st := rep.Steps
				if got := strings.Join(st[0].Tools, ","); got != demoTopLevel {
					t.Errorf("tools/list = %q", got)
				}
				var list groupsext.ListResult
				if err := json.Unmarshal(st[1].Result, &list); err != nil || len(list.Groups) != 6 {
					t.Errorf("groups/list = %s (%v)", st[1].Result, err)
				}
				var text, encode groupsext.GetResult
				if err := json.Unmarshal(st[2].Result, &text); err != nil || text.Contents == nil {
					t.Fatalf("groups/get text = %s (%v)", st[2].Result, err)
				}
				if tools, groups := contentNames(&text); !strings.Contains(tools, "slugify") || groups != "text-encode" {
					t.Errorf("text: tools %q, groups %q", tools, groups)
				}
				if err := json.Unmarshal(st[3].Result, &encode); err != nil || encode.Contents == nil {
					t.Fatalf("groups/get text-encode = %s (%v)", st[3].Result, err)
				}
				if tools, _ := contentNames(&encode); !strings.Contains(tools, "base64_encode") {
					t.Errorf("text-encode: tools %q", tools)
				}
				if st[4].Err == nil || st[4].Err.Code != groupsext.CodeNotFound {
					t.Errorf("an unknown group: %+v %s", st[4].Err, st[4].Result)
				}
				if st[5].IsError || !strings.Contains(st[5].Text, "aGk=") {
					t.Errorf("base64_encode: %+v", st[5])
				}
			})
		}
		t.Run("typescript/"+transport+"/without-extension", func(t *testing.T) {
			plan := map[string]any{"command": binary, "args": []string{"serve"}, "clientName": "some-agent", "protocol": "2026-07-28"}
			if base != "" {
				plan = map[string]any{"url": base + "/mcp", "clientName": "some-agent", "protocol": "2026-07-28"}
			}
			plan["steps"] = []step{{"op": "list"}}
			rep := runTS(t, plan)
			if got := strings.Join(rep.Steps[0].Tools, ","); got != searchList {
				t.Errorf("tools/list = %q, want the search list", got)
			}
			if rep.Steps[0].TTLMs <= 0 || rep.Steps[0].CacheScope == "" {
				t.Errorf("the list carries no caching hints: %+v", rep.Steps[0])
			}
		})
	}
}

// TestProtocol2026ListNeverVaries: in the groups mode, a 2026-07-28 client
// gets the meta-tools, and enable_tools describes a group's tools for
// call_tool without changing any list: the calling connection's, or
// another connection's of the same client.
func TestProtocol2026ListNeverVaries(t *testing.T) {
	base := startHTTP(t, "--mode", "groups")
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			b := ""
			if transport == "http" {
				b = base
			}
			one := extGoSession(t, b, "2026-07-28", "cline", false, "--mode", "groups")
			two := extGoSession(t, b, "2026-07-28", "cline", false, "--mode", "groups")
			if got := one.names(); got != groupsStateless {
				t.Fatalf("initial list = %q, want %q", got, groupsStateless)
			}
			text := one.mustData("enable_tools", map[string]any{"groups": []string{"notes"}})
			if !strings.Contains(text, `"name":"put_note"`) || !strings.Contains(text, `"inputSchema"`) {
				t.Errorf("enable_tools describes no tools: %s", text)
			}
			one.mustCall("call_tool", map[string]any{"name": "put_note", "arguments": map[string]any{"key": "k", "text": "v"}})
			if got := one.names(); got != groupsStateless {
				t.Errorf("the list changed after enable_tools: %q", got)
			}
			if got := two.names(); got != groupsStateless {
				t.Errorf("another connection lists %q", got)
			}
		})
	}
	rep := runTS(t, map[string]any{
		"url": base + "/mcp", "clientName": "cline", "protocol": "2026-07-28",
		"steps": []step{
			{"op": "list"},
			{"op": "call", "name": "enable_tools", "arguments": map[string]any{"groups": []string{"math"}}},
			{"op": "list"},
		},
	})
	if a, b := strings.Join(rep.Steps[0].Tools, ","), strings.Join(rep.Steps[2].Tools, ","); a != groupsStateless || b != a {
		t.Errorf("typescript: lists %q then %q", a, b)
	}
	if !strings.Contains(rep.Steps[1].Text, `"name":"calculate"`) {
		t.Errorf("typescript: enable_tools = %s", rep.Steps[1].Text)
	}
}
