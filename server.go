package toolfold

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/libspec"
	"github.com/toolfold/toolfold/internal/view"
)

// Server is an MCP server whose tools live in groups. Build it with
// NewServer, add groups and tools, then serve it with Run or Handler. Tools
// and groups must be added before the server starts serving.
type Server struct {
	opts Options

	mu     sync.Mutex
	groups []*Group
	tools  []*catalog.Tool
	// members maps a group to the tools placed in it, in the order added.
	members map[*Group][]catalog.ToolID

	once sync.Once
	gw   *gateway.Gateway
	err  error
}

// Registrar is where a tool can be added: a *Server (ungrouped) or a
// *Group.
type Registrar interface {
	addTool(t *mcp.Tool, h mcp.ToolHandler)
}

var (
	_ Registrar = (*Server)(nil)
	_ Registrar = (*Group)(nil)
)

// NewServer returns an empty server. opts may be nil.
func NewServer(opts *Options) *Server {
	s := &Server{members: map[*Group][]catalog.ToolID{}}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Name == "" {
		s.opts.Name = "toolfold"
	}
	return s
}

// Group is a named bundle of tools, possibly inside another group.
type Group struct {
	srv    *Server
	id     string
	parent *Group
	opts   GroupOptions
}

// Group adds a top-level group. Adding a name twice returns the existing
// group.
func (s *Server) Group(name string, opts *GroupOptions) *Group {
	return s.group(nil, name, opts)
}

// Group adds a child group. Its full name is "<parent>.<name>", which is
// what agents pass to enable_tools.
func (g *Group) Group(name string, opts *GroupOptions) *Group {
	return g.srv.group(g, g.id+"."+name, opts)
}

// Name returns the group's full name.
func (g *Group) Name() string { return g.id }

func (s *Server) group(parent *Group, id string, opts *GroupOptions) *Group {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range s.groups {
		if g.id == id {
			return g
		}
	}
	g := &Group{srv: s, id: id, parent: parent}
	if opts != nil {
		g.opts = *opts
	}
	s.groups = append(s.groups, g)
	return g
}

// AddTool adds an ungrouped tool with a raw handler, like
// (*mcp.Server).AddTool: the handler unmarshals and checks its own
// arguments. Ungrouped tools are always visible.
func (s *Server) AddTool(t *mcp.Tool, h mcp.ToolHandler) { s.addTool(t, h) }

// AddTool adds a tool to the group with a raw handler.
func (g *Group) AddTool(t *mcp.Tool, h mcp.ToolHandler) { g.addTool(t, h) }

// Include puts tools that were already added elsewhere into this group too:
// a tool may be in several groups.
func (g *Group) Include(toolNames ...string) {
	s := g.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range toolNames {
		s.members[g] = append(s.members[g], catalog.ToolID(n))
	}
}

func (s *Server) addTool(t *mcp.Tool, h mcp.ToolHandler) { s.register(nil, t, h) }

func (g *Group) addTool(t *mcp.Tool, h mcp.ToolHandler) { g.srv.register(g, t, h) }

