package meta

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/toolfold/toolfold/internal/expose"
)

// AnswerBudget is the most bytes of text one meta-tool answer holds. At
// the three bytes a token that tool names and schemas tokenize to at worst,
// that stays under 4,000 tokens (the tests measure it with a real
// tokenizer). Longer answers are cut to the budget and say how to see the
// rest. It is a byte count so that the library links no tokenizer.
const AnswerBudget = 12000

// signatureBudget bounds one call signature: past it, optional parameters
// are counted instead of named.
const signatureBudget = 110

// Signature writes a compact call signature of a flat wire tool: its
// required parameters, then its optional ones (marked "?") while the line
// stays short, then how many optional ones it left out:
// "send_sms(To: string, From?: string, Body?: string, +3 optional)". It
// gives a model enough to call the tool at once; the full schema stays
// with describe_tools.
func Signature(w *expose.Wire) string {
	if w.Group != nil {
		// A grouped wire: the action picks the tool, whose parameters
		// guidance and describe_tools give.
		actions := w.ActionNames()
		quoted := make([]string, len(actions))
		for i, a := range actions {
			quoted[i] = fmt.Sprintf("%q", a)
		}
		return fmt.Sprintf("%s(action: %s, ...)", w.Name, clip(strings.Join(quoted, "|"), signatureBudget))
	}
	params := w.Params()
	var b strings.Builder
	b.WriteString(w.Name)
	b.WriteByte('(')
	written, left := 0, 0
	for _, required := range []bool{true, false} {
		for _, p := range params {
			if p.Required != required {
				continue
			}
			part := p.Name
			if !p.Required {
				part += "?"
			}
			part += ": " + shortType(p)
			// Required parameters are always named: a call needs them.
			if !required && b.Len()+len(part) > len(w.Name)+signatureBudget {
				left++
				continue
			}
			if written > 0 {
				b.WriteString(", ")
			}
			b.WriteString(part)
			written++
		}
	}
	if left > 0 {
		if written > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "+%d optional", left)
	}
	b.WriteByte(')')
	return b.String()
}

// shortType spells a parameter's type as code does: "string[]", a short
// enum as its values ("asc"|"desc"), "any" when the schema says nothing.
func shortType(p expose.Param) string {
	if len(p.Enum) > 0 && len(p.Enum) <= 4 {
		quoted := make([]string, len(p.Enum))
		for i, v := range p.Enum {
			quoted[i] = fmt.Sprintf("%q", v)
		}
		if s := strings.Join(quoted, "|"); len(s) <= 48 {
			return s
		}
	}
	// "null or array of string": null only says the parameter may be
	// left out, which "?" says already.
	var alts []string
	for _, alt := range strings.Split(p.Type, " or ") {
		if alt != "null" {
			alts = append(alts, codeType(alt))
		}
	}
	if len(alts) == 0 {
		return "any"
	}
	return strings.Join(alts, "|")
}

// codeType turns one type of expose.Param's words into code:
// "array of string" → "string[]", an enum → its base type.
func codeType(t string) string {
	suffix := ""
	for {
		rest, ok := strings.CutPrefix(t, "array of ")
		if !ok {
			break
		}
		t, suffix = rest, suffix+"[]"
	}
	if t == "" {
		t = "any"
	}
	if strings.HasPrefix(t, "one of ") {
		t = "string"
	}
	return t + suffix
}

// lines gathers an answer's lines up to AnswerBudget; once full it counts
// what it leaves out, so the answer can say how to see the rest.
type lines struct {
	b       strings.Builder
	budget  int
	dropped int
}

func newLines() *lines { return &lines{budget: AnswerBudget} }

// add writes one line if it fits, keeping room for the closing lines.
func (l *lines) add(format string, args ...any) bool {
	s := fmt.Sprintf(format, args...)
	if l.dropped > 0 || l.b.Len()+len(s)+1 > l.budget-reserve {
		l.dropped++
		return false
	}
	l.b.WriteString(s)
	l.b.WriteByte('\n')
	return true
}

// always writes a line whatever the budget: the closing hint.
func (l *lines) always(format string, args ...any) {
	l.b.WriteString(fmt.Sprintf(format, args...))
	l.b.WriteByte('\n')
}

// reserve is the room kept for closing lines (next steps, what was cut).
const reserve = 600

func (l *lines) String() string { return strings.TrimRight(l.b.String(), "\n") }

// clip shortens s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return strings.TrimRight(s[:cut], " ,;:") + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// textGroups is how many group hits find_tools' text shows; the data
// keeps them all.
const textGroups = 3

