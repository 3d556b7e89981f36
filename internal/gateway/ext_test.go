package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/groupsext"
)

// extClient connects a client that declares the grouping extension.
func extClient(t *testing.T, g *gateway.Gateway, protocol string) *client {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "ext"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Extensions: map[string]any{groupsext.ID: map[string]any{}}},
	})
	if err := mcp.AddSendingCustomMethod[*groupsext.ListParams, *groupsext.ListResult](c, groupsext.MethodList); err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := g.Connect(context.Background(), gateway.ClientInfo{Name: "ext", ProtocolVersion: protocol, Extension: true}, st)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := c.Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &client{ClientSession: cs}
}

func groupsList(t *testing.T, c *client) *groupsext.ListResult {
	t.Helper()
	res, err := mcp.CallCustomMethod[*groupsext.ListParams, *groupsext.ListResult](context.Background(), c.ClientSession, groupsext.MethodList, &groupsext.ListParams{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// listGroups renders groups/list as "name=title<parents" entries.
func listGroups(t *testing.T, c *client) string {
	t.Helper()
	var names []string
	for _, g := range groupsList(t, c).Groups {
		names = append(names, g.Name+"="+g.Title+"<"+strings.Join(g.Parents(), "+"))
	}
	return strings.Join(names, ",")
}

// memberships renders tools/list as "name[groups]" entries.
func memberships(t *testing.T, c *client) string {
	t.Helper()
	res, err := c.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tool := range res.Tools {
		out = append(out, tool.Name+"["+strings.Join(groupsext.MetaGroups(tool.Meta), "+")+"]")
	}
	return strings.Join(out, ",")
}

// A client of the grouping extension gets every group with its parents,
// and every tool with its groups and no meta-tools, whatever the mode: the
// draft leaves disclosure to the client.
func TestGroupingExtension(t *testing.T) {
	for _, mode := range []expose.Mode{expose.Auto, expose.Flat, expose.Groups, expose.Search, expose.Grouped} {
		for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
			t.Run(string(mode)+"/"+protocol, func(t *testing.T) {
				g := newGateway(t, gateway.Options{Mode: mode}, nil)
				c := extClient(t, g, protocol)
				if caps := c.InitializeResult().Capabilities; caps == nil || caps.Extensions[groupsext.ID] == nil {
					t.Fatalf("the server does not advertise the extension: %+v", caps)
				}
				if _, old := c.InitializeResult().Capabilities.Extensions["io.modelcontextprotocol/groups"]; old {
					t.Error("the server still advertises the retired groups dialect")
				}
				if got, want := memberships(t, c), "a[code+docs],b[code],c[code-repos],d[code-repos],e[code-repos-br],f[docs],u[]"; got != want {
					t.Errorf("tools/list = %q, want %q", got, want)
				}
				if got, want := listGroups(t, c), "code=<,code-repos=code.repos<code,code-repos-br=code.repos.br<code-repos,docs=<"; got != want {
					t.Errorf("groups/list = %q, want %q", got, want)
				}
				res := groupsList(t, c)
				if protocol == "2026-07-28" && (res.TTLMs == nil || *res.TTLMs <= 0 || res.CacheScope != "public") {
					t.Errorf("groups/list on 2026-07-28 carries ttlMs %v cacheScope %q", res.TTLMs, res.CacheScope)
				}
				if protocol == "2025-11-25" && (res.TTLMs != nil || res.CacheScope != "") {
					t.Errorf("groups/list on 2025-11-25 carries caching hints")
				}
				if res, text := c.call(t, "e", map[string]any{"x": "1"}); res.IsError || text != `e {"x":"1"}` {
					t.Errorf("calling a nested group's tool: %v %s", res.IsError, text)
				}
			})
		}
	}
}

// groups/list pages by cursor, and refuses a cursor it never gave.
func TestGroupingExtensionPages(t *testing.T) {
	g := newGateway(t, gateway.Options{Mode: expose.Auto}, nil)
	c := extClient(t, g, "2026-07-28")
	_, err := mcp.CallCustomMethod[*groupsext.ListParams, *groupsext.ListResult](context.Background(), c.ClientSession, groupsext.MethodList, &groupsext.ListParams{Cursor: "!"})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("a bad cursor: %v", err)
	}
}

// The retired dialect's method is gone.
func TestGroupsGetIsGone(t *testing.T) {
	g := newGateway(t, gateway.Options{Mode: expose.Auto}, nil)
	type params struct {
		mcp.ParamsBase
		Name string `json:"name"`
	}
	raw := mcp.NewClient(&mcp.Implementation{Name: "old"}, nil)
	if err := mcp.AddSendingCustomMethod[*params, *groupsext.ListResult](raw, "groups/get"); err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := g.Connect(context.Background(), gateway.ClientInfo{Name: "old", ProtocolVersion: "2025-11-25", Extension: true}, st)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := raw.Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	_, err = mcp.CallCustomMethod[*params, *groupsext.ListResult](context.Background(), cs, "groups/get", &params{Name: "code"})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("groups/get answered: %v", err)
	}
}

