package meta

import (
	"fmt"
	"strings"
	"time"

	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/view"
)

// GuidanceArgs are guidance's arguments.
type GuidanceArgs struct {
	Topic    string `json:"topic,omitempty"`
	ToolName string `json:"tool_name,omitempty"`
}

// GuidanceResult carries the markdown, also sent as the text content: a
// model reads markdown better than markdown quoted inside JSON.
type GuidanceResult struct {
	Topic    string `json:"topic"`
	Markdown string `json:"markdown"`
}

// Guidance renders one topic for a client in state s.
func (d *Discovery) Guidance(args GuidanceArgs, s view.Snapshot) (*GuidanceResult, error) {
	topic := strings.TrimSpace(args.Topic)
	if topic == "" {
		topic = "overview"
	}
	if args.ToolName != "" && (topic == "overview" || topic == "tool") {
		topic = "tool"
	}
	var md string
	switch topic {
	case "overview":
		md = d.overview(s)
	case "groups":
		md = d.groupsTable(s)
	case "tool":
		if args.ToolName == "" {
			return nil, fmt.Errorf(`topic "tool" needs tool_name: {"topic": "tool", "tool_name": "<tool>"}`)
		}
		w, ok := d.expo.Route(args.ToolName)
		if !ok {
			return nil, fmt.Errorf("%s", UnknownToolMessage(d.names, d.expo, args.ToolName, nil))
		}
		md = d.toolPage(w)
	default:
		g, ok := d.expo.Catalog().Group(catalog.GroupID(topic))
		if !ok {
			return nil, fmt.Errorf(`there is no topic %q%s: use "overview", "groups", a group's name, or "tool" with tool_name`,
				topic, didYouMean(topic, append([]string{"overview", "groups", "tool"}, d.expo.Catalog().GroupIDs()...)))
		}
		md = d.groupPage(g, s)
	}
	return &GuidanceResult{Topic: topic, Markdown: md}, nil
}

