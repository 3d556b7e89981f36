package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// GroupsExtension is the identifier of the draft groups extension
// ("Progressive Disclosure via Groups"). A server that advertises it under
// capabilities.extensions is read through groups/list and groups/get; toolfold
// declares it to every upstream (a server that does not know it ignores it).
const GroupsExtension = "io.modelcontextprotocol/groups"

// Wire names of the extension.
const (
	methodGroupsList         = "groups/list"
	methodGroupsGet          = "groups/get"
	notificationGroupsChange = "notifications/groups/list_changed"
	// codeUnknownGroup is groups/get's error for a name the server does not have.
	codeUnknownGroup = -32002
)

// Bounds on what one server may declare, so a buggy or hostile server cannot
// make a start (or the catalog) unbounded. What is past them is left out,
// with a warning.
const (
	maxGroupDepth = 8   // nesting levels below a top-level group
	maxGroups     = 256 // groups per server, all levels together
	maxGroupPages = 64  // groups/list pages
)

// groupNamePattern is the extension's rule for group names: 1–64 lowercase
// letters and digits, in words joined by single hyphens.
var groupNamePattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// Group is a group an upstream server declared through the groups extension,
// with its nested groups. The Manager hands these out as the server said them
// (after include/exclude on the tool names); turning them into catalog groups
// is the caller's business.
type Group struct {
	// Name follows the extension's rule (1–64 of a-z, 0-9 and single "-").
	Name        string         `json:"name"`
	Title       string         `json:"title,omitempty"`
	Description string         `json:"description,omitempty"`
	Meta        map[string]any `json:"_meta,omitempty"`
	// Instructions are what groups/get returned for the group.
	Instructions string `json:"instructions,omitempty"`
	// Tools are the server's own names of the group's direct tools. Their
	// definitions are in the server's tool list.
	Tools []string `json:"tools,omitempty"`
	// Groups are the nested groups, from the group's contents.groups.
	Groups []*Group `json:"groups,omitempty"`
}

// advertisesGroups reports whether an initialize result advertises the
// groups extension.
func advertisesGroups(ir *mcp.InitializeResult) bool {
	if ir == nil || ir.Capabilities == nil {
		return false
	}
	_, ok := ir.Capabilities.Extensions[GroupsExtension]
	return ok
}

// The extension's wire shapes, decoded leniently: entries and tools are raw
// so that one malformed element costs that element, not the whole answer.
type (
	groupsListParams struct {
		mcp.ParamsBase
		Cursor string `json:"cursor,omitempty"`
	}
	groupsListResult struct {
		mcp.ResultBase
		Groups     []json.RawMessage `json:"groups"`
		NextCursor string            `json:"nextCursor,omitempty"`
	}
	groupsGetParams struct {
		mcp.ParamsBase
		Name string `json:"name"`
	}
	groupsGetResult struct {
		mcp.ResultBase
		Instructions string `json:"instructions,omitempty"`
		Contents     *struct {
			Tools  []json.RawMessage `json:"tools,omitempty"`
			Groups []json.RawMessage `json:"groups,omitempty"`
			// Prompts and resources are not folded by toolfold (yet).
		} `json:"contents,omitempty"`
	}
	groupEntry struct {
		Name        string         `json:"name"`
		Title       string         `json:"title,omitempty"`
		Description string         `json:"description,omitempty"`
		Meta        map[string]any `json:"_meta,omitempty"`
	}
)

// registerGroupMethods lets a client send the extension's requests.
func registerGroupMethods(c *mcp.Client) {
	// These fail only for a standard method's name, which these are not.
	_ = mcp.AddSendingCustomMethod[*groupsListParams, *groupsListResult](c, methodGroupsList)
	_ = mcp.AddSendingCustomMethod[*groupsGetParams, *groupsGetResult](c, methodGroupsGet)
}

// groupReader walks one server's groups: every page of groups/list, then
// groups/get for each group and, depth first, for its nested groups. Every
// problem is logged and costs only the element it is about.
type groupReader struct {
	cs  *mcp.ClientSession
	log *slog.Logger
	// seen holds every group name taken (or listed at the top level), so a
	// cycle or a group nested in two places is read once.
	seen  map[string]bool
	count int
	// tools are the scoped tools' definitions, first definition of a name
	// first; toolSeen indexes them.
	tools    []*mcp.Tool
	toolSeen map[string]bool
	tooMany  bool
	// failed says a request failed without a JSON-RPC error: the
	// connection itself may be gone.
	failed bool
}

