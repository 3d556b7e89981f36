package meta

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/view"
)

var groupsSchema = json.RawMessage(`{"type":"object","properties":{"groups":{"type":"array","items":{"type":"string"},"description":"Group names, parents before their children."}},"required":["groups"]}`)

func readOnly(idempotent bool) *mcp.ToolAnnotations {
	no := false
	return &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: idempotent, OpenWorldHint: &no}
}

// EnableTool is enable_tools' definition for a view: its description lists
// what can be enabled now, so it changes as the view does.
func EnableTool(n Names, v *view.View) *mcp.Tool {
	var b strings.Builder
	b.WriteString("Make more tools available by enabling groups. Your tool list shows only ungrouped tools and those of enabled groups; enabling a group adds its tools (and lets you enable its child groups). The result also lists the new tools with their parameters, which you can call through ")
	b.WriteString(n.Call)
	b.WriteString(" right away.")
	groups := v.Enableable()
	if len(groups) == 0 {
		b.WriteString("\n\nEvery group is enabled.")
	} else {
		b.WriteString("\n\nGroups you can enable now:")
		for _, g := range groups {
			fmt.Fprintf(&b, "\n- %s %s", g.ID, sizeNote(g))
			if d := firstLine(g.Description); d != "" {
				b.WriteString(": " + d)
			}
		}
	}
	if limit := v.Space().Options().MaxTools; limit > 0 {
		fmt.Fprintf(&b, "\n\nAt most %d grouped tools can be enabled at once; %d are now. Disable groups you no longer need with %s.", limit, v.GroupedCount(), n.Disable)
	}
	return &mcp.Tool{Name: n.Enable, Description: b.String(), InputSchema: groupsSchema,
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, OpenWorldHint: new(bool)}}
}

// DisableTool is disable_tools' definition.
func DisableTool(n Names) *mcp.Tool {
	return &mcp.Tool{Name: n.Disable, InputSchema: groupsSchema,
		Description: "Remove groups' tools from your tool list when you no longer need them, to keep the list short. Disabling a group also disables the groups inside it.",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, OpenWorldHint: new(bool)}}
}

// ResetTool is reset_tools' definition: one boolean per group, the final
// state of each.
func ResetTool(n Names, cat *catalog.Catalog) *mcp.Tool {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i, g := range cat.Groups() {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(string(g.ID))
		desc, _ := json.Marshal(firstLine(g.Description))
		fmt.Fprintf(&b, `%s:{"type":"boolean","description":%s}`, name, desc)
	}
	b.WriteString(`},"additionalProperties":false}`)
	return &mcp.Tool{Name: n.Reset, InputSchema: json.RawMessage(b.String()),
		Description: "Set exactly which groups are enabled: groups set to true are enabled, every other group is disabled. A child group needs its parent set to true too.",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, OpenWorldHint: new(bool)}}
}

// CallTool is call_tool's definition in the groups mode.
func CallTool(n Names) *mcp.Tool { return CallToolFor(n, expose.Groups) }

// CallToolFor is call_tool's definition in mode: its words name only the
// meta-tools that mode offers (the search mode has no enable_tools).
func CallToolFor(n Names, mode expose.Mode) *mcp.Tool {
	from := n.Find + " or " + n.Enable
	desc := "Call any tool by name, including tools of groups that are not enabled and tools missing from your list. Returns the tool's own result unchanged."
	if mode == expose.Search {
		from = n.Find
		desc = fmt.Sprintf("Call any tool by the name %s gave, with the parameters it showed (%s gives the full schema). Returns the tool's own result unchanged.", n.Find, n.Describe)
	}
	name, _ := json.Marshal("The tool's name as " + from + " gave it.")
	schema := fmt.Sprintf(`{"type":"object","properties":{"name":{"type":"string","description":%s},"arguments":{"type":"object","description":"The tool's own arguments; for a grouped tool include \"action\"."}},"required":["name"]}`, name)
	return &mcp.Tool{Name: n.Call, InputSchema: json.RawMessage(schema), Description: desc}
}

// sizeNote says what a group holds: "(5 tools)", "(5 tools), 2 groups
// inside", or for a group whose tools all sit in groups inside it "(197
// tools in 40 groups)": never "0 tools" for a group that leads to many.
func sizeNote(g *catalog.Group) string {
	switch {
	case len(g.Children) == 0:
		return "(" + count(len(g.Tools), "tool") + ")"
	case len(g.Tools) == 0:
		return fmt.Sprintf("(%s in %s)", count(subtreeTools(g), "tool"), count(len(g.Children), "group"))
	}
	return fmt.Sprintf("(%s), %s inside", count(len(g.Tools), "tool"), count(len(g.Children), "group"))
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return s
}

// StatelessEnableTool is enable_tools' definition for a client whose list
// never changes (a 2026-07-28 client, or a stateless endpoint): it
// describes groups' tools for call_tool and changes nothing.
func StatelessEnableTool(n Names, v *view.View) *mcp.Tool {
	var b strings.Builder
	b.WriteString("Unfold groups of tools: returns each group's instructions and its tools with their parameters, which you then call through ")
	b.WriteString(n.Call)
	b.WriteString(". Your tool list does not change. Child groups can be named directly (\"parent.child\").")
	groups := v.Space().Catalog().Roots()
	if len(groups) > 0 {
		b.WriteString("\n\nGroups:")
		for _, g := range groups {
			fmt.Fprintf(&b, "\n- %s %s", g.ID, sizeNote(g))
			if d := firstLine(g.Description); d != "" {
				b.WriteString(": " + d)
			}
		}
	}
	return &mcp.Tool{Name: n.Enable, Description: b.String(), InputSchema: groupsSchema,
		Annotations: readOnly(true)}
}