// Text renders find_tools' answer for a model: one line per tool with the
// signature to call it by, a short description under it, then the groups
// and the next step.
func (r *FindResult) Text() string {
	l := newLines()
	// The text's size, nearly: one buffer instead of a doubling series of
	// them, the most this answer allocated.
	size := 80 + len(r.Next)
	for _, t := range r.Tools {
		size += len(t.Call) + len(t.Description) + len(t.Group) + 32
	}
	for _, g := range r.Groups[:min(len(r.Groups), textGroups)] {
		size += len(g.Name) + min(len(g.Description), 100) + 48
	}
	for _, n := range r.Unavailable {
		size += len(n) + 10
	}
	for _, n := range r.Held {
		size += len(n) + 10
	}
	l.b.Grow(min(size, AnswerBudget))
	if len(r.Tools) > 0 {
		l.add("Tools, best first (score 0-1; \"?\" marks an optional parameter):")
	}
	for i, t := range r.Tools {
		if !l.add("%d. %s  score %.2f", i+1, t.Call, t.Score) {
			continue
		}
		desc := t.Description
		if t.Group != "" {
			desc += " [group " + t.Group + "]"
		}
		l.add("   %s", desc)
	}
	// A few groups, briefly: in them a narrower search can go on.
	if len(r.Groups) > 0 {
		l.add("Groups:")
		for _, g := range r.Groups[:min(len(r.Groups), textGroups)] {
			state := ""
			if g.Enabled {
				state = ", enabled"
			}
			l.add("- %s (%s%s) score %.2f: %s", g.Name, count(g.Tools, "tool"), state, g.Score, clip(g.Description, 100))
		}
	}
	if l.dropped > 0 {
		l.always("(%d more lines left out: ask for fewer tools with \"limit\".)", l.dropped)
	}
	// Why a tool the query names is not among them: tell the user, not
	// that no such tool exists.
	for _, u := range r.Unavailable {
		l.always("Missing: %s", u)
	}
	for _, h := range r.Held {
		l.always("Held: %s", h)
	}
	l.always("%s", r.Next)
	return l.String()
}

// Text renders describe_tools' answer: each tool's name, description and
// input schema as compact JSON (the schema is the one thing a model needs
// whole), its annotations and groups in words.
func (r *DescribeResult) Text() string {
	l := newLines()
	var cut []string
	for _, t := range r.Tools {
		schema, _ := jsonCompact(t.InputSchema)
		var notes []string
		if a := t.Annotations; a != nil {
			if a.ReadOnlyHint {
				notes = append(notes, "read-only")
			}
			if a.DestructiveHint != nil && *a.DestructiveHint {
				notes = append(notes, "destructive")
			}
		}
		if len(t.Groups) > 0 {
			notes = append(notes, "group "+strings.Join(t.Groups, ", "))
		}
		block := fmt.Sprintf("## %s\n%s\nInput schema: %s", t.Name, strings.TrimSpace(t.Description), schema)
		if len(notes) > 0 {
			block += "\n(" + strings.Join(notes, "; ") + ")"
		}
		if l.add("%s\n", block) {
			continue
		}
		// A schema too big for the answer: its parameters, one short
		// line each, say what a call needs.
		if l.dropped == 1 && len(cut) == 0 {
			l.dropped = 0
			if l.add("## %s\n%s\nParameters (the schema is too long to show whole):\n%s", t.Name, clip(t.Description, 600), paramLines(t.InputSchema)) {
				continue
			}
		}
		cut = append(cut, t.Name)
	}
	cut = append(cut, r.NotShown...)
	if len(cut) > 0 {
		names, _ := json.Marshal(map[string][]string{"names": cut})
		l.always("Not shown, to keep this answer short: %s. Describe them with %s %s.", strings.Join(cut, ", "), cmp.Or(r.describe, "describe_tools"), names)
	}
	for _, e := range r.Errors {
		l.always("Error: %s", e)
	}
	return l.String()
}

