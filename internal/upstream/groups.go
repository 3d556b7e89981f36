package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/groupsext"
)

// GroupsExtension is the grouping draft's extension identifier. toolfold
// declares it to every upstream (a server that does not know it ignores
// it); a server that declares it back is read through groups/list and the
// membership _meta of its tools.
const GroupsExtension = groupsext.ID

// SkillsExtension is the identifier of the skills extension (SEP-2640). A
// server that declares it is read through skills/list: each of its skills
// becomes a group (see readSkills).
const SkillsExtension = "io.modelcontextprotocol/skills"

// Wire names the reader uses.
const (
	methodGroupsList         = groupsext.MethodList
	methodSkillsList         = "skills/list"
	notificationGroupsChange = groupsext.NotificationListChanged
)

// Bounds on what one server may declare, so a buggy or hostile server cannot
// make a start (or the catalog) unbounded. What is past them is left out,
// with a warning.
const (
	maxGroupDepth = 8   // nesting levels below a top-level group
	maxGroups     = 256 // groups per server, all levels together, skills included
	maxGroupPages = 64  // pages of groups/list, and of skills/list
	// maxGroupBytes bounds the entries of groups/list (or skills/list)
	// held at once, all pages together: each page is bounded by the
	// message size alone, and 64 of them could take gigabytes.
	maxGroupBytes = 8 << 20
)

// Group is a group an upstream server declared, through the grouping draft
// or as a skill, with its nested groups. The Manager hands these out as the
// server said them (after include/exclude on the tool names); turning them
// into catalog groups is the caller's business.
type Group struct {
	// Name follows the draft's and the skills' rule (1–64 of a-z, 0-9 and
	// single "-").
	Name        string         `json:"name"`
	Title       string         `json:"title,omitempty"`
	Description string         `json:"description,omitempty"`
	Meta        map[string]any `json:"_meta,omitempty"`
	// Instructions are the body of the server's skill of the same name (the
	// draft's groups carry none).
	Instructions string `json:"instructions,omitempty"`
	// Skill is the URI of the SKILL.md the group was read from, if any.
	Skill string `json:"skill,omitempty"`
	// Tools are the server's own names of the group's direct tools. Their
	// definitions are in the server's tool list.
	Tools []string `json:"tools,omitempty"`
	// Groups are the nested groups: those whose _meta names this one first.
	Groups []*Group `json:"groups,omitempty"`
}

// declareExtensions adds what toolfold declares to every upstream: the
// grouping draft unless the server broke its connection over it (off).
// The skills extension needs no client declaration.
func declareExtensions(caps *mcp.ClientCapabilities, off bool) {
	if !off {
		caps.AddExtension(GroupsExtension, map[string]any{})
	}
}

// advertisesGroups reports whether an initialize result advertises the
// grouping draft or the skills extension: either gives groups.
func advertisesGroups(ir *mcp.InitializeResult) bool {
	return servesGrouping(ir) || servesSkills(ir)
}

func servesGrouping(ir *mcp.InitializeResult) bool { return declaresExtension(ir, GroupsExtension) }
func servesSkills(ir *mcp.InitializeResult) bool   { return declaresExtension(ir, SkillsExtension) }

func declaresExtension(ir *mcp.InitializeResult, id string) bool {
	if ir == nil || ir.Capabilities == nil {
		return false
	}
	_, ok := ir.Capabilities.Extensions[id]
	return ok
}

// The wire shapes, decoded leniently: entries are raw so that one malformed
// element costs that element, not the whole answer.
type (
	pageParams struct {
		mcp.ParamsBase
		Cursor string `json:"cursor,omitempty"`
	}
	groupsListResult struct {
		mcp.ResultBase
		Groups     []json.RawMessage `json:"groups"`
		NextCursor string            `json:"nextCursor,omitempty"`
	}
	skillsListResult struct {
		mcp.ResultBase
		Skills     []json.RawMessage `json:"skills"`
		NextCursor string            `json:"nextCursor,omitempty"`
	}
)

