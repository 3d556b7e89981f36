package meta

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/search"
	"github.com/toolfold/toolfold/internal/view"
)

// Discovery answers find_tools, describe_tools and guidance over one
// exposure. It is built once per exposure and shared by every session.
type Discovery struct {
	names Names
	expo  *expose.Exposure
	index *search.Index

	toolsCost ToolsCost
	costOnce  sync.Once
	cost      []int // by group index: tokens its tools add when enabled

	summary []string // by tool index: the sentence that tells it apart
	// calls caches, by tool index, the call signature of the wire a hit
	// routes to: it reads the tool's schema, and at 20,000 tools it was
	// a seventh of a find_tools call. Filled on first use, not at start.
	calls []atomic.Pointer[signature]
}

// signature is a wire tool's call signature, with the wire it was made of:
// an entry made of another wire (an exposure sharing the cache routes the
// name elsewhere) is made again.
type signature struct {
	wire *expose.Wire
	call string
}

// signature is Signature(w) for the tool at index i, cached.
func (d *Discovery) signature(i int, w *expose.Wire) string {
	if s := d.calls[i].Load(); s != nil && s.wire == w {
		return s.call
	}
	s := &signature{wire: w, call: Signature(w)}
	d.calls[i].Store(s)
	return s.call
}

// ToolsCost counts the tokens a list of tool definitions puts in a model's
// context.
type ToolsCost func(tools []*mcp.Tool) int

// EstimateToolsCost is the ToolsCost used when none is given: one token per
// four bytes of the tools' JSON, the usual rule of thumb. It keeps a
// tokenizer's tables out of programs that only need a rough figure.
func EstimateToolsCost(tools []*mcp.Tool) int {
	b, err := json.Marshal(map[string]any{"tools": tools})
	if err != nil {
		return 0
	}
	return (len(b) + 3) / 4
}

// Over returns a Discovery over e, another mode's exposure of the same
// catalog, that shares d's search index and summaries instead of building
// them again: they read only the catalog and the flat wire tools, which e
// shares with d's exposure when it was built with expose.Options.Share.
// When e's flat wire tools are not d's, it indexes e anew.
func (d *Discovery) Over(e *expose.Exposure, cost ToolsCost) *Discovery {
	if e.Space() != d.expo.Space() {
		return NewDiscovery(d.names, e, cost)
	}
	for _, t := range e.Catalog().Tools() {
		if e.FlatWire(t) != d.expo.FlatWire(t) {
			return NewDiscovery(d.names, e, cost)
		}
	}
	if cost == nil {
		cost = EstimateToolsCost
	}
	return &Discovery{names: d.names, expo: e, toolsCost: cost, index: d.index, summary: d.summary, calls: d.calls}
}

// NewDiscovery indexes every tool of e's catalog under its flat wire name,
// the name call_tool accepts in every mode. cost measures groups for
// guidance; nil means EstimateToolsCost.
func NewDiscovery(n Names, e *expose.Exposure, cost ToolsCost) *Discovery {
	cat := e.Catalog()
	docs := make([]search.Doc, 0, len(cat.Tools()))
	parents := map[string]string{}
	for _, g := range cat.Groups() {
		if g.Parent != nil {
			parents[string(g.ID)] = string(g.Parent.ID)
		}
	}
	// The parameters and groups of every tool are carved out of shared
	// chunks: allocations per tool and parameter would be most of the
	// garbage an index build makes at 20,000 tools, and one growing slice
	// would copy itself over and over.
	var (
		texts  []expose.ParamText
		vals   []string
		params chunk[search.Param]
		values chunk[string]
		groups chunk[search.GroupInfo]
	)
	for _, t := range cat.Tools() {
		w := e.FlatWire(t)
		doc := search.Doc{ID: w.Name, Name: t.Name, Prefix: prefixOf(t), Title: t.Def.Title, Description: t.Def.Description}
		if t.Def.Annotations != nil && doc.Title == "" {
			doc.Title = t.Def.Annotations.Title
		}
		texts, vals = w.AppendParamTexts(texts[:0], vals[:0])
		if len(texts) > 0 {
			doc.Params = params.carve(len(texts))
			for i, p := range texts {
				doc.Params[i] = search.Param{Name: p.Name, Description: p.Description}
				if len(p.Enum) > 0 {
					doc.Params[i].Values = values.carve(len(p.Enum))
					copy(doc.Params[i].Values, p.Enum)
				}
			}
		}
		n := 0
		for _, g := range t.Groups {
			for cur := g; cur != nil; cur = cur.Parent {
				n++
			}
		}
		if n > 0 {
			doc.Groups = groups.carve(n)
			i := 0
			for _, g := range t.Groups {
				for cur := g; cur != nil; cur = cur.Parent {
					doc.Groups[i] = search.GroupInfo{Name: string(cur.ID), Description: indexText(cur)}
					i++
				}
			}
		}
		docs = append(docs, doc)
	}
	if cost == nil {
		cost = EstimateToolsCost
	}
	return &Discovery{names: n, expo: e, toolsCost: cost, index: search.New(docs, &search.Options{GroupParents: parents}), summary: summaries(cat),
		calls: make([]atomic.Pointer[signature], len(cat.Tools()))}
}

