package expose

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// validator checks arguments against one tool's input schema. Schemas are
// compiled on first use: a catalog of a thousand upstream tools should not
// pay for compiling schemas nobody calls.
//
// It uses the JSON-schema package the MCP Go SDK itself builds on, which
// reads draft-07 and 2020-12 schemas (the dialects upstream servers send)
// and never fetches a remote $ref.
type validator struct {
	info     *schemaInfo
	once     sync.Once
	resolved *jsonschema.Resolved
	err      error
}

func (v *validator) compile() {
	var s jsonschema.Schema
	if err := json.Unmarshal(v.info.raw, &s); err != nil {
		v.err = fmt.Errorf("input schema cannot be read: %w", err)
		return
	}
	v.resolved, v.err = s.Resolve(nil)
}

// check validates raw arguments and returns one line per problem, or nil.
// A schema that cannot be compiled (a remote $ref, a dialect quirk)
// validates nothing: the upstream checks its own arguments, and refusing
// every call over a schema quirk would be worse.
func (v *validator) check(args []byte) []string {
	v.once.Do(v.compile)
	if v.err != nil {
		return nil
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = []byte("{}")
	}
	var inst any
	dec := json.NewDecoder(bytes.NewReader(args))
	if err := dec.Decode(&inst); err != nil {
		return []string{"arguments are not valid JSON: " + err.Error()}
	}
	if err := v.resolved.Validate(inst); err != nil {
		return []string{readable(err.Error())}
	}
	return nil
}

// propertyPath matches the validator's "validating /properties/a/properties/b: "
// prefixes, which readable turns into "argument a.b: ".
var propertyPath = regexp.MustCompile(`validating (/[^:]*): `)

// readable rewords the validator's message for an agent: the failing
// argument by name, then what is wrong.
func readable(msg string) string {
	msg = strings.TrimPrefix(msg, "validating root: ")
	if m := propertyPath.FindAllStringSubmatchIndex(msg, -1); len(m) > 0 {
		last := m[len(m)-1]
		path := msg[last[2]:last[3]]
		var names []string
		parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
		for i := 0; i < len(parts); i++ {
			switch parts[i] {
			case "properties", "items", "additionalProperties", "prefixItems":
				continue
			}
			names = append(names, parts[i])
		}
		return "argument " + strings.Join(names, ".") + ": " + msg[last[1]:]
	}
	return "arguments: " + msg
}