func (d *Discovery) overview(s view.Snapshot) string {
	cat := d.expo.Catalog()
	var b strings.Builder
	fmt.Fprintf(&b, "# Tools available\n\n%d tools in %d groups", len(cat.Tools())-len(cat.Ungrouped()), len(cat.Groups()))
	if n := len(cat.Ungrouped()); n > 0 {
		fmt.Fprintf(&b, ", plus %d always available", n)
	}
	b.WriteString(".\n\n## How to reach them\n\n")
	n := d.names
	switch d.expo.Mode() {
	case expose.Groups:
		b.WriteString(findStep(n))
		fmt.Fprintf(&b, "2. `%s {\"groups\": [\"<group>\"]}` adds a group's tools to your list; or call one tool right away with `%s {\"name\": ..., \"arguments\": {...}}`.\n", n.Enable, n.Call)
		fmt.Fprintf(&b, "3. `%s` removes groups you no longer need.\n", n.Disable)
	default:
		b.WriteString(findStep(n))
		fmt.Fprintf(&b, "2. `%s {\"names\": [\"<tool>\"]}` shows a tool's parameters.\n", n.Describe)
		fmt.Fprintf(&b, "3. `%s {\"name\": \"<tool>\", \"arguments\": {...}}` runs it.\n", n.Call)
	}
	b.WriteString("\n## Groups\n\n")
	for _, g := range cat.Roots() {
		fmt.Fprintf(&b, "- **%s** %s%s", g.ID, sizeNote(g), stateNote(g, s))
		if desc := firstLine(g.Description); desc != "" {
			b.WriteString(": " + clip(desc, 200))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\n`%s {\"topic\": \"groups\"}` lists every group; `%s {\"topic\": \"<group>\"}` shows one group's tools.\n", n.Guidance, n.Guidance)
	if notes := unavailableNotes(cat, "", time.Now()); len(notes) > 0 {
		b.WriteString("\n## Missing tools\n\n")
		for _, note := range notes {
			b.WriteString("- " + note + ".\n")
		}
	}
	return b.String()
}

// findStep teaches the query that finds tools: the ranking matches words,
// so a query in the words tools are named with finds them, and a second
// wording catches what the first misses.
func findStep(n Names) string {
	return fmt.Sprintf("1. `%s {\"query\": \"merge pull request github\", \"queries\": [\"land PR\"]}` finds tools by purpose. "+
		"Write the query as tools are named: the operation, the thing it acts on, the product if known; put other wordings in `queries`.\n", n.Find)
}

func stateNote(g *catalog.Group, s view.Snapshot) string {
	if s.Enabled.Has(g.Index) {
		return " (enabled)"
	}
	return ""
}

// groupsTable lists every group when that fits AnswerBudget; otherwise
// the top-level groups only, each with what it holds, and the way to open
// one: a catalog split into hundreds of derived groups would else answer
// tens of kilobytes.
func (d *Discovery) groupsTable(s view.Snapshot) string {
	cat := d.expo.Catalog()
	if md, ok := d.groupRows(cat.Groups(), s, true); ok {
		return md
	}
	md, _ := d.groupRows(cat.Roots(), s, false)
	return md
}

func (d *Discovery) groupRows(groups []*catalog.Group, s view.Snapshot, nested bool) (string, bool) {
	cat := d.expo.Catalog()
	l := newLines()
	l.add("# Groups\n")
	if !nested {
		l.add("Top-level groups; `%s {\"topic\": \"<group>\"}` shows a group's tools and the groups inside it.\n", d.names.Guidance)
	}
	l.add("| group | state | tools | context tokens | description |\n| --- | --- | --: | --: | --- |")
	for _, g := range groups {
		state := "available"
		if s.Enabled.Has(g.Index) {
			state = "enabled"
		}
		name := string(g.ID)
		tools := fmt.Sprint(len(g.Tools))
		if nested {
			name = strings.Repeat("  ", g.Depth) + name
		} else if len(g.Children) > 0 {
			tools = fmt.Sprintf("%d in %s", subtreeTools(g), count(len(g.Children), "group"))
		}
		l.add("| %s | %s | %s | %d | %s |", name, state, tools, d.subtreeCost(g, nested), cell(d.groupSummary(g, 200)))
	}
	if n := len(cat.Ungrouped()); n > 0 {
		l.add("| (ungrouped) | always | %d | | always in your list |", n)
	}
	if nested && l.dropped > 0 {
		return "", false
	}
	if l.dropped > 0 {
		l.always("\n%d more groups not shown: search with %s {\"query\": ...}.", l.dropped, d.names.Find)
	}
	return l.String() + "\n", true
}

// groupSummary is the first line of g's description in at most about n
// bytes. A derived group's description names its tools; when the cut drops
// some of those names, the summary says how many and which call names
// them all, so that no callable name is hidden behind "…".
func (d *Discovery) groupSummary(g *catalog.Group, n int) string {
	full := firstLine(g.Description)
	short := clip(full, n)
	if !strings.HasSuffix(short, "…") {
		return short
	}
	named, shown := words(full), words(short)
	missing := 0
	for _, t := range g.Tools {
		name := d.expo.FlatWire(t).Name
		if named[name] && !shown[name] {
			missing++
		}
	}
	if missing == 0 {
		return short
	}
	return fmt.Sprintf("%s (%s: %s {\"topic\": %q} names them all)", short, count(missing, "more tool"), d.names.Guidance, g.ID)
}

// words are the names a description lists, split where lists split them.
func words(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(" ,;:()", r) }) {
		out[w] = true
	}
	return out
}

// subtreeTools counts the tools in g and the groups inside it.
func subtreeTools(g *catalog.Group) int {
	n := 0
	g.Walk(func(c *catalog.Group) { n += len(c.Tools) })
	return n
}

