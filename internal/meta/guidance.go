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
		fmt.Fprintf(&b, "- **%s** (%s", g.ID, count(len(g.Tools), "tool"))
		if len(g.Children) > 0 {
			fmt.Fprintf(&b, ", %s inside", count(len(g.Children), "group"))
		}
		fmt.Fprintf(&b, "%s)", stateNote(g, s))
		if desc := firstLine(g.Description); desc != "" {
			b.WriteString(": " + desc)
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
		return ", enabled"
	}
	return ""
}

func (d *Discovery) groupsTable(s view.Snapshot) string {
	cat := d.expo.Catalog()
	var b strings.Builder
	b.WriteString("# Groups\n\n| group | state | tools | context tokens | description |\n| --- | --- | --: | --: | --- |\n")
	for _, g := range cat.Groups() {
		state := "available"
		if s.Enabled.Has(g.Index) {
			state = "enabled"
		}
		name := strings.Repeat("  ", g.Depth) + string(g.ID)
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %s |\n", name, state, len(g.Tools), d.groupCost(g), cell(firstLine(g.Description)))
	}
	if n := len(cat.Ungrouped()); n > 0 {
		fmt.Fprintf(&b, "| (ungrouped) | always | %d | | always in your list |\n", n)
	}
	return b.String()
}

func (d *Discovery) groupPage(g *catalog.Group, s view.Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Group %s\n\n", g.ID)
	if g.Description != "" {
		b.WriteString(strings.TrimSpace(g.Description) + "\n\n")
	}
	state := "not enabled"
	if s.Enabled.Has(g.Index) {
		state = "enabled"
	}
	fmt.Fprintf(&b, "State: %s. %s, about %d tokens of context.\n", state, count(len(g.Tools), "tool"), d.groupCost(g))
	if g.Parent != nil {
		fmt.Fprintf(&b, "Inside group %s.\n", g.Parent.ID)
	}
	if g.Instructions != "" {
		fmt.Fprintf(&b, "\n## Instructions\n\n%s\n", strings.TrimSpace(g.Instructions))
	}
	if len(g.Tools) > 0 {
		b.WriteString("\n## Tools\n\n| tool | does | notes |\n| --- | --- | --- |\n")
		for _, t := range g.Tools {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", d.expo.FlatWire(t).Name, cell(expose.Summary(t.Def.Description, 140)), annotationNote(t))
		}
	}
	if len(g.Children) > 0 {
		b.WriteString("\n## Groups inside\n\n")
		for _, c := range g.Children {
			fmt.Fprintf(&b, "- **%s** (%s): %s\n", c.ID, count(len(c.Tools), "tool"), firstLine(c.Description))
		}
	}
	return b.String()
}

func (d *Discovery) toolPage(w *expose.Wire) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%s\n", w.Name, strings.TrimSpace(w.Tool.Description))
	if w.Group != nil {
		fmt.Fprintf(&b, "\nA grouped tool: set `action` to one of %s, with that action's parameters.\n", strings.Join(w.ActionNames(), ", "))
		for _, a := range w.Actions {
			fmt.Fprintf(&b, "\n## action %s\n\n", a.Name)
			b.WriteString(paramTable(d.expo.FlatWire(a.Tool).Params()))
		}
		return b.String()
	}
	b.WriteString("\n## Parameters\n\n")
	b.WriteString(paramTable(w.Params()))
	if len(w.Target.Groups) > 0 {
		var gs []string
		for _, g := range w.Target.Groups {
			gs = append(gs, string(g.ID))
		}
		fmt.Fprintf(&b, "\nIn group %s. Call it with `%s {\"name\": %q, \"arguments\": {...}}`.\n", strings.Join(gs, ", "), d.names.Call, w.Name)
	}
	return b.String()
}

func paramTable(ps []expose.Param) string {
	if len(ps) == 0 {
		return "No parameters.\n"
	}
	var b strings.Builder
	b.WriteString("| parameter | type | required | description |\n| --- | --- | --- | --- |\n")
	for _, p := range ps {
		req := "no"
		if p.Required {
			req = "yes"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", p.Name, cell(p.Type), req, cell(p.Description))
	}
	return b.String()
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
