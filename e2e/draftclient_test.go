package e2e

import (
	"context"
	"os/exec"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file is a client of the grouping extension written from the draft's
// text alone, not from toolfold's code: its own wire types, its own reading
// of _meta, its own filtering. The draft says:
//
//   - the server declares io.modelcontextprotocol/grouping under
//     capabilities.extensions, optionally with {"listChanged": true}, and a
//     client checks for it before calling groups/list;
//   - groups/list is paginated and lists every group as {name, title?,
//     description?, icons?, annotations?, _meta?};
//   - a group's parents, and the groups of a tool, prompt, resource or
//     template, are the strings in _meta["io.modelcontextprotocol/groups"];
//   - notifications/groups/list_changed says the groups changed.
const (
	draftExtension     = "io.modelcontextprotocol/grouping"
	draftMembershipKey = "io.modelcontextprotocol/groups"
	draftListChanged   = "notifications/groups/list_changed"
)

type draftGroup struct {
	Name        string         `json:"name"`
	Title       string         `json:"title,omitempty"`
	Description string         `json:"description,omitempty"`
	Meta        map[string]any `json:"_meta,omitempty"`
}

type draftListParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type draftListResult struct {
	mcp.ResultBase
	Groups     []draftGroup `json:"groups"`
	NextCursor string       `json:"nextCursor,omitempty"`
	TTLMs      *int         `json:"ttlMs,omitempty"`
	CacheScope string       `json:"cacheScope,omitempty"`
}

// draftMembers reads the group names a _meta lists.
func draftMembers(meta map[string]any) []string {
	list, _ := meta[draftMembershipKey].([]any)
	var out []string
	for _, v := range list {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// draftTree is what the client rebuilds from groups/list.
type draftTree struct {
	groups   map[string]draftGroup
	children map[string][]string
	roots    []string
}

func (tr *draftTree) subtree(name string) map[string]bool {
	out := map[string]bool{name: true}
	for _, c := range tr.children[name] {
		for n := range tr.subtree(c) {
			out[n] = true
		}
	}
	return out
}

// draftSession connects a Go SDK client that declares the grouping
// extension, over stdio when base is empty and over HTTP otherwise.
// notified receives one value per notifications/groups/list_changed, which
// the SDK does not know and hands to no handler: the transport is wrapped
// to see it.
func draftSession(t *testing.T, base, protocol string, args ...string) (*session, <-chan struct{}) {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "draft-client", Version: "1.0.0"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Extensions: map[string]any{draftExtension: map[string]any{}}},
	})
	if err := mcp.AddSendingCustomMethod[*draftListParams, *draftListResult](c, "groups/list"); err != nil {
		t.Fatal(err)
	}
	// For the tests that also read the skills (SEP-2640, skills_test.go).
	if err := mcp.AddSendingCustomMethod[*sepListParams, *sepListResult](c, "skills/list"); err != nil {
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
	notified := make(chan struct{}, 16)
	cs, err := c.Connect(context.Background(), &watchingTransport{Transport: transport, method: draftListChanged, seen: notified}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatalf("connecting on %s: %v", protocol, err)
	}
	t.Cleanup(func() { cs.Close() })
	if caps := cs.InitializeResult().Capabilities; caps == nil || caps.Extensions[draftExtension] == nil {
		t.Fatalf("the server does not declare %s: %+v", draftExtension, caps)
	}
	return &session{ClientSession: cs, t: t, changed: make(chan struct{}, 16)}, notified
}

// draftGroups reads every page of groups/list and rebuilds the tree.
func draftGroups(t *testing.T, s *session) (*draftTree, *draftListResult) {
	t.Helper()
	tr := &draftTree{groups: map[string]draftGroup{}, children: map[string][]string{}}
	var first *draftListResult
	cursor := ""
	for {
		page, err := mcp.CallCustomMethod[*draftListParams, *draftListResult](context.Background(), s.ClientSession, "groups/list", &draftListParams{Cursor: cursor})
		if err != nil {
			t.Fatalf("groups/list: %v", err)
		}
		if first == nil {
			first = page
		}
		for _, g := range page.Groups {
			if _, dup := tr.groups[g.Name]; dup {
				t.Errorf("groups/list names %s twice", g.Name)
			}
			tr.groups[g.Name] = g
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	for name, g := range tr.groups {
		parents := draftMembers(g.Meta)
		if len(parents) == 0 {
			tr.roots = append(tr.roots, name)
		}
		for _, p := range parents {
			if _, ok := tr.groups[p]; !ok {
				t.Errorf("group %s names a parent %s that groups/list lacks", name, p)
			}
			tr.children[p] = append(tr.children[p], name)
		}
	}
	slices.Sort(tr.roots)
	for _, c := range tr.children {
		slices.Sort(c)
	}
	return tr, first
}

// draftTools lists every tool (all pages) and checks that each names only
// groups that groups/list has.
func draftTools(t *testing.T, s *session, tr *draftTree) []*mcp.Tool {
	t.Helper()
	var out []*mcp.Tool
	for tool, err := range s.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range draftMembers(tool.Meta) {
			if _, ok := tr.groups[g]; !ok {
				t.Errorf("tool %s names a group %s that groups/list lacks", tool.Name, g)
			}
		}
		out = append(out, tool)
	}
	return out
}

// draftFilter is the client's own disclosure: the tools in no group, and
// those of the chosen groups and everything under them.
func draftFilter(tools []*mcp.Tool, tr *draftTree, chosen ...string) []string {
	active := map[string]bool{}
	for _, c := range chosen {
		for n := range tr.subtree(c) {
			active[n] = true
		}
	}
	var out []string
	for _, tool := range tools {
		groups := draftMembers(tool.Meta)
		if len(groups) == 0 || slices.ContainsFunc(groups, func(g string) bool { return active[g] }) {
			out = append(out, tool.Name)
		}
	}
	slices.Sort(out)
	return out
}

// watchingTransport signals each incoming notification of one method.
type watchingTransport struct {
	mcp.Transport
	method string
	seen   chan<- struct{}
}

func (w *watchingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := w.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &watchingConn{Connection: c, w: w}, nil
}

type watchingConn struct {
	mcp.Connection
	w *watchingTransport
}

func (c *watchingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if r, ok := msg.(*jsonrpc.Request); ok && err == nil && !r.IsCall() && r.Method == c.w.method {
		select {
		case c.w.seen <- struct{}{}:
		default:
		}
	}
	return msg, err
}