// A group exposed grouped is one tool, member of that group.
func TestGroupingExtensionGroupedExposition(t *testing.T) {
	g := newGateway(t, gateway.Options{Mode: expose.Auto, Exposition: 2 /* grouped */}, nil)
	c := extClient(t, g, "2026-07-28")
	if got := memberships(t, c); !strings.Contains(got, "code[code]") || strings.Contains(got, "b[") {
		t.Fatalf("tools/list = %q, want code's one grouped tool", got)
	}
	if res, text := c.call(t, "code", map[string]any{"action": "b", "x": "2"}); res.IsError || text != `b {"x":"2"}` {
		t.Errorf("calling the grouped tool: %v %s", res.IsError, text)
	}
}

func toolNames(tools []*mcp.Tool) string {
	return joinSorted(tools, func(t *mcp.Tool) string { return t.Name })
}

// joinSorted names each item, sorted and comma-separated: a list to compare
// whatever order the server sent it in.
func joinSorted[T any](items []T, name func(T) string) string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, name(it))
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

// A 2026-07-28 client's list is the same on every connection and never
// changes with its calls; in the groups mode enable_tools describes tools
// for call_tool instead.
func TestProtocol2026ListsDoNotVaryPerConnection(t *testing.T) {
	for _, mode := range []expose.Mode{expose.Groups, expose.Auto} {
		t.Run(string(mode), func(t *testing.T) {
			g := newGateway(t, gateway.Options{Mode: mode, RefreshingClients: []string{"one"}}, nil)
			one := &client{ClientSession: connectAt(t, g, "one", "2026-07-28", nil)}
			two := &client{ClientSession: connectAt(t, g, "one", "2026-07-28", nil)}
			before := one.names(t)
			want := map[expose.Mode]string{
				expose.Groups: "call_tool,enable_tools,find_tools,u",
				expose.Auto:   "call_tool,describe_tools,find_tools,guidance,u",
			}[mode]
			if before != want {
				t.Fatalf("initial list = %q, want %q", before, want)
			}
			if mode == expose.Groups {
				res, text := one.call(t, "enable_tools", map[string]any{"groups": []string{"code.repos"}})
				var out struct {
					Enabled      []string          `json:"enabled"`
					Instructions map[string]string `json:"instructions"`
					Tools        []struct{ Name string }
				}
				if res.IsError || json.Unmarshal(structured(res), &out) != nil {
					t.Fatalf("enable_tools: %s", text)
				}
				if len(out.Tools) != 2 || out.Tools[0].Name != "c" || out.Instructions["code.repos"] == "" {
					t.Errorf("enable_tools describes %s", text)
				}
				if res, text := one.call(t, "call_tool", map[string]any{"name": "c", "arguments": map[string]any{}}); res.IsError {
					t.Errorf("call_tool after enable_tools: %s", text)
				}
				// Calling it directly works too: nothing is hidden without a view.
				if res, text := one.call(t, "d", map[string]any{}); res.IsError {
					t.Errorf("a direct call: %s", text)
				}
			}
			if got := one.names(t); got != before {
				t.Errorf("the list changed under the client: %q, was %q", got, before)
			}
			if got := two.names(t); got != before {
				t.Errorf("another connection lists %q, the first %q", got, before)
			}
			res, err := two.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			// In auto mode the list depends on the client's name.
			scope := map[expose.Mode]string{expose.Groups: "public", expose.Auto: "private"}[mode]
			if res.TTLMs <= 0 || res.CacheScope != scope {
				t.Errorf("the list carries ttlMs %d and cacheScope %q, want %q", res.TTLMs, res.CacheScope, scope)
			}
		})
	}
}

// A flat gateway's lists do not depend on who asks.
func TestProtocol2026PublicLists(t *testing.T) {
	g := newGateway(t, gateway.Options{Mode: expose.Flat}, nil)
	c := connectAt(t, g, "x", "2026-07-28", nil)
	res, err := c.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.CacheScope != "public" || len(res.Tools) != 7 {
		t.Errorf("cacheScope %q, %d tools", res.CacheScope, len(res.Tools))
	}
	if !slices.IsSortedFunc(res.Tools, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) }) {
		t.Errorf("the list is not in a deterministic order")
	}
}

// Clients that search their tools themselves get them all, each with its
// groups in _meta.
func TestSearchingClientsGetFlatWithGroups(t *testing.T) {
	g := newGateway(t, gateway.Options{Mode: expose.Auto}, nil)
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		c := connectAt(t, g, "claude-code", protocol, nil)
		res, err := c.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		groups := map[string]any{}
		for _, tool := range res.Tools {
			groups[tool.Name] = tool.Meta["io.modelcontextprotocol/groups"]
		}
		if len(res.Tools) != 7 {
			t.Errorf("%s: %d tools, want all 7", protocol, len(res.Tools))
		}
		if b, _ := json.Marshal(groups["a"]); string(b) != `["code","docs"]` || groups["u"] != nil {
			t.Errorf("%s: groups in _meta: a %s, u %v", protocol, b, groups["u"])
		}
	}
}
