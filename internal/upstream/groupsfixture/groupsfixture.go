// Package groupsfixture is an MCP server, for tests, that serves the draft
// groups extension (io.modelcontextprotocol/groups) in the shape of the
// draft: it advertises the extension under capabilities.extensions, answers
// groups/list (paginated, top-level groups only) and groups/get (complete
// tool definitions, instructions, nested groups under contents.groups,
// -32002 for an unknown name), leaves its scoped tools out of tools/list for
// a client that declared the extension (they stay callable), and sends
// notifications/groups/list_changed when its groups change.
//
// It is built on the Go SDK, which lets a server receive custom methods but
// not send custom notifications; the notification is written on the
// connection itself (see Transport).
//
// The groups-fixture directory holds the same server as a stdio program for
// end-to-end tests.
package groupsfixture

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Extension is the extension's identifier.
const Extension = "io.modelcontextprotocol/groups"

// CodeUnknownGroup is the error code of groups/get for a name the server
// does not have.
const CodeUnknownGroup = -32002

// Group is one group the fixture serves.
type Group struct {
	Name, Title, Description, Instructions string
	// Tools are the names of the group's own tools.
	Tools []string
	// Groups are the names of its nested groups.
	Groups []string
}

// Server is the fixture: an SDK server plus its groups.
type Server struct {
	*mcp.Server

	mu sync.Mutex
	// top lists the top-level groups in order; groups holds every group.
	top    []string
	groups map[string]*Group
	tools  map[string]*mcp.Tool
	// conns are the live connections, for notifications the SDK cannot send.
	conns []mcp.Connection
	// pageSize is how many groups one groups/list page holds.
	pageSize int
}

// New returns the fixture with its default catalog:
//
//	echo            ungrouped, always in tools/list
//	open_wiki       ungrouped; adds the top-level group "wiki" (tool read_page)
//	                and sends notifications/groups/list_changed
//	issues          create_issue, list_issues, search; nested group labels
//	  labels        add_label
//	repos           list_repos (which also names "repos" in its _meta), search
//
// groups/list returns one group per page, so a client must follow cursors.
func New() *Server { return NewInstructed("") }

// InstructionsEnv names the variable whose value the stdio programs built on
// the fixture send as their initialize instructions.
const InstructionsEnv = "GROUPS_FIXTURE_INSTRUCTIONS"

// NewInstructed is New with the instructions its initialize result carries.
func NewInstructed(instructions string) *Server {
	s := &Server{groups: map[string]*Group{}, tools: map[string]*mcp.Tool{}, pageSize: 1}
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}
	caps.AddExtension(Extension, map[string]any{"listChanged": true})
	s.Server = mcp.NewServer(&mcp.Implementation{Name: "groups-fixture", Version: "1.0.0"}, &mcp.ServerOptions{Capabilities: caps, Instructions: instructions})

	s.addTool("echo", "Echo the text back", map[string]any{"text": map[string]any{"type": "string"}}, "text")
	s.addTool("create_issue", "Create an issue with a title", map[string]any{"title": map[string]any{"type": "string"}}, "title")
	s.addTool("list_issues", "List the open issues", nil)
	s.addTool("search", "Search issues and repositories", map[string]any{"query": map[string]any{"type": "string"}}, "query")
	s.addTool("add_label", "Add a label to an issue", map[string]any{"issue": map[string]any{"type": "integer"}, "label": map[string]any{"type": "string"}}, "issue", "label")
	s.addTool("list_repos", "List the repositories", nil)
	// One tool also names its group in _meta, the extension's earlier style.
	s.tools["list_repos"].Meta = mcp.Meta{Extension: []string{"repos"}}
	s.addTool("read_page", "Read a wiki page", map[string]any{"page": map[string]any{"type": "string"}}, "page")
	s.Server.AddTool(&mcp.Tool{Name: "open_wiki", Description: "Add the wiki group", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s.AddGroup(ctx, &Group{Name: "wiki", Description: "The project wiki", Tools: []string{"read_page"}})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "wiki opened"}}}, nil
		})

	s.setGroup(&Group{Name: "issues", Title: "Issues", Description: "Issue tracking",
		Instructions: "Search before creating an issue.",
		Tools:        []string{"create_issue", "list_issues", "search"}, Groups: []string{"labels"}})
	s.setGroup(&Group{Name: "labels", Description: "Issue labels", Instructions: "A label must exist before it is added.",
		Tools: []string{"add_label"}})
	s.setGroup(&Group{Name: "repos", Description: "Repositories", Tools: []string{"list_repos", "search"}})
	s.top = []string{"issues", "repos"}

	s.Server.AddReceivingMiddleware(s.hideScopedTools)
	must(mcp.AddReceivingCustomMethod(s.Server, "groups/list", s.list))
	must(mcp.AddReceivingCustomMethod(s.Server, "groups/get", s.get))
	return s
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// addTool adds a tool that answers "<name> <arguments as JSON>".
func (s *Server) addTool(name, description string, props map[string]any, required ...string) {
	schema := map[string]any{"type": "object"}
	if props != nil {
		schema["properties"] = props
	}
	if len(required) > 0 {
		schema["required"] = required
	}
	t := &mcp.Tool{Name: name, Description: description, InputSchema: schema}
	s.tools[name] = t
	s.Server.AddTool(t, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := string(req.Params.Arguments)
		if args == "" {
			args = "{}"
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " " + args}}}, nil
	})
}