// registerGroupMethods lets a client send the extensions' requests, and
// re-reads the groups of a server that serves skills when its resources
// change: skills are resources, and the skills draft signals their coming
// and going with notifications/resources/list_changed only.
func (s *server) registerGroupMethods(client *mcp.Client, c *connection) {
	// These fail only for a standard method's name, which these are not.
	_ = mcp.AddSendingCustomMethod[*pageParams, *groupsListResult](client, methodGroupsList)
	_ = mcp.AddSendingCustomMethod[*pageParams, *skillsListResult](client, methodSkillsList)
	client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/resources/list_changed" {
				if cs := c.live.Load(); cs != nil && servesSkills(cs.InitializeResult()) {
					s.refreshTools(c, cs)
				}
			}
			return next(ctx, method, req)
		}
	})
}

// groupReader reads one server's groups. Every problem is logged and costs
// only the element it is about.
type groupReader struct {
	cs  *mcp.ClientSession
	log *slog.Logger
	// failed says a request failed without a JSON-RPC error: the
	// connection itself may be gone.
	failed bool
}

// readGroups reads a server's groups: those of groups/list if it serves the
// grouping draft, with the tools whose _meta names them, and one per skill
// if it serves skills (see readSkills). It never fails: a server whose
// groups cannot be read has none. failed says a request failed below
// JSON-RPC (the caller checks the connection).
func readGroups(ctx context.Context, cs *mcp.ClientSession, tools []*mcp.Tool, log *slog.Logger) (groups []*Group, failed bool) {
	r := &groupReader{cs: cs, log: log}
	ir := cs.InitializeResult()
	var flat []*Group
	if servesGrouping(ir) {
		flat = r.list(ctx)
		r.members(flat, tools)
	}
	if servesSkills(ir) {
		flat = r.readSkills(ctx, flat, tools)
	}
	if len(flat) > maxGroups {
		r.warn(fmt.Sprintf("the server declares more than %d groups; the rest are left out", maxGroups))
		flat = flat[:maxGroups]
	}
	return r.nest(flat), r.failed
}

// noteFailure records a request error that is not the server's JSON-RPC
// answer.
func (r *groupReader) noteFailure(err error) {
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) {
		r.failed = true
	}
}

func (r *groupReader) warn(msg string, args ...any) {
	r.log.Warn("upstream groups: "+msg, args...)
}

// pages calls a paginated method until it has no next cursor and returns
// every raw entry: what the draft's and the skills' lists have in common.
func (r *groupReader) pages(ctx context.Context, method string, call func(cursor string) ([]json.RawMessage, string, error)) []json.RawMessage {
	var out []json.RawMessage
	cursors := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		if page == maxGroupPages {
			r.warn(fmt.Sprintf("%s has more than %d pages; the rest are left out", method, maxGroupPages))
			return out
		}
		items, next, err := call(cursor)
		if err != nil {
			r.noteFailure(err)
			r.warn(method+" failed; what it would list is left out", "error", err)
			return out
		}
		out = append(out, items...)
		if next == "" {
			return out
		}
		// Paging stops as soon as no more could be kept: what is past the
		// bounds would be left out anyway, and holding it costs memory.
		if len(out) > maxGroups {
			r.warn(fmt.Sprintf("%s lists more than %d entries; paging stops there and the rest are left out", method, maxGroups))
			return out
		}
		if n := rawBytes(out); n > maxGroupBytes {
			r.warn(fmt.Sprintf("%s entries exceed %d MiB; paging stops there and the rest are left out", method, maxGroupBytes>>20), "bytes", n)
			return out
		}
		if cursors[next] {
			r.warn(method+" returned a cursor it had returned before; listing stops there", "cursor", next)
			return out
		}
		cursors[next] = true
		cursor = next
	}
}

func rawBytes(items []json.RawMessage) int {
	n := 0
	for _, it := range items {
		n += len(it)
	}
	return n
}