// subtreeCost is what g's own tools cost, or with nested false what its
// whole subtree's do, which is what enabling it path by path can reach.
func (d *Discovery) subtreeCost(g *catalog.Group, nested bool) int {
	if nested {
		return d.groupCost(g)
	}
	n := 0
	g.Walk(func(c *catalog.Group) { n += d.groupCost(c) })
	return n
}

func (d *Discovery) groupPage(g *catalog.Group, s view.Snapshot) string {
	l := newLines()
	l.add("# Group %s\n", g.ID)
	if g.Description != "" {
		l.add("%s\n", strings.TrimSpace(g.Description))
	}
	state := "not enabled"
	if s.Enabled.Has(g.Index) {
		state = "enabled"
	}
	l.add("State: %s. %s, about %d tokens of context.", state, count(len(g.Tools), "tool"), d.groupCost(g))
	if g.Parent != nil {
		l.add("Inside group %s.", g.Parent.ID)
	}
	if g.Instructions != "" {
		l.add("\n## Instructions\n\n%s", strings.TrimSpace(g.Instructions))
	}
	// The groups inside come first: they are few and lead to the rest.
	if len(g.Children) > 0 {
		l.add("\n## Groups inside\n")
		for _, c := range g.Children {
			l.add("- **%s** (%s): %s", c.ID, count(subtreeTools(c), "tool"), d.groupSummary(c, 300))
		}
	}
	if len(g.Tools) > 0 {
		l.add("\n## Tools\n\n| tool | does | notes |\n| --- | --- | --- |")
		for _, t := range g.Tools {
			l.add("| %s | %s | %s |", d.expo.FlatWire(t).Name, cell(expose.Summary(t.Def.Description, 140)), annotationNote(t))
		}
	}
	if l.dropped > 0 {
		l.always("\n%d more lines not shown: %s {\"query\": ..., \"group\": %q} searches this group.", l.dropped, d.names.Find, g.ID)
	}
	return l.String() + "\n"
}

func (d *Discovery) toolPage(w *expose.Wire) string {
	l := newLines()
	l.add("# %s\n\n%s", w.Name, clip(strings.TrimSpace(w.Tool.Description), AnswerBudget/3))
	if w.Group != nil {
		l.add("\nA grouped tool: set `action` to one of %s, with that action's parameters.", strings.Join(w.ActionNames(), ", "))
		for _, a := range w.Actions {
			l.add("\n## action %s\n", a.Name)
			paramRows(l, d.expo.FlatWire(a.Tool).Params())
		}
	} else {
		l.add("\n## Parameters\n")
		paramRows(l, w.Params())
		if len(w.Target.Groups) > 0 {
			var gs []string
			for _, g := range w.Target.Groups {
				gs = append(gs, string(g.ID))
			}
			l.add("\nIn group %s. Call it with `%s {\"name\": %q, \"arguments\": {...}}`.", strings.Join(gs, ", "), d.names.Call, w.Name)
		}
	}
	if l.dropped > 0 {
		l.always("\n%d more lines not shown: %s {\"names\": [%q]} gives the whole schema.", l.dropped, d.names.Describe, w.Name)
	}
	return l.String() + "\n"
}

func paramRows(l *lines, ps []expose.Param) {
	if len(ps) == 0 {
		l.add("No parameters.")
		return
	}
	l.add("| parameter | type | required | description |\n| --- | --- | --- | --- |")
	for _, p := range ps {
		req := "no"
		if p.Required {
			req = "yes"
		}
		l.add("| %s | %s | %s | %s |", p.Name, cell(p.Type), req, cell(clip(p.Description, 400)))
	}
}

func annotationNote(t *catalog.Tool) string {
	switch {
	case t.ReadOnly():
		return "read-only"
	case t.Destructive():
		return "destructive"
	}
	return ""
}

// cell keeps a value on one table row.
func cell(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, "|", "\\|")
}
