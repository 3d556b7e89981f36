package expose

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/toolfold/toolfold/internal/catalog"
)

// ArgumentError is a call refused before it reached any tool: the action is
// missing or unknown, or the arguments break the schema. Its message names
// the valid choices and the expected parameters, so an agent can fix its
// call in one step.
type ArgumentError struct {
	Tool     string   // the wire name called
	Problems []string // one line each
	Hint     string   // what to send instead
}

func (e *ArgumentError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s was not called: %s.", e.Tool, strings.Join(e.Problems, "; "))
	if e.Hint != "" {
		b.WriteString(" ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

// Resolve checks a call on w and returns the catalog tool to run with the
// arguments meant for it. For a grouped wire the "action" property picks the
// tool and is removed; what remains is checked against that action's own
// schema. A flat wire's arguments are checked against the tool's schema
// unless its source checks them itself (catalog.Tool.ChecksArguments): on
// the success path nobody should pay for the same check twice. Errors are
// *ArgumentError.
func (w *Wire) Resolve(args json.RawMessage) (*catalog.Tool, json.RawMessage, error) {
	if w.Group == nil {
		if w.Target.ChecksArguments {
			return w.Target, args, nil
		}
		if problems := w.check.check(args); len(problems) > 0 {
			return nil, nil, &ArgumentError{Tool: w.Name, Problems: problems,
				Hint: "Expected parameters: " + w.check.info.paramSummary() + "."}
		}
		return w.Target, args, nil
	}
	var fields map[string]json.RawMessage
	if len(args) > 0 && string(args) != "null" {
		if err := json.Unmarshal(args, &fields); err != nil {
			return nil, nil, &ArgumentError{Tool: w.Name, Problems: []string{"arguments must be a JSON object"}, Hint: w.actionHint()}
		}
	}
	rawAction, ok := fields["action"]
	if !ok {
		return nil, nil, &ArgumentError{Tool: w.Name, Problems: []string{`the required property "action" is missing`}, Hint: w.actionHint()}
	}
	var name string
	if err := json.Unmarshal(rawAction, &name); err != nil {
		return nil, nil, &ArgumentError{Tool: w.Name, Problems: []string{`"action" must be a string`}, Hint: w.actionHint()}
	}
	a, ok := w.actionByName[name]
	if !ok {
		problem := fmt.Sprintf("there is no action %q", name)
		if near := catalog.Nearest(name, w.ActionNames(), 3); len(near) > 0 {
			problem += fmt.Sprintf(" (did you mean %q?)", near[0])
		}
		return nil, nil, &ArgumentError{Tool: w.Name, Problems: []string{problem}, Hint: w.actionHint()}
	}
	delete(fields, "action")
	rest, err := json.Marshal(fields)
	if err != nil {
		return nil, nil, fmt.Errorf("re-encoding arguments for %s: %w", name, err)
	}
	if problems := a.check.check(rest); len(problems) > 0 {
		return nil, nil, &ArgumentError{Tool: w.Name + " action " + name, Problems: problems,
			Hint: fmt.Sprintf("Parameters of %q: %s.", name, a.check.info.paramSummary())}
	}
	return a.Tool, rest, nil
}

// ActionNames lists a grouped wire's actions in enum order.
func (w *Wire) ActionNames() []string {
	out := make([]string, len(w.Actions))
	for i, a := range w.Actions {
		out[i] = a.Name
	}
	return out
}

func (w *Wire) actionHint() string {
	var b strings.Builder
	b.WriteString(`Set "action" to one of: `)
	for i, a := range w.Actions {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(a.Name)
	}
	b.WriteString(". Parameters by action: ")
	for i, a := range w.Actions {
		if i > 0 {
			b.WriteString(" | ")
		}
		fmt.Fprintf(&b, "%s: %s", a.Name, a.check.info.paramSummary())
	}
	b.WriteString(".")
	return b.String()
}

// InputSchema returns the wire tool's input schema as JSON.
func (w *Wire) InputSchema() json.RawMessage {
	raw, _ := toRaw(w.Tool.InputSchema)
	return raw
}

// Param describes one input parameter of a tool, for search and guidance.
type Param struct {
	Name        string
	Type        string // "string", "array of string", "one of a|b", ...
	Required    bool
	Description string
	Enum        []string
}

// Params lists a flat wire tool's parameters in their declared order; a
// grouped wire has none of its own (its actions have theirs).
func (w *Wire) Params() []Param {
	if w.check == nil {
		return nil
	}
	props, required := w.check.info.properties()
	out := make([]Param, 0, len(props))
	for _, p := range props {
		b := p.brief()
		d := b.description()
		var enum []string
		if vals, ok := b.Enum.([]any); ok {
			for _, v := range vals {
				enum = append(enum, enumText(v))
			}
		}
		out = append(out, Param{Name: p.name, Type: typeOf(b), Required: slices.Contains(required, p.name), Description: strings.TrimSpace(d), Enum: enum})
	}
	return out
}

// Summary is the first sentence of a description, at most n bytes.
func Summary(description string, n int) string { return firstSentence(description, n) }