// chunk hands out small slices of large shared arrays, a new array when
// the current one has too little room left: NewDiscovery's docs hold
// their parameters and groups this way.
type chunk[T any] struct{ buf []T }

// chunkLen is how many elements a chunk holds, unless one request needs
// more.
const chunkLen = 4096

// carve returns n zeroed elements, clipped so that appending to them
// cannot reach the next caller's.
func (c *chunk[T]) carve(n int) []T {
	if cap(c.buf)-len(c.buf) < n {
		c.buf = make([]T, 0, max(n, chunkLen))
	}
	start := len(c.buf)
	c.buf = c.buf[:start+n]
	return c.buf[start : start+n : start+n]
}

// summaryLen bounds a tool's one-line summary in find_tools.
const summaryLen = 140

// summaries gives each tool the first sentence of its description that
// tells it apart: a sentence that opens most descriptions of its source
// ("This is the public Twilio REST API.") says nothing about the tool and
// is skipped.
func summaries(cat *catalog.Catalog) []string {
	bySource := map[string][]*catalog.Tool{}
	for _, t := range cat.Tools() {
		bySource[t.Source] = append(bySource[t.Source], t)
	}
	out := make([]string, len(cat.Tools()))
	for _, tools := range bySource {
		rest := make([]string, len(tools))
		for i, t := range tools {
			rest[i] = strings.TrimSpace(t.Def.Description)
		}
		for range 2 {
			opening := map[string]int{}
			for _, r := range rest {
				opening[expose.Summary(r, len(r))]++
			}
			stripped := false
			for i, r := range rest {
				first := expose.Summary(r, len(r))
				if n := opening[first]; n >= 3 && 2*n >= len(tools) && len(first) < len(r) {
					rest[i] = strings.TrimSpace(strings.TrimPrefix(r, first))
					stripped = true
				}
			}
			if !stripped {
				break
			}
		}
		for i, t := range tools {
			out[t.Index] = expose.Summary(rest[i], summaryLen)
		}
	}
	return out
}

// indexText is what search reads of a group: a description written by
// hand (the config's, the upstream's), but none that toolfold made from the
// tools (a derived group's, a server's summary): those only repeat the
// words of the tools themselves, names of other tools among them, which
// would make each tool of a server match all of them. The group's name is
// indexed either way.
func indexText(g *catalog.Group) string {
	if g.Derived || generated(g.Description) {
		return ""
	}
	return g.Description
}

// generated tells a server summary made from its tools ("Twilio (197
// tools): ..."), which has no other mark on the group.
func generated(desc string) bool {
	head, _, ok := strings.Cut(desc, ": ")
	return ok && strings.HasSuffix(head, " tools)") || strings.HasSuffix(head, " (1 tool)")
}

// prefixOf is the namespace part of a tool's ID ("github" for
// "github__create_issue"), or "" for tools without one.
func prefixOf(t *catalog.Tool) string {
	id := string(t.ID)
	if id == t.Name || !strings.HasSuffix(id, t.Name) {
		return ""
	}
	return strings.TrimRight(id[:len(id)-len(t.Name)], "_-.:/")
}