// register records a tool. Like the SDK, it panics on programmer errors
// (no tool, no name, no schema, a name taken): they show on the first run
// of a program.
func (s *Server) register(g *Group, t *mcp.Tool, h mcp.ToolHandler) {
	if t == nil || t.Name == "" {
		panic("toolfold: AddTool needs a tool with a name")
	}
	if t.InputSchema == nil {
		panic(fmt.Sprintf("toolfold: AddTool %q: missing input schema (use the generic AddTool to infer one)", t.Name))
	}
	if h == nil {
		panic(fmt.Sprintf("toolfold: AddTool %q: nil handler", t.Name))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.ContainsFunc(s.tools, func(c *catalog.Tool) bool { return c.Name == t.Name }) {
		panic(fmt.Sprintf("toolfold: AddTool %q: a tool of that name was already added; tool names are unique across the whole server, whatever their group, so rename one (to put one tool in several groups, add it once and use Group.Include)", t.Name))
	}
	ct := &catalog.Tool{ID: catalog.ToolID(t.Name), Name: t.Name, Source: s.opts.Name, Def: t, Handler: h}
	s.tools = append(s.tools, ct)
	if g != nil {
		s.members[g] = append(s.members[g], ct.ID)
	}
}

// AddTool adds a tool whose handler takes typed input and output, like
// mcp.AddTool: the input schema is inferred from In unless t has one, the
// output schema from Out unless Out is any, arguments are unmarshalled into
// In, and the output becomes structuredContent plus the same JSON as text.
// An error from the handler becomes a tool error the agent can read.
//
// MCP requires an output schema of type object. When Out is a struct, a
// pointer to one or a map, the result is sent as it is. Any other Out (a
// string, number, boolean or slice) is wrapped: the output schema is
// {"type": "object", "properties": {"result": <Out's schema>}} and a call
// returns {"result": <value>} (see ResultKey). Return a struct to choose
// the field names yourself.
func AddTool[In, Out any](r Registrar, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) {
	tt, handler, err := typedTool(t, h)
	if err != nil {
		panic(fmt.Sprintf("toolfold: AddTool %q: %v", t.Name, err))
	}
	r.addTool(tt, handler)
}

func typedTool[In, Out any](t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) (*mcp.Tool, mcp.ToolHandler, error) {
	tt := *t
	if tt.InputSchema == nil {
		if reflect.TypeFor[In]() == reflect.TypeFor[any]() {
			tt.InputSchema = &jsonschema.Schema{Type: "object"}
		} else {
			s, err := jsonschema.For[In](nil)
			if err != nil {
				return nil, nil, fmt.Errorf("inferring the input schema: %w", err)
			}
			if s.Type != "object" {
				return nil, nil, fmt.Errorf("input type %v must be a struct or map (schema type %q), since tool arguments are an object", reflect.TypeFor[In](), s.Type)
			}
			tt.InputSchema = s
		}
	}
	outType := reflect.TypeFor[Out]()
	wrap := false
	if tt.OutputSchema == nil && outType != reflect.TypeFor[any]() {
		s, err := jsonschema.ForType(outType, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("inferring the output schema: %w", err)
		}
		tt.OutputSchema, wrap = objectOutputSchema(s)
	}
	handler := func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in In
		if len(req.Params.Arguments) > 0 && string(req.Params.Arguments) != "null" {
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return errorResult(fmt.Errorf("arguments do not fit %s: %w", tt.Name, err)), nil
			}
		}
		res, out, err := h(ctx, req, in)
		if err != nil {
			return errorResult(err), nil
		}
		if res == nil {
			res = &mcp.CallToolResult{}
		}
		if outType != reflect.TypeFor[any]() || any(out) != nil {
			if v := reflect.ValueOf(out); v.Kind() == reflect.Pointer && v.IsNil() {
				return res, nil
			}
			var v any = out
			if wrap {
				v = wrappedResult{Result: out}
			}
			b, err := json.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("encoding the output of %s: %w", tt.Name, err)
			}
			res.StructuredContent = json.RawMessage(b)
			if res.Content == nil {
				res.Content = []mcp.Content{&mcp.TextContent{Text: string(b)}}
			}
		}
		return res, nil
	}
	return &tt, handler, nil
}

// ResultKey is the property that holds a typed tool's result when the
// result is not a JSON object (a string, number, boolean or list): MCP
// requires an output schema of type object, and clients such as the
// TypeScript SDK refuse a whole tool list that has any other, so such a
// result is sent as {"result": <value>} with a schema to match.
const ResultKey = "result"

// wrappedResult is a non-object result as it is sent.
type wrappedResult struct {
	Result any `json:"result"`
}

// objectOutputSchema makes an inferred output schema one MCP accepts: an
// object schema as it is (a pointer to a struct loses its "null", since a
// nil result is sent without structured content), anything else wrapped in
// an object under ResultKey. It reports whether results must be wrapped.
func objectOutputSchema(s *jsonschema.Schema) (*jsonschema.Schema, bool) {
	if s.Type == "object" {
		return s, false
	}
	if len(s.Types) == 2 && slices.Contains(s.Types, "null") && slices.Contains(s.Types, "object") {
		c := *s
		c.Types, c.Type = nil, "object"
		return &c, false
	}
	return &jsonschema.Schema{
		Type:       "object",
		Properties: map[string]*jsonschema.Schema{ResultKey: s},
		Required:   []string{ResultKey},
	}, true
}

func errorResult(err error) *mcp.CallToolResult {
	r := &mcp.CallToolResult{}
	r.SetError(err)
	return r
}

// spec describes the server's tools and groups, with ReadOnly and
// ExcludeGroups applied. The gateway package, the toolfold command and the
// demo read it through internal/libspec to mount or inspect the server.
func (s *Server) spec() (catalog.Spec, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	spec := catalog.Spec{Tools: make([]*catalog.Tool, len(s.tools)), ReadOnly: s.opts.ReadOnly}
	for i, t := range s.tools {
		c := *t
		spec.Tools[i] = &c
	}
	for _, g := range s.groups {
		exp, _ := g.opts.Exposition.internal()
		gs := catalog.GroupSpec{
			ID: catalog.GroupID(g.id), Description: g.opts.Description,
			Instructions: g.opts.Instructions, Tags: g.opts.Tags, Exposition: exp,
			Members: catalog.Members{Tools: s.members[g]},
		}
		if g.opts.Enabled {
			gs.Default = catalog.Enabled
		}
		if g.parent != nil {
			gs.Parent = catalog.GroupID(g.parent.id)
		}
		spec.Groups = append(spec.Groups, gs)
	}
	for _, name := range s.opts.ExcludeGroups {
		i := slices.IndexFunc(spec.Groups, func(g catalog.GroupSpec) bool { return string(g.ID) == name })
		if i < 0 {
			ids := make([]string, len(spec.Groups))
			for j, g := range spec.Groups {
				ids[j] = string(g.ID)
			}
			hint := ""
			if near := catalog.Nearest(name, ids, 1); len(near) > 0 {
				hint = fmt.Sprintf(" (did you mean %q?)", near[0])
			}
			return spec, fmt.Errorf("toolfold: cannot exclude group %q: there is no such group%s", name, hint)
		}
		spec.Groups[i].Default = catalog.Excluded
	}
	return spec, nil
}