// readGroups reads a server's groups and the definitions of their tools. It
// never fails: a server whose groups cannot be read has none. failed says a
// request failed below JSON-RPC (the caller checks the connection).
func readGroups(ctx context.Context, cs *mcp.ClientSession, log *slog.Logger) (groups []*Group, scoped []*mcp.Tool, failed bool) {
	r := &groupReader{cs: cs, log: log, seen: map[string]bool{}, toolSeen: map[string]bool{}}
	top := r.list(ctx)
	for _, e := range top {
		r.seen[e.Name] = true
	}
	groups = []*Group{}
	for _, e := range top {
		if g := r.get(ctx, e, 0); g != nil {
			groups = append(groups, g)
		}
	}
	return groups, r.tools, r.failed
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

// list reads every page of groups/list and returns the valid entries.
func (r *groupReader) list(ctx context.Context) []groupEntry {
	var out []groupEntry
	names := map[string]bool{}
	cursors := map[string]bool{}
	cursor := ""
	entries := 0 // every entry met, for messages
	for page := 0; ; page++ {
		if page == maxGroupPages {
			r.warn(fmt.Sprintf("groups/list has more than %d pages; the rest are left out", maxGroupPages))
			return out
		}
		res, err := mcp.CallCustomMethod[*groupsListParams, *groupsListResult](ctx, r.cs, methodGroupsList, &groupsListParams{Cursor: cursor})
		if err != nil {
			r.noteFailure(err)
			r.warn("groups/list failed; the groups it would list are left out", "error", err)
			return out
		}
		for _, raw := range res.Groups {
			entries++
			e, ok := r.entry(raw, fmt.Sprintf("groups/list entry #%d", entries))
			if !ok {
				continue
			}
			if names[e.Name] {
				r.warn("groups/list names a group twice; the repeat is ignored", "group", e.Name)
				continue
			}
			names[e.Name] = true
			out = append(out, e)
		}
		if res.NextCursor == "" {
			return out
		}
		if cursors[res.NextCursor] {
			r.warn("groups/list returned a cursor it had returned before; listing stops there", "cursor", res.NextCursor)
			return out
		}
		cursors[res.NextCursor] = true
		cursor = res.NextCursor
	}
}

// entry decodes and checks one group entry; where says where it was found.
func (r *groupReader) entry(raw json.RawMessage, where string) (groupEntry, bool) {
	var e groupEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		r.warn("a group entry is malformed; it is skipped", "where", where, "error", err)
		return e, false
	}
	if !validGroupName(e.Name) {
		r.warn("a group name breaks the extension's rule (1-64 of a-z, 0-9 and single '-'); the group is skipped", "where", where, "group", e.Name)
		return e, false
	}
	if e.Description == "" {
		// Required by the draft, but nothing depends on it: keep the group.
		r.warn("a group has no description", "group", e.Name)
	}
	return e, true
}

func validGroupName(name string) bool {
	return len(name) <= 64 && groupNamePattern.MatchString(name)
}

// get reads one group's contents and, below it, its nested groups. depth is
// 0 for a top-level group.
func (r *groupReader) get(ctx context.Context, e groupEntry, depth int) *Group {
	if r.count >= maxGroups {
		if !r.tooMany {
			r.tooMany = true
			r.warn(fmt.Sprintf("the server declares more than %d groups; the rest are left out", maxGroups))
		}
		return nil
	}
	r.count++
	res, err := mcp.CallCustomMethod[*groupsGetParams, *groupsGetResult](ctx, r.cs, methodGroupsGet, &groupsGetParams{Name: e.Name})
	if err != nil {
		r.noteFailure(err)
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) && rpcErr.Code == codeUnknownGroup {
			r.warn("groups/get says a group the server listed does not exist; it is skipped", "group", e.Name)
		} else {
			r.warn("groups/get failed; the group is skipped", "group", e.Name, "error", err)
		}
		return nil
	}
	g := &Group{Name: e.Name, Title: e.Title, Description: e.Description, Meta: e.Meta, Instructions: res.Instructions}
	if res.Contents == nil {
		return g
	}
	for i, raw := range res.Contents.Tools {
		var t mcp.Tool
		if err := json.Unmarshal(raw, &t); err != nil || t.Name == "" {
			r.warn("a tool in groups/get is malformed; it is skipped", "group", e.Name, "tool", fmt.Sprintf("#%d", i+1), "error", errorOf(err))
			continue
		}
		if slices.Contains(g.Tools, t.Name) {
			continue
		}
		g.Tools = append(g.Tools, t.Name)
		if !r.toolSeen[t.Name] {
			r.toolSeen[t.Name] = true
			r.tools = append(r.tools, &t)
		}
	}
	for i, raw := range res.Contents.Groups {
		child, ok := r.entry(raw, fmt.Sprintf("contents.groups #%d of %q", i+1, e.Name))
		if !ok {
			continue
		}
		if r.seen[child.Name] {
			r.warn("a group is nested in more than one place, or in itself; only its first place is kept", "group", child.Name, "parent", e.Name)
			continue
		}
		if depth+1 > maxGroupDepth {
			r.warn(fmt.Sprintf("groups nest deeper than %d levels; the deeper ones are left out", maxGroupDepth), "group", child.Name, "parent", e.Name)
			continue
		}
		r.seen[child.Name] = true
		if c := r.get(ctx, child, depth+1); c != nil {
			g.Groups = append(g.Groups, c)
		}
	}
	return g
}

// mergeTools is the server's tool list with the scoped tools it left out of
// tools/list appended: a tool in both is one tool (the tools/list definition).
func mergeTools(listed, scoped []*mcp.Tool) []*mcp.Tool {
	if len(scoped) == 0 {
		return listed
	}
	have := make(map[string]bool, len(listed))
	for _, t := range listed {
		have[t.Name] = true
	}
	out := slices.Clone(listed)
	for _, t := range scoped {
		if !have[t.Name] {
			have[t.Name] = true
			out = append(out, t)
		}
	}
	return out
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
