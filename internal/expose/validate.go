package expose

import (
	"bytes"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// validator checks arguments against one tool's input schema. Schemas are
// compiled on first use: a catalog of a thousand upstream tools should not
// pay for compiling schemas nobody calls.
type validator struct {
	info *schemaInfo
	once sync.Once
	sch  *jsonschema.Schema
	err  error
}

func (v *validator) compile() {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(v.info.raw))
	if err != nil {
		v.err = fmt.Errorf("input schema is not valid JSON: %w", err)
		return
	}
	c := jsonschema.NewCompiler()
	// Upstream schemas without $schema are mostly draft-07 in spirit but
	// written to be read by 2020-12 tooling; an explicit $schema wins. No
	// loader is set, so a remote $ref can never make toolfold fetch a URL.
	c.DefaultDraft(jsonschema.Draft2020)
	const loc = "mem://input-schema.json"
	if err := c.AddResource(loc, doc); err != nil {
		v.err = err
		return
	}
	v.sch, v.err = c.Compile(loc)
}

// check validates raw arguments and returns one line per problem, or nil.
// A schema that cannot be compiled validates nothing: the upstream checks
// its own arguments, and refusing every call over a schema quirk would be
// worse.
func (v *validator) check(args []byte) []string {
	v.once.Do(v.compile)
	if v.err != nil {
		return nil
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = []byte("{}")
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return []string{"arguments are not valid JSON: " + err.Error()}
	}
	err = v.sch.Validate(inst)
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []string{err.Error()}
	}
	var out []string
	for _, u := range ve.BasicOutput().Errors {
		if u.Error == nil {
			continue
		}
		msg := u.Error.String()
		// The top-level unit only says that validation failed; the leaves
		// say why.
		if strings.HasPrefix(msg, "doesn't validate with") || strings.HasPrefix(msg, "jsonschema validation failed") {
			continue
		}
		at := u.InstanceLocation
		if at == "" {
			at = "arguments"
		} else {
			at = "argument " + strings.TrimPrefix(at, "/")
		}
		out = append(out, at+": "+msg)
	}
	if len(out) == 0 {
		out = append(out, strings.TrimSpace(ve.Error()))
	}
	return out
}
