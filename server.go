package toolfold

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/libspec"
	"github.com/toolfold/toolfold/internal/view"
)

// Server is an MCP server whose tools live in groups. Build it with
// NewServer, add groups and tools, then serve it with Run, Connect or
// Handler. Tools, groups and Includes added while it serves take effect
// at once, as with the SDK's own server: clients whose list changed get
// notifications/tools/list_changed. One that cannot be served (see
// ErrUnknownTool) is logged to Options.Logger, and the server goes on
// serving what it served before.
type Server struct {
	opts Options

	mu      sync.Mutex
	serving bool // set once the gateway starts building; later changes update it
	groups  []*Group
	tools   []*catalog.Tool
	// members maps a group to the tools placed in it, in the order added.
	members map[*Group][]catalog.ToolID

	once sync.Once
	gw   *gateway.Gateway
	err  error
	// updating keeps catalog updates after serving starts one at a time.
	updating sync.Mutex
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
	for _, g := range s.groups {
		if g.id == id {
			s.mu.Unlock()
			return g
		}
	}
	g := &Group{srv: s, id: id, parent: parent}
	if opts != nil {
		g.opts = *opts
	}
	s.groups = append(s.groups, g)
	serving := s.serving
	s.mu.Unlock()
	if serving {
		s.update()
	}
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
	for _, n := range toolNames {
		s.members[g] = append(s.members[g], catalog.ToolID(n))
	}
	serving := s.serving
	s.mu.Unlock()
	if serving {
		s.update()
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
	if slices.ContainsFunc(s.tools, func(c *catalog.Tool) bool { return c.Name == t.Name }) {
		s.mu.Unlock()
		panic(fmt.Sprintf("toolfold: AddTool %q: a tool of that name was already added; tool names are unique across the whole server, whatever their group, so rename one (to put one tool in several groups, add it once and use Group.Include)", t.Name))
	}
	ct := &catalog.Tool{ID: catalog.ToolID(t.Name), Name: t.Name, Source: s.opts.Name, Def: t, Handler: h}
	s.tools = append(s.tools, ct)
	if g != nil {
		s.members[g] = append(s.members[g], ct.ID)
	}
	serving := s.serving
	s.mu.Unlock()
	if serving {
		s.update()
	}
}

// update serves what was added so far, once the server serves. It waits
// for a build in progress, which may or may not have seen the change.
func (s *Server) update() {
	gw, err := s.gateway()
	if err != nil {
		return // the build failed: nothing is served, and Run said why
	}
	s.updating.Lock()
	defer s.updating.Unlock()
	space, _, err := s.space()
	if err == nil {
		err = gw.Update(space)
	}
	if err != nil && s.opts.Logger != nil {
		s.opts.Logger.Error("a tool or group added while serving cannot be served; serving the tools and groups as they were", "err", err)
	}
}

// AddTool adds a tool whose handler takes typed input and output, like
// mcp.AddTool: the input schema is inferred from In unless t has one, the
// output schema from Out unless Out is any; each call's arguments get the
// input schema's defaults and are validated against it before they are
// unmarshalled into In (invalid ones are a tool error the agent reads);
// the output is validated against the output schema (a mismatch is an
// error of the call, as in the SDK) and becomes structuredContent plus the
// same JSON as text. An error from the handler becomes a tool error the
// agent can read; a *jsonrpc.Error is a protocol error, as in the SDK. A
// nil pointer result is sent as its element type's zero value.
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

// typedTool does what the SDK's mcp.AddTool does before it registers a
// tool. The SDK keeps that step unexported and binds it to its own
// *mcp.Server, whose handlers only run inside one of its sessions, so it
// is repeated here with the same schema library and the same rules.
func typedTool[In, Out any](t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) (*mcp.Tool, mcp.ToolHandler, error) {
	tt := *t
	th := &typedHandler[In, Out]{tool: &tt, h: h}
	if err := th.resolveInput(); err != nil {
		return nil, nil, err
	}
	if err := th.resolveOutput(); err != nil {
		return nil, nil, err
	}
	return &tt, th.call, nil
}

// typedHandler is the handler typedTool makes: it checks and decodes the
// arguments into In, calls h, and encodes its Out as structured content.
type typedHandler[In, Out any] struct {
	tool *mcp.Tool
	h    mcp.ToolHandlerFor[In, Out]
	in   *jsonschema.Resolved
	out  *jsonschema.Resolved // nil when Out is any and no schema is given
	wrap bool                 // Out is not an object: send {"result": out}
	// elemZero stands in for a nil pointer result, which would be JSON
	// null, as in the SDK.
	elemZero any
}

// resolveInput sets the tool's input schema, given or inferred from In,
// which must describe an object.
func (th *typedHandler[In, Out]) resolveInput() error {
	tt := th.tool
	if tt.InputSchema == nil && reflect.TypeFor[In]() == reflect.TypeFor[any]() {
		tt.InputSchema = &jsonschema.Schema{Type: "object"}
	}
	inSchema, err := schemaFor[In](tt.InputSchema)
	if err != nil {
		return fmt.Errorf("input schema: %w", err)
	}
	if inSchema.Type != "object" {
		return fmt.Errorf("input type %v must be a struct or map (schema type %q), since tool arguments are an object", reflect.TypeFor[In](), inSchema.Type)
	}
	if tt.InputSchema == nil {
		tt.InputSchema = inSchema
	}
	if th.in, err = inSchema.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true}); err != nil {
		return fmt.Errorf("input schema: %w", err)
	}
	return nil
}

