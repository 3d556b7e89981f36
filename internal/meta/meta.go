package meta

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/view"
)

// Names are the meta-tools' wire names; config may rename them.
type Names struct {
	Enable   string
	Disable  string
	Reset    string
	Find     string
	Describe string
	Call     string
	Guidance string
}

// DefaultNames are the meta-tools' names unless the config renames them.
func DefaultNames() Names {
	return Names{Enable: "enable_tools", Disable: "disable_tools", Reset: "reset_tools",
		Find: "find_tools", Describe: "describe_tools", Call: "call_tool", Guidance: "guidance"}
}

// WithDefaults fills empty names with the defaults.
func (n Names) WithDefaults() Names {
	d := DefaultNames()
	fill := func(v *string, def string) {
		if *v == "" {
			*v = def
		}
	}
	fill(&n.Enable, d.Enable)
	fill(&n.Disable, d.Disable)
	fill(&n.Reset, d.Reset)
	fill(&n.Find, d.Find)
	fill(&n.Describe, d.Describe)
	fill(&n.Call, d.Call)
	fill(&n.Guidance, d.Guidance)
	return n
}

// All lists every meta-tool name, for collision checks.
func (n Names) All() []string {
	return []string{n.Enable, n.Disable, n.Reset, n.Find, n.Describe, n.Call, n.Guidance}
}

// Kind identifies a meta-tool independent of its wire name.
type Kind int

const (
	NotMeta  Kind = iota // a catalog tool's name, or nothing known
	Enable               // enable_tools
	Disable              // disable_tools
	Reset                // reset_tools
	Find                 // find_tools
	Describe             // describe_tools
	Call                 // call_tool
	Guidance             // guidance
)

// Kind tells which meta-tool a wire name is.
func (n Names) Kind(name string) Kind {
	switch name {
	case n.Enable:
		return Enable
	case n.Disable:
		return Disable
	case n.Reset:
		return Reset
	case n.Find:
		return Find
	case n.Describe:
		return Describe
	case n.Call:
		return Call
	case n.Guidance:
		return Guidance
	}
	return NotMeta
}

// GroupInfo describes a group in results and descriptions.
type GroupInfo struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Tools counts the group's tools and those of the groups inside it.
	Tools int `json:"tools"`
	// Groups counts the groups right inside it.
	Groups int `json:"groups,omitempty"`
}

// ToolInfo describes a newly visible wire tool, so a client that never
// refreshes its list can still call it through call_tool.
type ToolInfo struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// InputSchema is left out when the answer has no room for it; Call
	// still says how to call the tool.
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	// Call is the tool's compact call signature (Signature).
	Call string `json:"call"`
}

// toolInfo describes w for a result.
func toolInfo(w *expose.Wire) ToolInfo {
	return ToolInfo{Name: w.Name, Description: w.Tool.Description, InputSchema: w.InputSchema(), Call: Signature(w)}
}

// boundTools keeps an answer within AnswerBudget: every tool keeps its
// name and call signature, its input schema while the schemas fit a
// quarter of the budget; past a third, tools are only counted.
func boundTools(tools []ToolInfo) ([]ToolInfo, int) {
	schemas, all := 0, 0
	for i := range tools {
		t := &tools[i]
		t.Description = expose.Summary(t.Description, 200)
		all += len(t.Name) + len(t.Call) + len(t.Description) + 40
		if all > AnswerBudget/3 && i > 0 {
			return tools[:i], len(tools) - i
		}
		schemas += len(t.InputSchema)
		if schemas > AnswerBudget/4 {
			t.InputSchema = nil
		}
	}
	return tools, 0
}

// EnableResult is what enable_tools returns.
type EnableResult struct {
	Enabled         []string          `json:"enabled"`
	EnabledGroups   []string          `json:"enabled_groups"`
	AvailableTools  []string          `json:"available_tools"`
	AvailableGroups []GroupInfo       `json:"available_groups"`
	Errors          []view.GroupError `json:"errors"`
	Instructions    map[string]string `json:"instructions,omitempty"`
	Tools           []ToolInfo        `json:"tools"`
	// More counts newly available tools left out of Tools, MoreGroups
	// groups left out of AvailableGroups, to keep the answer within
	// AnswerBudget.
	More       int `json:"more_tools,omitempty"`
	MoreGroups int `json:"more_groups,omitempty"`
	// Inside are the groups right inside the groups enabled, each with the
	// exact call that enables it: a split server's tools are all there.
	// MoreInside counts those left out to keep the answer short.
	Inside     []GroupCall `json:"groups_inside,omitempty"`
	MoreInside int         `json:"more_groups_inside,omitempty"`
	Note       string      `json:"note,omitempty"`
}