// FindArgs are find_tools' arguments.
type FindArgs struct {
	Query string `json:"query"`
	// Queries are other phrasings of the same need, ranked with Query in
	// one call (search.MaxPhrasings in all); one string is read as a list
	// of one, as groups and names are.
	Queries StringList `json:"queries,omitempty"`
	Limit   int        `json:"limit,omitempty"`
	Group   string     `json:"group,omitempty"`
}

// phrasings are the call's distinct non-blank phrasings, Query first.
func (a FindArgs) phrasings() []string {
	return search.DistinctPhrasings(append([]string{a.Query}, a.Queries...))
}

// FoundTool is one ranked tool.
type FoundTool struct {
	Name  string `json:"name"`
	Group string `json:"group,omitempty"`
	// Call is the tool's call signature (Signature), so that a model can
	// call it without describing it first.
	Call        string  `json:"call"`
	Description string  `json:"description"`
	Score       float64 `json:"score"`
}

// FoundGroup is one ranked group.
type FoundGroup struct {
	Name        string  `json:"name"`
	Description string  `json:"description,omitempty"`
	Tools       int     `json:"tools"`
	Enabled     bool    `json:"enabled"`
	Score       float64 `json:"score"`
}

// FindResult is what find_tools returns.
type FindResult struct {
	Tools  []FoundTool  `json:"tools"`
	Groups []FoundGroup `json:"groups"`
	Next   string       `json:"next"`
	// Unavailable says which MCP servers failed to start, so their tools
	// cannot be found, why, and when toolfold tries again.
	Unavailable []string `json:"unavailable,omitempty"`
	// Held says which tools named like the query toolfold does not serve
	// (a definition changed since it was pinned, a server a reload
	// removed), and what an operator does about it: without it an agent
	// tells its user no such tool exists.
	Held []string `json:"held,omitempty"`
}

// maxFindLimit keeps one search from flooding the context.
const maxFindLimit = 50

// Find runs find_tools.
func (d *Discovery) Find(args FindArgs, s view.Snapshot) (*FindResult, error) {
	phrasings := args.phrasings()
	switch {
	case len(phrasings) == 0:
		return nil, fmt.Errorf(`%s needs a query: a few words as tools are named, e.g. {"query": "create issue github"}`, d.names.Find)
	case len(phrasings) > search.MaxPhrasings:
		return nil, fmt.Errorf(`%s ranks up to %d phrasings of one need; this call has %d (query and queries together): keep the %d that differ most, e.g. {"query": "create issue github", "queries": ["open bug report"]}`,
			d.names.Find, search.MaxPhrasings, len(phrasings), search.MaxPhrasings)
	}
	cat := d.expo.Catalog()
	if args.Group != "" {
		if _, ok := cat.Group(catalog.GroupID(args.Group)); !ok {
			return nil, fmt.Errorf("there is no group %q%s; leave \"group\" out to search everything", args.Group, didYouMean(args.Group, cat.GroupIDs()))
		}
	}
	limit := args.Limit
	if limit <= 0 {
		limit = search.DefaultLimit
	}
	limit = min(limit, maxFindLimit)
	// Groups with no tools of their own are dropped below: ask for more,
	// so that as many groups as tools remain.
	hits, groups := d.index.FindPhrasings(phrasings, &search.SearchOptions{Limit: limit + extraGroups, Group: args.Group})
	hits = hits[:min(len(hits), limit)]
	// One phrasing is ranked on the index's own scale, several are fused
	// on 0-1, each phrasing relative to its best hit: dividing one
	// phrasing's scores by its best puts both on the fused scale.
	toolTop, groupTop := 1.0, 1.0
	if len(phrasings) == 1 {
		if len(hits) > 0 && hits[0].Score > 0 {
			toolTop = hits[0].Score
		}
		if len(groups) > 0 && groups[0].Score > 0 {
			groupTop = groups[0].Score
		}
	}
	res := &FindResult{Tools: []FoundTool{}, Groups: []FoundGroup{}, Unavailable: unavailableNotes(cat, args.Group, time.Now())}
	if args.Group == "" {
		res.Held = heldNotes(cat, phrasings)
	}
	for _, h := range hits {
		w, ok := d.expo.Route(h.ID)
		if !ok || w.Target == nil {
			continue
		}
		ft := FoundTool{Name: w.Name, Call: d.signature(w.Target.Index, w), Description: d.summary[w.Target.Index], Score: round(h.Score / toolTop)}
		if len(w.Target.Groups) > 0 {
			ft.Group = string(w.Target.Groups[0].ID)
		}
		res.Tools = append(res.Tools, ft)
	}
	res.Groups = foundGroups(cat, groups, groupTop, limit, s)
	res.Next = d.next(len(res.Tools) > 0)
	return res, nil
}

