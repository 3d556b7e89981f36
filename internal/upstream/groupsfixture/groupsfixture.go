// Package groupsfixture is an MCP server, for tests, that gives its tools
// groups in either of the two shapes the ecosystem defines, or both:
//
//   - the grouping draft (io.modelcontextprotocol/grouping): it declares
//     the extension with {"listChanged": true}, answers groups/list
//     (paginated, every group, nesting by each group's
//     _meta["io.modelcontextprotocol/groups"]), names each tool's groups
//     in the same _meta key of tools/list, and sends
//     notifications/groups/list_changed when its groups change;
//   - skills (SEP-2640, io.modelcontextprotocol/skills) read as groups:
//     it answers skills/list and skills/get and serves each SKILL.md as a
//     skill:// resource, whose frontmatter names the skill's tools under
//     metadata["io.modelcontextprotocol/tools"].
//
// It is built on the Go SDK, which lets a server receive custom methods but
// not send custom notifications; groups/list_changed is written on the
// connection itself (see Transport).
//
// The groups-fixture directory holds the same server as a stdio program for
// end-to-end tests; ModeEnv picks its shapes.
package groupsfixture

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The identifiers and the key the fixture serves.
const (
	GroupingExtension = "io.modelcontextprotocol/grouping"
	SkillsExtension   = "io.modelcontextprotocol/skills"
	// MetaKey lists a tool's (or a group's) groups in its _meta.
	MetaKey = "io.modelcontextprotocol/groups"
	// SkillToolsKey lists a skill's tools in its frontmatter's metadata.
	SkillToolsKey = "io.modelcontextprotocol/tools"
)

// Mode says which shapes the fixture serves.
type Mode int

const (
	// Grouping serves the grouping draft.
	Grouping Mode = 1 << iota
	// Skills serves skills.
	Skills
)

// ParseMode reads a mode as ModeEnv holds it: "grouping", "skills" or
// "grouping,skills"; empty is Grouping.
func ParseMode(s string) (Mode, error) {
	if s == "" {
		return Grouping, nil
	}
	var m Mode
	for _, part := range strings.Split(s, ",") {
		switch strings.TrimSpace(part) {
		case "grouping":
			m |= Grouping
		case "skills":
			m |= Skills
		default:
			return 0, fmt.Errorf("unknown fixture mode %q: want grouping, skills or both, comma-separated", part)
		}
	}
	return m, nil
}

// Environment of the stdio programs built on the fixture.
const (
	// InstructionsEnv holds their initialize instructions.
	InstructionsEnv = "GROUPS_FIXTURE_INSTRUCTIONS"
	// IntrudeEnv holds Options.Intrude, comma-separated.
	IntrudeEnv = "GROUPS_FIXTURE_INTRUDE"
	// QuoteEnv holds Options.Quote.
	QuoteEnv = "GROUPS_FIXTURE_QUOTE"
	// ModeEnv holds their mode (see ParseMode).
	ModeEnv = "GROUPS_FIXTURE_MODE"
)

// Options configure the fixture.
type Options struct {
	Mode         Mode
	Instructions string // of the initialize result
	// Hostile settings, for tests of what toolfold takes in from an
	// upstream. Quote is put at the end of every description, title and
	// skill body, and in a schema's text, as a server quoting its token
	// back would. Intrude adds the tool "intruder", whose _meta names these
	// groups, which groups/list does not list.
	Quote   string
	Intrude []string
}

// Group is one group the fixture serves through the grouping draft.
type Group struct {
	Name, Title, Description string
	// Parents are the groups it belongs to, in its _meta.
	Parents []string
}

// Skill is one skill the fixture serves.
type Skill struct {
	// Path locates it: skill://<Path>/SKILL.md; its last segment is the name.
	Path, Description, Body string
	// Tools are named in the frontmatter's metadata (none: no key).
	Tools []string
	// Files are its other files, by path relative to the skill.
	Files map[string]string
}

func (k *Skill) name() string { return k.Path[strings.LastIndex(k.Path, "/")+1:] }

// URI is where its SKILL.md is served.
func (k *Skill) URI() string { return "skill://" + k.Path + "/SKILL.md" }

// Text is its SKILL.md.
func (k *Skill) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\nname: %s\ndescription: %s\n", k.name(), k.Description)
	if len(k.Tools) > 0 {
		fmt.Fprintf(&b, "metadata:\n  %s: %q\n", SkillToolsKey, strings.Join(k.Tools, " "))
	}
	fmt.Fprintf(&b, "---\n\n%s\n", k.Body)
	return b.String()
}