// resolveOutput sets the tool's output schema, given or inferred from Out
// and wrapped when Out is not an object.
func (th *typedHandler[In, Out]) resolveOutput() error {
	tt := th.tool
	outType := reflect.TypeFor[Out]()
	if outType.Kind() == reflect.Pointer {
		th.elemZero = reflect.Zero(outType.Elem()).Interface()
	}
	if tt.OutputSchema == nil && outType == reflect.TypeFor[any]() {
		return nil
	}
	s, err := schemaFor[Out](tt.OutputSchema)
	if err != nil {
		return fmt.Errorf("output schema: %w", err)
	}
	if tt.OutputSchema == nil {
		s, th.wrap = objectOutputSchema(s)
		tt.OutputSchema = s
	}
	if th.out, err = s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true}); err != nil {
		return fmt.Errorf("output schema: %w", err)
	}
	return nil
}

func (th *typedHandler[In, Out]) call(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args, err := applyInputSchema(req.Params.Arguments, th.in)
	if err != nil {
		return errorResult(fmt.Errorf("the arguments do not fit %s: %w", th.tool.Name, err)), nil
	}
	var in In
	if err := json.Unmarshal(args, &in); err != nil {
		return errorResult(fmt.Errorf("the arguments do not fit %s: %w", th.tool.Name, err)), nil
	}
	res, out, err := th.h(ctx, req, in)
	if err != nil {
		if rpcErr, ok := err.(*jsonrpc.Error); ok {
			return nil, rpcErr
		}
		return errorResult(err), nil
	}
	if res == nil {
		res = &mcp.CallToolResult{}
	}
	if err := th.structured(res, out); err != nil {
		return nil, err
	}
	return res, nil
}

// structured puts out into res as structured content, checked against the
// output schema, and as text content when res has none.
func (th *typedHandler[In, Out]) structured(res *mcp.CallToolResult, out Out) error {
	var v any = out
	if res.InputRequests != nil {
		v = nil // input requests and content are exclusive on the wire
	} else if th.elemZero != nil && reflect.ValueOf(out).IsNil() {
		v = th.elemZero
	}
	if v == nil {
		return nil
	}
	if th.wrap {
		v = wrappedResult{Result: v}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding the output of %s: %w", th.tool.Name, err)
	}
	if b, err = applyOutputSchema(b, th.out); err != nil {
		return fmt.Errorf("the output of %s does not fit its output schema: %w", th.tool.Name, err)
	}
	res.StructuredContent = json.RawMessage(b)
	if res.Content == nil {
		res.Content = []mcp.Content{&mcp.TextContent{Text: string(b)}}
	}
	return nil
}