// foundGroups are the ranked groups worth showing, at most limit, their
// scores divided by top.
func foundGroups(cat *catalog.Catalog, groups []search.GroupHit, top float64, limit int, s view.Snapshot) []FoundGroup {
	out := []FoundGroup{}
	for _, gh := range groups {
		g, ok := cat.Group(catalog.GroupID(gh.Name))
		// A group with no tools of its own (a server split into derived
		// groups) offers nothing to enable or search that its children do
		// not: its children are the hits worth reading.
		if !ok || len(g.Tools) == 0 || gh.Score < minGroupScore*top {
			continue
		}
		if len(out) == limit {
			break
		}
		out = append(out, FoundGroup{Name: gh.Name, Description: firstLine(g.Description), Tools: len(g.Tools), Enabled: s.Enabled.Has(g.Index), Score: round(gh.Score / top)})
	}
	return out
}

// next is find_tools' next step, in the words of the client's mode: the
// search mode has describe_tools and guidance, the groups mode
// enable_tools instead.
func (d *Discovery) next(found bool) string {
	n := d.names
	groupsMode := d.expo.Mode() == expose.Groups
	if !found {
		browse := fmt.Sprintf("or browse with %s {\"topic\": \"groups\"}", n.Guidance)
		if groupsMode {
			browse = fmt.Sprintf("or pick a group from the %s description", n.Enable)
		}
		return fmt.Sprintf("Nothing matched. Search again as a tool would be named: the operation and the thing it acts on, the product if known (\"merge pull request github\"), with another wording in \"queries\"; %s.", browse)
	}
	// The ranking matches words, not meaning: when the request and the
	// tool's author used different words, the model reading this can
	// still find the tool by meaning, one group at a time.
	if groupsMode {
		return fmt.Sprintf("Call one: %s {\"name\": ..., \"arguments\": {...}}, or add its group to your list: %s {\"groups\": [...]}. "+
			"None fits? Search in the tool's likely words, or within a group: {\"query\": ..., \"group\": ...}.", n.Call, n.Enable)
	}
	return fmt.Sprintf("Call one: %s {\"name\": ..., \"arguments\": {...}}; full schema: %s {\"names\": [...]}. "+
		"None fits? Search in the tool's likely words, within a group ({\"query\": ..., \"group\": ...}), or browse: %s {\"topic\": \"groups\"}.",
		n.Call, n.Describe, n.Guidance)
}

// extraGroups is how many more groups than wanted a search ranks, to
// make up for the empty parents left out.
const extraGroups = 10

// minGroupScore is the least share of the best group's score a group hit
// needs: below it a group matched one stray word, and listing it costs the
// model a line for nothing.
const minGroupScore = 0.1

// round keeps two decimals of a score. A score that is not a number
// (never seen, but it would make the answer unencodable: Result) is 0.
func round(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return math.Round(f*100) / 100
}

// DescribeArgs are describe_tools' arguments.
type DescribeArgs struct {
	Names StringList `json:"names"`
}

// DescribedTool is a tool's full wire definition plus its groups.
type DescribedTool struct {
	*mcp.Tool
	Groups []string `json:"groups,omitempty"`
}

// DescribeResult is what describe_tools returns.
type DescribeResult struct {
	Tools  []DescribedTool `json:"tools"`
	Errors []string        `json:"errors"`
	// NotShown are tools asked for whose definitions did not fit the
	// answer (AnswerBudget); Next is the call that describes them.
	NotShown []string `json:"not_shown,omitempty"`
	Next     string   `json:"next,omitempty"`
	// describe is describe_tools' name, for the text's next call.
	describe string
}