// GroupCall is a group with its size and the call that enables it.
type GroupCall struct {
	Name  string `json:"name"`
	Tools int    `json:"tools"`
	Call  string `json:"call"`
}

// insideCalls lists the groups right inside gs with their enable calls,
// those that fit a quarter of AnswerBudget; the rest are counted.
func insideCalls(n Names, gs []*catalog.Group) ([]GroupCall, int) {
	var out []GroupCall
	used, more := 0, 0
	for _, g := range gs {
		for _, c := range g.Children {
			call, _ := json.Marshal(map[string][]string{"groups": {string(c.ID)}})
			gc := GroupCall{Name: string(c.ID), Tools: subtreeTools(c), Call: n.Enable + " " + string(call)}
			used += len(gc.Name) + len(gc.Call) + 30
			if used > AnswerBudget/4 && len(out) > 0 {
				more++
				continue
			}
			out = append(out, gc)
		}
	}
	return out, more
}

// withoutInside leaves out of gs the groups listed in inside.
func withoutInside(gs []GroupInfo, inside []GroupCall) []GroupInfo {
	return slices.DeleteFunc(gs, func(g GroupInfo) bool {
		return slices.ContainsFunc(inside, func(c GroupCall) bool { return c.Name == g.Name })
	})
}

// DisableResult is what disable_tools returns.
type DisableResult struct {
	Disabled       []string          `json:"disabled"`
	EnabledGroups  []string          `json:"enabled_groups"`
	AvailableTools []string          `json:"available_tools"`
	Errors         []view.GroupError `json:"errors"`
}

// ResetResult is what reset_tools returns.
type ResetResult struct {
	Enabled        []string          `json:"enabled"`
	Disabled       []string          `json:"disabled"`
	EnabledGroups  []string          `json:"enabled_groups"`
	AvailableTools []string          `json:"available_tools"`
	Errors         []view.GroupError `json:"errors"`
	Instructions   map[string]string `json:"instructions,omitempty"`
	Tools          []ToolInfo        `json:"tools"`
	More           int               `json:"more_tools,omitempty"`
}

// GroupsArgs are the arguments of enable_tools and disable_tools.
type GroupsArgs struct {
	Groups StringList `json:"groups"`
}

// DoEnable runs enable_tools on v.
func DoEnable(n Names, v *view.View, e *expose.Exposure, args GroupsArgs) (*EnableResult, *view.Change) {
	ch := v.Enable(args.Groups)
	res := &EnableResult{
		Enabled:         groupNames(ch.Enabled),
		EnabledGroups:   enabledNames(e.Catalog(), ch.After),
		AvailableTools:  wireNames(e.Listed(ch.After)),
		AvailableGroups: groupInfos(e, insideFirst(v.Enableable(), ch.Enabled)),
		Errors:          nonNil(ch.Errors),
		Instructions:    instructions(ch.Enabled),
	}
	res.Errors = append(res.Errors, unavailableErrors(e.Catalog(), args.Groups, time.Now())...)
	res.Tools, res.More = boundTools(newlyListed(e, ch))
	res.Inside, res.MoreInside = insideCalls(n, ch.Enabled)
	res.AvailableGroups, res.MoreGroups = boundGroups(withoutInside(res.AvailableGroups, res.Inside))
	if len(args.Groups) == 0 {
		res.Note = "No groups given: pass {\"groups\": [\"<name>\"]} with names from available_groups."
	}
	return res, ch
}