// paramLines lists a schema's top-level parameters, required first, one
// short line each, within a third of AnswerBudget.
func paramLines(schema any) string {
	raw, _ := json.Marshal(schema)
	var s struct {
		Properties map[string]struct {
			Type        any    `json:"type"`
			Description string `json:"description"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(raw, &s)
	names := slices.Sorted(maps.Keys(s.Properties))
	slices.SortStableFunc(names, func(a, b string) int {
		ra, rb := slices.Contains(s.Required, a), slices.Contains(s.Required, b)
		switch {
		case ra && !rb:
			return -1
		case rb && !ra:
			return 1
		}
		return 0
	})
	var b strings.Builder
	for i, name := range names {
		p := s.Properties[name]
		req := "optional"
		if slices.Contains(s.Required, name) {
			req = "required"
		}
		line := fmt.Sprintf("- %s (%v, %s): %s\n", name, p.Type, req, clip(p.Description, 100))
		if b.Len()+len(line) > AnswerBudget/3 {
			fmt.Fprintf(&b, "- and %d more optional parameters\n", len(names)-i)
			break
		}
		b.WriteString(line)
	}
	return strings.TrimRight(b.String(), "\n")
}

// Text renders enable_tools' answer: what changed, the new tools with
// their signatures, instructions, errors and what can be enabled next.
func (r *EnableResult) Text() string {
	l := newLines()
	if len(r.Enabled) > 0 {
		l.add("Enabled: %s.", strings.Join(r.Enabled, ", "))
	}
	for _, e := range r.Errors {
		l.add("Error: %s", e.Message)
	}
	for _, g := range sortedKeys(r.Instructions) {
		l.add("Instructions of %s: %s", g, strings.TrimSpace(r.Instructions[g]))
	}
	if len(r.Tools) > 0 {
		l.add("Tools (\"?\" marks an optional parameter):")
		for _, t := range r.Tools {
			l.add("- %s: %s", t.Call, expose.Summary(t.Description, 120))
		}
	}
	if r.More > 0 {
		l.add("%d more new tools are not shown, to keep this answer short.", r.More)
	}
	if len(r.Inside) > 0 {
		if len(r.Tools) == 0 {
			l.add("No tools came with it: its tools are in the groups inside it. Enable the one you need (tools in each):")
		} else {
			l.add("More of its tools are in the groups inside it (tools in each):")
		}
		for _, g := range r.Inside {
			l.add("- %s (%d): %s", g.Name, g.Tools, g.Call)
		}
		if r.MoreInside > 0 {
			l.add("- and %d more groups inside (guidance names them)", r.MoreInside)
		}
	}
	l.add("%d tools in your list now.", len(r.AvailableTools))
	if len(r.AvailableGroups) > 0 {
		names := make([]string, len(r.AvailableGroups))
		for i, g := range r.AvailableGroups {
			names[i] = fmt.Sprintf("%s (%d)", g.Name, g.Tools)
		}
		more := ""
		if r.MoreGroups > 0 {
			more = fmt.Sprintf(", and %d more (this tool's description lists them all)", r.MoreGroups)
		}
		l.add("Groups you can enable (tools in each): %s%s.", strings.Join(names, ", "), more)
	}
	if l.dropped > 0 {
		l.always("(%d more lines left out to keep this answer short.)", l.dropped)
	}
	if r.Note != "" {
		l.always("%s", r.Note)
	}
	return l.String()
}

// Text renders disable_tools' answer.
func (r *DisableResult) Text() string {
	l := newLines()
	if len(r.Disabled) > 0 {
		l.add("Disabled: %s.", strings.Join(r.Disabled, ", "))
	} else {
		l.add("Nothing was disabled.")
	}
	for _, e := range r.Errors {
		l.add("Error: %s", e.Message)
	}
	l.add("Enabled groups: %s. %d tools in your list now.", orNone(r.EnabledGroups), len(r.AvailableTools))
	return l.String()
}

// Text renders reset_tools' answer.
func (r *ResetResult) Text() string {
	l := newLines()
	l.add("Enabled: %s. Disabled: %s.", orNone(r.Enabled), orNone(r.Disabled))
	for _, e := range r.Errors {
		l.add("Error: %s", e.Message)
	}
	for _, g := range sortedKeys(r.Instructions) {
		l.add("Instructions of %s: %s", g, strings.TrimSpace(r.Instructions[g]))
	}
	for _, t := range r.Tools {
		l.add("- %s: %s", t.Call, expose.Summary(t.Description, 120))
	}
	l.add("Enabled groups: %s. %d tools in your list now.", orNone(r.EnabledGroups), len(r.AvailableTools))
	if l.dropped > 0 {
		l.always("(%d more lines left out to keep this answer short.)", l.dropped)
	}
	return l.String()
}

// Text is guidance's markdown itself.
func (r *GuidanceResult) Text() string { return r.Markdown }

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// jsonCompact writes v as JSON without spaces and without escaping <, >
// and &, which a model reads as themselves.
func jsonCompact(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", fmt.Errorf("encoding JSON: %w", err)
	}
	return strings.TrimSpace(b.String()), nil
}

func sortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}