func (k *Skill) frontmatter() map[string]any {
	f := map[string]any{"name": k.name(), "description": k.Description}
	if len(k.Tools) > 0 {
		f["metadata"] = map[string]any{SkillToolsKey: strings.Join(k.Tools, " ")}
	}
	return f
}

// Server is the fixture: an SDK server plus its groups and skills.
type Server struct {
	*mcp.Server
	mode Mode
	// quote is the hostile Options.Quote.
	quote string

	mu     sync.Mutex
	groups []*Group // in groups/list order
	skills []*Skill // in skills/list order
	// member holds each tool's groups, for its _meta.
	member map[string][]string
	tools  map[string]*mcp.Tool
	// conns are the live connections, for notifications the SDK cannot send.
	conns []mcp.Connection
	// pageSize is how many entries one groups/list or skills/list page holds.
	pageSize int
}

// New returns the fixture in Grouping mode.
func New() *Server { return NewWith(Options{Mode: Grouping}) }

// NewInstructed is New with the instructions its initialize result carries.
func NewInstructed(instructions string) *Server {
	return NewWith(Options{Mode: Grouping, Instructions: instructions})
}

// NewWith returns the fixture with its default catalog:
//
//	echo            ungrouped
//	open_wiki       ungrouped; adds the group (and skill) "wiki" holding
//	                read_page, and says so
//	read_page       ungrouped until open_wiki
//	create_issue, list_issues, search     group/skill issues
//	add_label       group labels (nested in issues); skill team/labels
//	list_repos, search                    group/skill repos
//
// as skills also "writing", which names no tools and has a supporting
// file. The skills carry the instructions (the draft's groups have none).
// groups/list and skills/list return one entry per page, so a client must
// follow cursors.
func NewWith(o Options) *Server {
	s := &Server{mode: o.Mode, member: map[string][]string{}, tools: map[string]*mcp.Tool{}, pageSize: 1, quote: o.Quote}
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}
	if o.Mode&Grouping != 0 {
		caps.AddExtension(GroupingExtension, map[string]any{"listChanged": true})
	}
	if o.Mode&Skills != 0 {
		caps.AddExtension(SkillsExtension, map[string]any{})
		caps.Resources = &mcp.ResourceCapabilities{ListChanged: true}
	}
	s.Server = mcp.NewServer(&mcp.Implementation{Name: "groups-fixture", Version: "1.0.0"}, &mcp.ServerOptions{Capabilities: caps, Instructions: o.Instructions})

	if o.Mode&Grouping != 0 {
		s.groups = []*Group{
			{Name: "issues", Title: "Issues", Description: "Issue tracking"},
			{Name: "labels", Description: "Issue labels", Parents: []string{"issues"}},
			{Name: "repos", Description: "Repositories"},
		}
		s.member = map[string][]string{
			"create_issue": {"issues"}, "list_issues": {"issues"}, "search": {"issues", "repos"},
			"add_label": {"labels"}, "list_repos": {"repos"},
		}
	}
	if o.Quote != "" {
		for _, g := range s.groups {
			g.Title += " " + o.Quote
			g.Description += " " + o.Quote
		}
	}
	if o.Mode&Skills != 0 {
		s.skills = []*Skill{
			{Path: "issues", Description: "Issue tracking", Body: "Search before creating an issue.", Tools: []string{"create_issue", "list_issues", "search"}},
			{Path: "team/labels", Description: "Issue labels", Body: "A label must exist before it is added.", Tools: []string{"add_label"}},
			{Path: "repos", Description: "Repositories", Body: "Prefer the default branch.", Tools: []string{"list_repos", "search"}},
			{Path: "writing", Description: "How to write issue text", Body: "Write short titles. See references/style.md.",
				Files: map[string]string{"references/style.md": "Use the imperative mood.\n"}},
		}
		for _, k := range s.skills {
			if o.Quote != "" {
				k.Description += " " + o.Quote
				k.Body += " " + o.Quote
			}
			s.serveSkillFiles(k)
		}
	}

	s.addTool("echo", "Echo the text back", map[string]any{"text": map[string]any{"type": "string"}}, "text")
	s.addTool("create_issue", "Create an issue with a title", map[string]any{"title": map[string]any{"type": "string"}}, "title")
	s.addTool("list_issues", "List the open issues", nil)
	s.addTool("search", "Search issues and repositories", map[string]any{"query": map[string]any{"type": "string"}}, "query")
	s.addTool("add_label", "Add a label to an issue", map[string]any{"issue": map[string]any{"type": "integer"}, "label": map[string]any{"type": "string"}}, "issue", "label")
	s.addTool("list_repos", "List the repositories", nil)
	s.addTool("read_page", "Read a wiki page", map[string]any{"page": map[string]any{"type": "string"}}, "page")
	if len(o.Intrude) > 0 {
		s.member["intruder"] = slices.Clone(o.Intrude)
		s.addTool("intruder", "Join groups the server does not declare", nil)
	}
	s.Server.AddTool(&mcp.Tool{Name: "open_wiki", Description: "Add the wiki group", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s.OpenWiki(ctx)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "wiki opened"}}}, nil
		})

	if o.Mode&Grouping != 0 {
		must(mcp.AddReceivingCustomMethod(s.Server, "groups/list", s.listGroups))
	}
	if o.Mode&Skills != 0 {
		must(mcp.AddReceivingCustomMethod(s.Server, "skills/list", s.listSkills))
		must(mcp.AddReceivingCustomMethod(s.Server, "skills/get", s.getSkill))
	}
	return s
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// addTool adds (or replaces) a tool that answers "<name> <arguments as
// JSON>", its groups in its _meta.
func (s *Server) addTool(name, description string, props map[string]any, required ...string) {
	schema := map[string]any{"type": "object"}
	if props != nil {
		schema["properties"] = props
	}
	if len(required) > 0 {
		schema["required"] = required
	}
	t := &mcp.Tool{Name: name, Description: description, InputSchema: schema}
	if s.quote != "" {
		t.Description += " " + s.quote
		t.Title = name + " " + s.quote
		schema["description"] = "Arguments; the token is " + s.quote
	}
	s.mu.Lock()
	if groups := s.member[name]; len(groups) > 0 {
		t.Meta = mcp.Meta{MetaKey: slices.Clone(groups)}
	}
	s.tools[name] = t
	s.mu.Unlock()
	s.Server.AddTool(t, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := string(req.Params.Arguments)
		if args == "" {
			args = "{}"
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " " + args}}}, nil
	})
}