// DoDescribeGroups is enable_tools for a client without a view, whose
// list never changes: it enables nothing and returns, for each group named,
// its instructions and the wire definitions of its own tools (as groups/get
// would), for call_tool. A child group may be named without its parent.
// The Change it returns changes nothing; it carries the groups described
// and the errors.
func DoDescribeGroups(n Names, v *view.View, e *expose.Exposure, args GroupsArgs) (*EnableResult, *view.Change) {
	snap := v.Snapshot()
	ch := &view.Change{Before: snap, After: snap}
	listed := map[string]bool{}
	for _, w := range e.Listed(snap) {
		listed[w.Name] = true
	}
	res := &EnableResult{
		EnabledGroups:   enabledNames(e.Catalog(), snap),
		AvailableTools:  wireNames(e.Listed(snap)),
		AvailableGroups: groupInfos(e, e.Catalog().Roots()),
		Tools:           []ToolInfo{},
	}
	seenTool := map[string]bool{}
	for _, name := range args.Groups {
		g, ok := e.Catalog().Group(catalog.GroupID(name))
		if !ok {
			near := catalog.Nearest(name, e.Catalog().GroupIDs(), 3)
			msg := fmt.Sprintf("there is no group %q", name)
			if len(near) > 0 {
				msg += "; did you mean " + strings.Join(quoteAll(near), " or ") + "?"
			} else {
				msg += fmt.Sprintf("; the %s description lists the groups", n.Enable)
			}
			ch.Errors = append(ch.Errors, view.GroupError{Group: name, Reason: view.Unknown, Nearest: near, Message: msg})
			continue
		}
		ch.Enabled = append(ch.Enabled, g)
		for _, w := range e.GroupWires(g) {
			if seenTool[w.Name] || listed[w.Name] {
				continue
			}
			seenTool[w.Name] = true
			res.Tools = append(res.Tools, toolInfo(w))
		}
	}
	res.Tools, res.More = boundTools(res.Tools)
	res.Inside, res.MoreInside = insideCalls(n, ch.Enabled)
	res.AvailableGroups, res.MoreGroups = boundGroups(res.AvailableGroups)
	res.Enabled = groupNames(ch.Enabled)
	res.Errors = append(nonNil(ch.Errors), unavailableErrors(e.Catalog(), args.Groups, time.Now())...)
	res.Instructions = instructions(ch.Enabled)
	res.Note = fmt.Sprintf("Your tool list does not change: call these tools through %s with the names and parameters in \"tools\".", n.Call)
	if len(args.Groups) == 0 {
		res.Note = "No groups given: pass {\"groups\": [\"<name>\"]} with names from available_groups."
	}
	return res, ch
}

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, s := range names {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// DoDisable runs disable_tools on v.
func DoDisable(v *view.View, e *expose.Exposure, args GroupsArgs) (*DisableResult, *view.Change) {
	ch := v.Disable(args.Groups)
	return &DisableResult{
		Disabled:       groupNames(ch.Disabled),
		EnabledGroups:  enabledNames(e.Catalog(), ch.After),
		AvailableTools: wireNames(e.Listed(ch.After)),
		Errors:         nonNil(ch.Errors),
	}, ch
}

// DoReset runs reset_tools on v: args maps group names to their final state.
func DoReset(v *view.View, e *expose.Exposure, args map[string]bool) (*ResetResult, *view.Change) {
	ch := v.Reset(args)
	res := &ResetResult{
		Enabled:        groupNames(ch.Enabled),
		Disabled:       groupNames(ch.Disabled),
		EnabledGroups:  enabledNames(e.Catalog(), ch.After),
		AvailableTools: wireNames(e.Listed(ch.After)),
		Errors:         nonNil(ch.Errors),
		Instructions:   instructions(ch.Enabled),
	}
	res.Tools, res.More = boundTools(newlyListed(e, ch))
	return res, ch
}

// HiddenToolMessage explains why a tool in a disabled group cannot be
// called directly, naming the groups that hold it and the exact
// enable_tools call that makes it available.
func HiddenToolMessage(n Names, w *expose.Wire, s view.Snapshot) string {
	var holders []*catalog.Group
	if w.Group != nil {
		holders = []*catalog.Group{w.Group}
	} else {
		holders = w.Target.Groups
	}
	// The cheapest fix enables the fewest groups: the holder with the most
	// ancestors already enabled.
	var best []string
	var names []string
	for _, g := range holders {
		names = append(names, fmt.Sprintf("%q", g.ID))
		var chain []string
		for cur := g; cur != nil; cur = cur.Parent {
			if !s.Enabled.Has(cur.Index) {
				chain = append([]string{string(cur.ID)}, chain...)
			}
		}
		if best == nil || len(chain) < len(best) {
			best = chain
		}
	}
	call, _ := json.Marshal(GroupsArgs{Groups: best})
	what := "group"
	if len(holders) > 1 {
		what = "groups"
	}
	return fmt.Sprintf("%s is in the %s %s, which is not enabled. Call %s with %s to make it available, or call it once without enabling anything through %s with {\"name\": %q, \"arguments\": {...}}.",
		w.Name, what, strings.Join(names, ", "), n.Enable, call, n.Call, w.Name)
}

// UnknownToolMessage names the nearest known tools; for a tool toolfold
// holds (its definition changed since it was pinned) it is the hold's
// refusal instead. Every path that cannot route a name answers with it, so
// a held tool is refused the same way whichever way the call came.
func UnknownToolMessage(n Names, e *expose.Exposure, name string, extra []string) string {
	if note := e.Catalog().HeldNote(catalog.ToolID(name)); note != "" {
		return note
	}
	msg := fmt.Sprintf("there is no tool %q", name)
	if near := e.NearNames().Nearest(name, extra, 3); len(near) > 0 {
		quoted := make([]string, len(near))
		for i, s := range near {
			quoted[i] = fmt.Sprintf("%q", s)
		}
		msg += "; the nearest are " + strings.Join(quoted, ", ")
	}
	if n.Find != "" && e.Mode() != expose.Flat {
		msg += fmt.Sprintf(". %s searches every tool by what it does", n.Find)
	}
	return msg + "."
}

func newlyListed(e *expose.Exposure, ch *view.Change) []ToolInfo {
	before := map[string]bool{}
	for _, w := range e.Listed(ch.Before) {
		before[w.Name] = true
	}
	out := []ToolInfo{}
	for _, w := range e.Listed(ch.After) {
		if !before[w.Name] {
			out = append(out, toolInfo(w))
		}
	}
	return out
}

func instructions(groups []*catalog.Group) map[string]string {
	var out map[string]string
	for _, g := range groups {
		if g.Instructions != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[string(g.ID)] = g.Instructions
		}
	}
	return out
}