func (s *Server) setGroup(g *Group) { s.groups[g.Name] = g }

// AddGroup adds a top-level group and tells every connected client.
func (s *Server) AddGroup(ctx context.Context, g *Group) {
	s.mu.Lock()
	s.setGroup(g)
	if !slices.Contains(s.top, g.Name) {
		s.top = append(s.top, g.Name)
	}
	conns := slices.Clone(s.conns)
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.Write(ctx, &jsonrpc.Request{Method: "notifications/groups/list_changed"})
	}
}

// scoped reports whether a tool belongs to any group.
func (s *Server) scoped(tool string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range s.groups {
		if slices.Contains(g.Tools, tool) {
			return true
		}
	}
	return false
}

// hideScopedTools leaves the scoped tools out of tools/list for a client
// that declared the extension, as the draft asks; other clients get every
// tool.
func (s *Server) hideScopedTools(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "tools/list" || err != nil {
			return res, err
		}
		lr, ok := req.(*mcp.ListToolsRequest)
		list, ok2 := res.(*mcp.ListToolsResult)
		if !ok || !ok2 || !declared(lr.ClientCapabilities()) {
			return res, err
		}
		out := *list
		out.Tools = slices.DeleteFunc(slices.Clone(list.Tools), func(t *mcp.Tool) bool { return s.scoped(t.Name) })
		return &out, nil
	}
}

func declared(caps *mcp.ClientCapabilities) bool {
	if caps == nil {
		return false
	}
	_, ok := caps.Extensions[Extension]
	return ok
}

// ListParams are the params of groups/list.
type ListParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

// Entry is a group as groups/list and contents.groups show it.
type Entry struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description"`
}

// ListResult is the result of groups/list.
type ListResult struct {
	mcp.ResultBase
	Groups     []Entry `json:"groups"`
	NextCursor string  `json:"nextCursor,omitempty"`
}

// GetParams are the params of groups/get.
type GetParams struct {
	mcp.ParamsBase
	Name string `json:"name"`
}

// Contents are what a group holds.
type Contents struct {
	Tools  []*mcp.Tool `json:"tools,omitempty"`
	Groups []Entry     `json:"groups,omitempty"`
}

// GetResult is the result of groups/get.
type GetResult struct {
	mcp.ResultBase
	Instructions string    `json:"instructions,omitempty"`
	Contents     *Contents `json:"contents,omitempty"`
}

func (s *Server) entry(name string) Entry {
	g := s.groups[name]
	return Entry{Name: g.Name, Title: g.Title, Description: g.Description}
}

func (s *Server) list(_ context.Context, _ *mcp.ServerSession, p *ListParams) (*ListResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	start := 0
	if p != nil && p.Cursor != "" {
		n, err := strconv.Atoi(p.Cursor)
		if err != nil || n < 0 || n > len(s.top) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid cursor %q", p.Cursor)}
		}
		start = n
	}
	end := min(start+s.pageSize, len(s.top))
	res := &ListResult{Groups: []Entry{}}
	for _, name := range s.top[start:end] {
		res.Groups = append(res.Groups, s.entry(name))
	}
	if end < len(s.top) {
		res.NextCursor = strconv.Itoa(end)
	}
	return res, nil
}

func (s *Server) get(_ context.Context, _ *mcp.ServerSession, p *GetParams) (*GetResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := ""
	if p != nil {
		name = p.Name
	}
	g, ok := s.groups[name]
	if !ok {
		data, _ := json.Marshal(map[string]any{"name": name})
		return nil, &jsonrpc.Error{Code: CodeUnknownGroup, Message: fmt.Sprintf("unknown group %q", name), Data: data}
	}
	res := &GetResult{Instructions: g.Instructions, Contents: &Contents{}}
	for _, t := range g.Tools {
		res.Contents.Tools = append(res.Contents.Tools, s.tools[t])
	}
	for _, c := range g.Groups {
		res.Contents.Groups = append(res.Contents.Groups, s.entry(c))
	}
	return res, nil
}

// Transport wraps a server transport so the fixture can write the
// notifications the SDK has no API for on its connections.
func (s *Server) Transport(t mcp.Transport) mcp.Transport { return &transport{Transport: t, s: s} }

type transport struct {
	mcp.Transport
	s *Server
}

func (t *transport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.s.mu.Lock()
	t.s.conns = append(t.s.conns, c)
	t.s.mu.Unlock()
	return c, nil
}