// OpenWiki adds the group (and the skill) "wiki" holding read_page, and
// tells every connected client as each shape says: groups/list_changed
// for the group, tools/list_changed for read_page's new _meta (the SDK
// sends it as the tool is replaced), resources/list_changed for the
// skill's SKILL.md (the SDK sends it as the resource is added).
func (s *Server) OpenWiki(ctx context.Context) {
	s.mu.Lock()
	grouping := s.mode&Grouping != 0 && !slices.ContainsFunc(s.groups, func(g *Group) bool { return g.Name == "wiki" })
	if grouping {
		s.groups = append(s.groups, &Group{Name: "wiki", Description: "The project wiki"})
		s.member["read_page"] = []string{"wiki"}
	}
	var skill *Skill
	if s.mode&Skills != 0 && !slices.ContainsFunc(s.skills, func(k *Skill) bool { return k.Path == "wiki" }) {
		skill = &Skill{Path: "wiki", Description: "The project wiki", Body: "Pages are case-sensitive.", Tools: []string{"read_page"}}
		s.skills = append(s.skills, skill)
	}
	conns := slices.Clone(s.conns)
	s.mu.Unlock()
	if grouping {
		s.addTool("read_page", "Read a wiki page", map[string]any{"page": map[string]any{"type": "string"}}, "page")
		for _, c := range conns {
			_ = c.Write(ctx, &jsonrpc.Request{Method: "notifications/groups/list_changed"})
		}
	}
	if skill != nil {
		s.serveSkillFiles(skill)
	}
}

// serveSkillFiles adds a skill's files as resources.
func (s *Server) serveSkillFiles(k *Skill) {
	s.Server.AddResource(&mcp.Resource{URI: k.URI(), Name: k.name(), Description: k.Description, MIMEType: "text/markdown"}, text(k.URI(), k.Text()))
	for _, p := range slices.Sorted(maps.Keys(k.Files)) {
		uri := "skill://" + k.Path + "/" + p
		s.Server.AddResource(&mcp.Resource{URI: uri, Name: p, MIMEType: "text/markdown"}, text(uri, k.Files[p]))
	}
}

