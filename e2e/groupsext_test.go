package e2e

import (
	"context"
	"encoding/json"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/groupsext"
)

// The demo catalog as a client of the grouping extension sees it.
const (
	demoRoots       = "files,json,math,notes,text,time"
	demoGroups      = "files,files-search,json,math,notes,text,text-encode,time"
	groupsStateless = "about,call_tool,enable_tools,find_tools"
)

// extGoSession connects a Go SDK client to toolfold, over stdio when base
// is empty and over HTTP otherwise, on protocol, declaring the grouping
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
	var transport mcp.Transport
	if base == "" {
		cmd := exec.Command(binary, serveArgs(args...)...)
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

// TestGroupingDraftClientEndToEnd: the draft's client (draftclient_test.go)
// lists the demo's groups, rebuilds the tree from _meta, filters tools/list
// by membership and calls what it chose, with the Go and the TypeScript SDK
// clients, over stdio and HTTP, on both protocols; the same clients
// without the extension get the search list.
func TestGroupingDraftClientEndToEnd(t *testing.T) {
	httpBase := startHTTP(t)
	for _, transport := range []string{"stdio", "http"} {
		base := ""
		if transport == "http" {
			base = httpBase
		}
		for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
			t.Run("go/"+transport+"/"+protocol, func(t *testing.T) {
				s, _ := draftSession(t, base, protocol)
				tr, first := draftGroups(t, s)
				if got := strings.Join(slices.Sorted(maps.Keys(tr.groups)), ","); got != demoGroups {
					t.Errorf("groups/list = %q, want %q", got, demoGroups)
				}
				if got := strings.Join(tr.roots, ","); got != demoRoots {
					t.Errorf("roots = %q, want %q", got, demoRoots)
				}
				if got := strings.Join(tr.children["files"], ","); got != "files-search" || tr.groups["files-search"].Title != "files.search" {
					t.Errorf("files' children = %q, files-search = %+v", got, tr.groups["files-search"])
				}
				if hinted := first.TTLMs != nil && first.CacheScope != ""; hinted != (protocol == "2026-07-28") {
					t.Errorf("groups/list caching hints on %s: ttlMs %v cacheScope %q", protocol, first.TTLMs, first.CacheScope)
				}
				tools := draftTools(t, s, tr)
				// Nothing chosen: the ungrouped tool alone.
				if got := strings.Join(draftFilter(tools, tr), ","); got != "about" {
					t.Errorf("nothing chosen: %q", got)
				}
				// files chosen: its tools and files.search's.
				chosen := draftFilter(tools, tr, "files")
				if !slices.Contains(chosen, "read_file") || !slices.Contains(chosen, "grep_files") || slices.Contains(chosen, "calculate") {
					t.Errorf("files chosen: %q", chosen)
				}
				if text := s.mustCall("grep_files", map[string]any{"pattern": "x"}); text == "" {
					t.Error("grep_files answered nothing")
				}
				text := draftFilter(tools, tr, "text")
				if !slices.Contains(text, "base64_encode") {
					t.Errorf("text chosen: %q", text)
				}
				if got := s.mustCall("base64_encode", map[string]any{"text": "hi"}); !strings.Contains(got, "aGk=") {
					t.Errorf("base64_encode = %s", got)
				}
				plain := extGoSession(t, base, protocol, "some-agent", false)
				if got := plain.names(); got != searchList {
					t.Errorf("without the extension: %q, want the search list", got)
				}
			})
			t.Run("typescript/"+transport+"/"+protocol, func(t *testing.T) {
				plan := map[string]any{"command": binary, "args": []string{"demo"}, "clientName": "some-agent", "extension": true}
				if base != "" {
					plan = map[string]any{"url": base + "/mcp", "clientName": "some-agent", "extension": true}
				}
				if protocol == "2026-07-28" {
					plan["protocol"] = protocol
				}
				plan["steps"] = []step{
					{"op": "list"},
					{"op": "request", "method": "groups/list"},
					{"op": "call", "name": "base64_encode", "arguments": map[string]any{"text": "hi"}},
				}
				rep := runTS(t, plan)
				st := rep.Steps
				if got := strings.Join(st[0].Tools, ","); !strings.Contains(got, "base64_encode") || strings.Contains(got, "enable_tools") {
					t.Errorf("tools/list = %q, want every tool and no meta-tools", got)
				}
				var list draftListResult
				if err := json.Unmarshal(st[1].Result, &list); err != nil || len(list.Groups) != 8 {
					t.Errorf("groups/list = %s (%v)", st[1].Result, err)
				}
				if st[2].IsError || !strings.Contains(st[2].Text, "aGk=") {
					t.Errorf("base64_encode: %+v", st[2])
				}
			})
		}
		t.Run("typescript/"+transport+"/without-extension", func(t *testing.T) {
			plan := map[string]any{"command": binary, "args": []string{"demo"}, "clientName": "some-agent", "protocol": "2026-07-28"}
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
	if !strings.Contains(string(rep.Steps[1].Structured), `"name":"calculate"`) {
		t.Errorf("typescript: enable_tools = %s", rep.Steps[1].Structured)
	}
}