// schemaFor is the schema a tool gave (any value that marshals to one), or
// else the one inferred from T, a pointer read as what it points to.
func schemaFor[T any](given any) (*jsonschema.Schema, error) {
	switch s := given.(type) {
	case *jsonschema.Schema:
		if s == nil {
			return nil, errors.New("the schema is a nil *jsonschema.Schema")
		}
		return s, nil
	case nil:
		rt := reflect.TypeFor[T]()
		if rt.Kind() == reflect.Pointer {
			rt = rt.Elem()
		}
		return jsonschema.ForType(rt, &jsonschema.ForOptions{})
	}
	b, err := json.Marshal(given)
	if err != nil {
		return nil, fmt.Errorf("encoding the schema: %w", err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("reading the schema: %w", err)
	}
	return &s, nil
}

// applyInputSchema fills in the schema's defaults and validates the
// arguments; missing arguments are an empty object, so that defaults
// still apply.
func applyInputSchema(raw json.RawMessage, resolved *jsonschema.Resolved) (json.RawMessage, error) {
	v := map[string]any{}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("arguments must be a JSON object: %w", err)
		}
	}
	var a any = v
	before, _ := json.Marshal(a)
	if err := resolved.ApplyDefaults(&a); err != nil {
		return nil, fmt.Errorf("applying defaults: %w", err)
	}
	if err := resolved.Validate(&a); err != nil {
		return nil, err
	}
	after, err := json.Marshal(a)
	if err != nil {
		return nil, err
	}
	if bytes.Equal(before, after) && len(raw) > 0 && string(raw) != "null" {
		// Nothing was filled in: the arguments as sent, since decoding
		// into any turns large integers into floats.
		return raw, nil
	}
	return after, nil
}