// list reads every page of groups/list and returns the valid groups, in
// the server's order.
func (r *groupReader) list(ctx context.Context) []*Group {
	raws := r.pages(ctx, methodGroupsList, func(cursor string) ([]json.RawMessage, string, error) {
		res, err := mcp.CallCustomMethod[*pageParams, *groupsListResult](ctx, r.cs, methodGroupsList, &pageParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.Groups, res.NextCursor, nil
	})
	var out []*Group
	names := map[string]bool{}
	for i, raw := range raws {
		g, ok := r.entry(raw, fmt.Sprintf("groups/list entry #%d", i+1))
		if !ok {
			continue
		}
		if names[g.Name] {
			r.warn("groups/list names a group twice; the repeat is ignored", "group", g.Name)
			continue
		}
		names[g.Name] = true
		out = append(out, g)
	}
	return out
}

// entry decodes and checks one group entry; where says where it was found.
func (r *groupReader) entry(raw json.RawMessage, where string) (*Group, bool) {
	var e groupsext.Group
	if err := json.Unmarshal(raw, &e); err != nil {
		r.warn("a group entry is malformed; it is skipped", "where", where, "error", err)
		return nil, false
	}
	if !validGroupName(e.Name) {
		r.warn("a group name breaks the draft's rule (1-64 of a-z, 0-9 and single '-'); the group is skipped", "where", where, "group", e.Name)
		return nil, false
	}
	return &Group{Name: e.Name, Title: e.Title, Description: e.Description, Meta: e.Meta}, true
}

// validGroupName is the rule toolfold's own groups/list follows, which is
// the skills' naming rule too. The draft leaves names opaque; toolfold
// keeps them to what it can serve on as group and skill names alike.
func validGroupName(name string) bool { return groupsext.Valid(name) }

// members fills each group's Tools from the membership _meta of the
// server's tools, in the tools' order.
func (r *groupReader) members(groups []*Group, tools []*mcp.Tool) {
	byName := make(map[string]*Group, len(groups))
	for _, g := range groups {
		byName[g.Name] = g
	}
	for _, t := range tools {
		for _, name := range groupsext.MetaGroups(t.Meta) {
			g, ok := byName[name]
			if !ok {
				r.warn("a tool names a group that groups/list does not list; that membership is ignored", "tool", t.Name, "group", name)
				continue
			}
			if !slices.Contains(g.Tools, t.Name) {
				g.Tools = append(g.Tools, t.Name)
			}
		}
	}
}

// nest turns the flat list into a tree by each group's _meta parents. The
// catalog gives a group one parent: a group that names several is nested
// under the first it names that makes no cycle and is known; one that
// names none of those is top-level. Groups deeper than maxGroupDepth are
// left out.
func (r *groupReader) nest(flat []*Group) []*Group {
	byName := make(map[string]*Group, len(flat))
	for _, g := range flat {
		byName[g.Name] = g
	}
	parent := map[string]string{}
	// above reports whether anc is p or one of p's ancestors so far.
	above := func(anc, p string) bool {
		for n := p; n != ""; n = parent[n] {
			if n == anc {
				return true
			}
		}
		return false
	}
	for _, g := range flat {
		named := groupsext.MetaGroups(g.Meta)
		for _, p := range named {
			switch {
			case byName[p] == nil:
				r.warn("a group names a parent that groups/list does not list; that parent is ignored", "group", g.Name, "parent", p)
				continue
			case above(g.Name, p):
				r.warn("a group's parents make a cycle; that parent is ignored", "group", g.Name, "parent", p)
				continue
			}
			parent[g.Name] = p
			break
		}
		if len(named) > 1 {
			r.log.Info("upstream groups: a group has several parents; toolfold nests it under one", "group", g.Name, "parents", named, "under", parent[g.Name])
		}
	}
	depth := func(name string) int {
		d := 0
		for n := parent[name]; n != ""; n = parent[n] {
			d++
		}
		return d
	}
	var top []*Group
	for _, g := range flat {
		g.Groups = nil
	}
	for _, g := range flat {
		switch p := parent[g.Name]; {
		case p == "":
			top = append(top, g)
		case depth(g.Name) > maxGroupDepth:
			r.warn(fmt.Sprintf("groups nest deeper than %d levels; the deeper ones are left out", maxGroupDepth), "group", g.Name, "parent", p)
		default:
			byName[p].Groups = append(byName[p].Groups, g)
		}
	}
	if top == nil {
		top = []*Group{}
	}
	return top
}

// filterGroups applies include/exclude to the groups' tool names. Groups
// left empty stay: their nested groups or their instructions may matter,
// and the catalog reports empty groups itself.
func (s *server) filterGroups(groups []*Group) []*Group {
	if groups == nil {
		return nil
	}
	out := make([]*Group, 0, len(groups))
	for _, g := range groups {
		c := *g
		c.Tools = nil
		for _, t := range g.Tools {
			if s.allowed(t) {
				c.Tools = append(c.Tools, t)
			}
		}
		c.Groups = s.filterGroups(g.Groups)
		out = append(out, &c)
	}
	return out
}