func text(uri, body string) mcp.ResourceHandler {
	return func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: body}}}, nil
	}
}

// PageParams are the params of groups/list and skills/list.
type PageParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

// Entry is a group as groups/list shows it.
type Entry struct {
	Name        string         `json:"name"`
	Title       string         `json:"title,omitempty"`
	Description string         `json:"description,omitempty"`
	Meta        map[string]any `json:"_meta,omitempty"`
}

// ListResult is the result of groups/list.
type ListResult struct {
	mcp.ResultBase
	Groups     []Entry `json:"groups"`
	NextCursor string  `json:"nextCursor,omitempty"`
}

// page cuts the page a cursor starts of n entries.
func (s *Server) page(p *PageParams, n int) (start, end int, next string, err error) {
	if p != nil && p.Cursor != "" {
		start, err = strconv.Atoi(p.Cursor)
		if err != nil || start < 0 || start > n {
			return 0, 0, "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid cursor %q", p.Cursor)}
		}
	}
	end = min(start+s.pageSize, n)
	if end < n {
		next = strconv.Itoa(end)
	}
	return start, end, next, nil
}

func (s *Server) listGroups(_ context.Context, _ *mcp.ServerSession, p *PageParams) (*ListResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	start, end, next, err := s.page(p, len(s.groups))
	if err != nil {
		return nil, err
	}
	res := &ListResult{Groups: []Entry{}, NextCursor: next}
	for _, g := range s.groups[start:end] {
		e := Entry{Name: g.Name, Title: g.Title, Description: g.Description}
		if len(g.Parents) > 0 {
			e.Meta = map[string]any{MetaKey: slices.Clone(g.Parents)}
		}
		res.Groups = append(res.Groups, e)
	}
	return res, nil
}

// SkillEntry is a skill as skills/list and skills/get show it.
type SkillEntry struct {
	URI         string         `json:"uri"`
	Frontmatter map[string]any `json:"frontmatter"`
	Resources   []SkillFile    `json:"resources"`
}

// SkillFile is one file of a skill with its digest and size.
type SkillFile struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int    `json:"size"`
}

// SkillsResult is the result of skills/list.
type SkillsResult struct {
	mcp.ResultBase
	ResultType string       `json:"resultType"`
	Skills     []SkillEntry `json:"skills"`
	NextCursor string       `json:"nextCursor,omitempty"`
	TTLMs      int          `json:"ttlMs"`
	CacheScope string       `json:"cacheScope"`
}

// SkillParams are the params of skills/get.
type SkillParams struct {
	mcp.ParamsBase
	URI string `json:"uri"`
}

// SkillResult is the result of skills/get.
type SkillResult struct {
	mcp.ResultBase
	ResultType string     `json:"resultType"`
	Skill      SkillEntry `json:"skill"`
	TTLMs      int        `json:"ttlMs"`
	CacheScope string     `json:"cacheScope"`
}

func file(uri, body string) SkillFile {
	sum := sha256.Sum256([]byte(body))
	return SkillFile{URI: uri, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: len(body)}
}

func (k *Skill) entry() SkillEntry {
	e := SkillEntry{URI: k.URI(), Frontmatter: k.frontmatter(), Resources: []SkillFile{file(k.URI(), k.Text())}}
	for _, p := range slices.Sorted(maps.Keys(k.Files)) {
		e.Resources = append(e.Resources, file("skill://"+k.Path+"/"+p, k.Files[p]))
	}
	return e
}

func (s *Server) listSkills(_ context.Context, _ *mcp.ServerSession, p *PageParams) (*SkillsResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	start, end, next, err := s.page(p, len(s.skills))
	if err != nil {
		return nil, err
	}
	res := &SkillsResult{ResultType: "complete", Skills: []SkillEntry{}, NextCursor: next, TTLMs: 0, CacheScope: "public"}
	for _, k := range s.skills[start:end] {
		res.Skills = append(res.Skills, k.entry())
	}
	return res, nil
}

func (s *Server) getSkill(_ context.Context, _ *mcp.ServerSession, p *SkillParams) (*SkillResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range s.skills {
		if p != nil && k.URI() == p.URI {
			return &SkillResult{ResultType: "complete", Skill: k.entry(), CacheScope: "public"}, nil
		}
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no such skill"}
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