// applyOutputSchema fills in an object result's defaults and validates it.
func applyOutputSchema(b []byte, resolved *jsonschema.Resolved) ([]byte, error) {
	if resolved == nil {
		return b, nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	if v == nil && resolved.Schema().Type == "object" {
		v = map[string]any{} // a nil map, as the SDK reads it
	}
	_, isObject := v.(map[string]any)
	var before []byte
	if isObject {
		before, _ = json.Marshal(v)
		if err := resolved.ApplyDefaults(&v); err != nil {
			return nil, fmt.Errorf("applying defaults: %w", err)
		}
	}
	if err := resolved.Validate(&v); err != nil {
		return nil, err
	}
	if !isObject {
		return b, nil
	}
	after, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if bytes.Equal(before, after) {
		// Nothing was filled in: the result as the tool encoded it, since
		// decoding into any turns large integers into floats.
		return b, nil
	}
	return after, nil
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
// object schema as it is, anything else wrapped in an object under
// ResultKey. It reports whether results must be wrapped.
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
// It refuses what the add methods could not: a group's unknown exposition,
// an Include of a tool never added, an exclusion of a group never added.
func (s *Server) spec() (catalog.Spec, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	spec := catalog.Spec{Tools: make([]*catalog.Tool, len(s.tools)), ReadOnly: s.opts.ReadOnly}
	toolNames := make([]string, len(s.tools))
	for i, t := range s.tools {
		c := *t
		spec.Tools[i] = &c
		toolNames[i] = t.Name
	}
	for _, g := range s.groups {
		exp, err := g.opts.Exposition.internal()
		if err != nil {
			return spec, fmt.Errorf("toolfold: group %q: %w %q: use ExpositionFlat or ExpositionGrouped, or leave it empty for the server's default", g.id, ErrBadExposition, g.opts.Exposition)
		}
		for _, id := range s.members[g] {
			if !slices.Contains(toolNames, string(id)) {
				return spec, fmt.Errorf("toolfold: group %q includes %q: %w%s; add the tool with AddTool (before or after the Include) or fix the name", g.id, id, ErrUnknownTool, nearest(string(id), toolNames))
			}
		}
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
			return spec, fmt.Errorf("toolfold: cannot exclude group %q: %w%s", name, ErrUnknownGroup, nearest(name, s.groupIDs()))
		}
		spec.Groups[i].Default = catalog.Excluded
	}
	return spec, nil
}

// groupIDs lists the groups' full names; s.mu must be held.
func (s *Server) groupIDs() []string {
	ids := make([]string, len(s.groups))
	for i, g := range s.groups {
		ids[i] = g.id
	}
	return ids
}

// nearest suggests the closest of names to name, for a message.
func nearest(name string, names []string) string {
	if near := catalog.Nearest(name, names, 1); len(near) > 0 {
		return fmt.Sprintf(" (did you mean %q?)", near[0])
	}
	return ""
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
	// From here on every addition updates the gateway; the spec read
	// below holds every one made before.
	s.mu.Lock()
	s.serving = true
	s.mu.Unlock()
	mode, err := s.opts.Mode.internal()
	if err != nil {
		return nil, fmt.Errorf("toolfold: %w %q in Options.Mode: use ModeAuto, ModeFlat, ModeGroups, ModeGrouped or ModeSearch", ErrBadMode, s.opts.Mode)
	}
	exp, err := s.opts.Exposition.internal()
	if err != nil {
		return nil, fmt.Errorf("toolfold: %w %q in Options.Exposition: use ExpositionFlat or ExpositionGrouped", ErrBadExposition, s.opts.Exposition)
	}
	s.mu.Lock()
	ids := s.groupIDs()
	s.mu.Unlock()
	for _, g := range s.opts.InitialGroups {
		if !slices.Contains(ids, g) {
			return nil, fmt.Errorf("toolfold: initial group %q: %w%s; add it with Server.Group or drop it from Options.InitialGroups", g, ErrUnknownGroup, nearest(g, ids))
		}
	}
	space, warnings, err := s.space()
	if err != nil {
		return nil, err
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
		for _, w := range warnings {
			s.opts.Logger.Warn(w)
		}
	}
	return gw, nil
}

// space builds the catalog of what was added so far and the views' space
// over it, with the catalog's warnings.
func (s *Server) space() (*view.Space, []string, error) {
	spec, err := s.spec()
	if err != nil {
		return nil, nil, err
	}
	initial := make([]catalog.GroupID, len(s.opts.InitialGroups))
	for i, g := range s.opts.InitialGroups {
		initial[i] = catalog.GroupID(g)
	}
	// The engine alone: catalog, views, gateway. The config loader and the
	// upstream machinery (internal/assemble) stay out of library programs.
	res, err := catalog.Build(spec)
	if err != nil {
		return nil, nil, fmt.Errorf("toolfold: the tools and groups of server %q do not fit together: %w", s.opts.Name, err)
	}
	space, err := view.NewSpace(res.Catalog, &view.Options{MaxTools: s.opts.MaxTools, InitialGroups: initial, HideUngrouped: s.opts.HideUngrouped})
	if err != nil {
		return nil, nil, fmt.Errorf("toolfold: %w", err)
	}
	return space, res.Warnings, nil
}

// Run serves one client over t until the client disconnects or ctx ends;
// when ctx ends first it closes the session and returns ctx.Err(). With
// *mcp.StdioTransport or *mcp.IOTransport it reads the client's first
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
	session, err := gw.Connect(ctx, gateway.ClientInfo{}, t)
	if err != nil {
		return err
	}
	return gateway.WaitOrCancel(ctx, session)
}

// Connect serves one client over t for a client that identifies itself as
// client; it returns once the session has started. It is what tests and
// in-process embedders use.
func (s *Server) Connect(ctx context.Context, t mcp.Transport, clientName string) (*mcp.ServerSession, error) {
	gw, err := s.gateway()
	if err != nil {
		return nil, err
	}
	return gw.Connect(ctx, gateway.ClientInfo{Name: clientName}, t)
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