func init() {
	libspec.Register(func(server any) (catalog.Spec, error) {
		s, ok := server.(*Server)
		if !ok {
			return catalog.Spec{}, fmt.Errorf("toolfold: %T is not a *toolfold.Server", server)
		}
		return s.spec()
	})
}

// gateway builds the serving machinery once, on first use.
func (s *Server) gateway() (*gateway.Gateway, error) {
	s.once.Do(func() { s.gw, s.err = s.build() })
	return s.gw, s.err
}

func (s *Server) build() (*gateway.Gateway, error) {
	mode, err := s.opts.Mode.internal()
	if err != nil {
		return nil, fmt.Errorf("toolfold: %w", err)
	}
	exp, err := s.opts.Exposition.internal()
	if err != nil {
		return nil, fmt.Errorf("toolfold: %w", err)
	}
	spec, err := s.spec()
	if err != nil {
		return nil, err
	}
	initial := make([]catalog.GroupID, len(s.opts.InitialGroups))
	for i, g := range s.opts.InitialGroups {
		initial[i] = catalog.GroupID(g)
	}
	// The engine alone: catalog, views, gateway. The config loader and the
	// upstream machinery (internal/assemble) stay out of library programs.
	res, err := catalog.Build(spec)
	if err != nil {
		return nil, fmt.Errorf("toolfold: the tools and groups of server %q do not fit together: %w", s.opts.Name, err)
	}
	space, err := view.NewSpace(res.Catalog, &view.Options{MaxTools: s.opts.MaxTools, InitialGroups: initial, HideUngrouped: s.opts.HideUngrouped})
	if err != nil {
		return nil, fmt.Errorf("toolfold: %w", err)
	}
	gw, err := gateway.New(space, &gateway.Options{
		Name: s.opts.Name, Version: s.opts.Version, Instructions: s.opts.Instructions,
		Mode: mode, Exposition: exp, AnnotateDescriptions: !s.opts.PlainDescriptions,
		ResetTools: s.opts.ResetTools, RefreshingClients: s.opts.RefreshingClients, Logger: s.opts.Logger,
		SearchingClients: s.opts.SearchingClients,
	})
	if err != nil {
		return nil, fmt.Errorf("toolfold: server %q cannot be presented: %w", s.opts.Name, err)
	}
	if s.opts.Logger != nil {
		for _, w := range res.Warnings {
			s.opts.Logger.Warn(w)
		}
	}
	return gw, nil
}

// Run serves one client over t until the client disconnects or ctx ends.
// With *mcp.StdioTransport or *mcp.IOTransport it reads the client's first
// message before choosing its mode, as the gateway does; other transports
// serve the mode an unnamed client would get.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	gw, err := s.gateway()
	if err != nil {
		return err
	}
	switch t := t.(type) {
	case *mcp.StdioTransport:
		return gw.ServeStdio(ctx, stdin{}, stdout{})
	case *mcp.IOTransport:
		return gw.ServeStdio(ctx, t.Reader, t.Writer)
	}
	session, err := gw.ServerFor(gateway.ClientInfo{}).Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	return session.Wait()
}

// Connect serves one client over t for a client that identifies itself as
// client; it returns once the session has started. It is what tests and
// in-process embedders use.
func (s *Server) Connect(ctx context.Context, t mcp.Transport, clientName string) (*mcp.ServerSession, error) {
	gw, err := s.gateway()
	if err != nil {
		return nil, err
	}
	return gw.ServerFor(gateway.ClientInfo{Name: clientName}).Connect(ctx, t, nil)
}

// Handler serves streamable HTTP MCP with a view per session. Mount it at
// /mcp. It fails if the server's tools and groups do not fit together.
func (s *Server) Handler(opts *HTTPOptions) (http.Handler, error) {
	gw, err := s.gateway()
	if err != nil {
		return nil, err
	}
	var o gateway.HTTPOptions
	if opts != nil {
		o = gateway.HTTPOptions{Stateless: opts.Stateless, SessionTimeout: opts.SessionTimeout}
	}
	return gw.HTTPHandler(&o)
}

// Options returns the options the server was made with, for the toolfold
// command, which serves library servers through its own gateway.
func (s *Server) Options() Options { return s.opts }