func groupNames(gs []*catalog.Group) []string {
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = string(g.ID)
	}
	return out
}

func enabledNames(cat *catalog.Catalog, s view.Snapshot) []string {
	out := []string{}
	s.Enabled.Each(func(i int) { out = append(out, string(cat.Groups()[i].ID)) })
	return out
}

func wireNames(ws []*expose.Wire) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Name
	}
	return out
}

func groupInfos(e *expose.Exposure, gs []*catalog.Group) []GroupInfo {
	out := make([]GroupInfo, len(gs))
	for i, g := range gs {
		out[i] = groupInfo(g)
	}
	return out
}

// insideFirst puts the groups inside those just enabled first: they are
// what the agent came for, and a bounded answer keeps the first.
func insideFirst(gs, enabled []*catalog.Group) []*catalog.Group {
	out := make([]*catalog.Group, 0, len(gs))
	for _, g := range gs {
		if g.Parent != nil && slices.Contains(enabled, g.Parent) {
			out = append(out, g)
		}
	}
	for _, g := range gs {
		if g.Parent == nil || !slices.Contains(enabled, g.Parent) {
			out = append(out, g)
		}
	}
	return out
}

func groupInfo(g *catalog.Group) GroupInfo {
	return GroupInfo{Name: string(g.ID), Description: clip(firstLine(g.Description), 160), Tools: subtreeTools(g), Groups: len(g.Children)}
}

// boundGroups keeps the groups whose entries fit a quarter of
// AnswerBudget, and counts the others (the enable_tools description lists
// them all).
func boundGroups(gs []GroupInfo) ([]GroupInfo, int) {
	used := 0
	for i, g := range gs {
		used += len(g.Name) + len(g.Description) + 40
		if used > AnswerBudget/4 && i > 0 {
			return gs[:i], len(gs) - i
		}
	}
	return gs, 0
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// texter is a result that reads better as text than as its JSON.
type texter interface{ Text() string }

// Result wraps a value as a tool result: the data as structuredContent for
// programs, and for the model a text block it reads once: the value's own
// text when it has one (not the same JSON again, which a model would read
// twice, escaped), else the JSON.
func Result(v any, isError bool) *mcp.CallToolResult {
	if f, ok := v.(*FindResult); ok {
		// find_tools' answer, the one asked for most, goes to the SDK as
		// a value, encoded once on the way out: as JSON bytes it was
		// encoded here, then checked and compacted again by
		// encoding/json, about a tenth of a call at 20,000 tools. It
		// always encodes: toolfold's own strings and finite scores
		// (Find).
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: f.Text()}}, StructuredContent: f, IsError: isError}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ErrorResult("encoding the result failed: " + err.Error())
	}
	text := string(b)
	if t, ok := v.(texter); ok {
		text = t.Text()
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: text}},
		StructuredContent: json.RawMessage(b),
		IsError:           isError,
	}
}

// ErrorResult is a tool error whose text tells the agent what to do.
func ErrorResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}, IsError: true}
}