// Describe runs describe_tools.
func (d *Discovery) Describe(args DescribeArgs) *DescribeResult {
	res := &DescribeResult{Tools: []DescribedTool{}, Errors: []string{}, describe: d.names.Describe}
	for _, name := range args.Names {
		w, ok := d.expo.Route(name)
		if !ok {
			res.Errors = append(res.Errors, UnknownToolMessage(d.names, d.expo, name, nil))
			continue
		}
		dt := DescribedTool{Tool: w.Tool}
		if w.Target != nil {
			for _, g := range w.Target.Groups {
				dt.Groups = append(dt.Groups, string(g.ID))
			}
		}
		res.Tools = append(res.Tools, dt)
	}
	boundDescribed(d.names, res)
	if len(args.Names) == 0 {
		res.Errors = append(res.Errors, fmt.Sprintf(`%s needs tool names: {"names": ["<tool>"]}, as %s returns them`, d.names.Describe, d.names.Find))
	}
	return res
}

// boundDescribed keeps the whole definitions that fit AnswerBudget, the
// first always (a model asking for one tool needs it, however big), and
// names the rest with the call that fetches them.
func boundDescribed(n Names, res *DescribeResult) {
	used := 0
	for i, t := range res.Tools {
		b, _ := json.Marshal(t)
		used += len(b)
		if i > 0 && used > AnswerBudget-reserve {
			for _, rest := range res.Tools[i:] {
				res.NotShown = append(res.NotShown, rest.Name)
			}
			res.Tools = res.Tools[:i]
			names, _ := json.Marshal(map[string][]string{"names": res.NotShown})
			res.Next = fmt.Sprintf("%s %s", n.Describe, names)
			return
		}
	}
}

// groupCost is what each group's tools cost in context, measured once.
func (d *Discovery) groupCost(g *catalog.Group) int {
	d.costOnce.Do(func() {
		cat := d.expo.Catalog()
		d.cost = make([]int, len(cat.Groups()))
		for _, grp := range cat.Groups() {
			defs := make([]*mcp.Tool, len(grp.Tools))
			for i, t := range grp.Tools {
				defs[i] = d.expo.FlatWire(t).Tool
			}
			d.cost[grp.Index] = d.toolsCost(defs)
		}
	})
	return d.cost[g.Index]
}

func didYouMean(name string, candidates []string) string {
	if near := catalog.Nearest(name, candidates, 1); len(near) > 0 {
		return fmt.Sprintf(" (did you mean %q?)", near[0])
	}
	return ""
}

var findSchema = json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"Operation, object, product if known."},"queries":{"type":"array","items":{"type":"string"},"maxItems":2,"description":"Up to 2 other wordings; query counts most."},"limit":{"type":"integer","minimum":1,"maximum":50,"description":"How many tools to return (default 5)."},"group":{"type":"string","description":"Search only this group and the groups inside it."}},"required":["query"]}`)

var describeSchema = json.RawMessage(`{"type":"object","properties":{"names":{"type":"array","items":{"type":"string"},"description":"Tool names as find_tools returned them."}},"required":["names"]}`)

var guidanceSchema = json.RawMessage(`{"type":"object","properties":{"topic":{"type":"string","description":"\"overview\" (default), \"groups\", a group's name, or \"tool\" with tool_name."},"tool_name":{"type":"string","description":"With topic \"tool\": the tool whose parameters to explain."}}}`)

// FindTool is find_tools' definition.
func FindTool(n Names) *mcp.Tool {
	return &mcp.Tool{Name: n.Find, InputSchema: findSchema, Annotations: readOnly(true),
		Description: fmt.Sprintf("Search every tool by what it does, including tools not in your list; returns each tool's name and parameters, to call it with %s. Query as tools are named: \"merge pull request github\" for \"land PR #42\"; other wordings go in queries.", n.Call)}
}

// DescribeTool is describe_tools' definition.
func DescribeTool(n Names) *mcp.Tool {
	return &mcp.Tool{Name: n.Describe, InputSchema: describeSchema, Annotations: readOnly(true),
		Description: fmt.Sprintf("Get the full definition of tools by name (description, input schema, annotations) before calling them with %s.", n.Call)}
}

// GuidanceTool is guidance's definition.
func GuidanceTool(n Names) *mcp.Tool {
	return &mcp.Tool{Name: n.Guidance, InputSchema: guidanceSchema, Annotations: readOnly(true),
		Description: "Explains what tools are available and how to reach them: an overview, the groups with their size, one group's tools, or one tool's parameters."}
}
