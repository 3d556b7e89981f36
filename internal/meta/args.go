package meta

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// StringList is a list of strings in a meta-tool's arguments. A model often
// sends one name where a list is expected ({"groups": "math"}); that is
// read as a list of one (DecodeArgs notes it, so the result can say so).
type StringList []string

// UnmarshalJSON reads a list of strings, or one string as a list of one.
func (l *StringList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*l = StringList{s}
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		var typeErr *json.UnmarshalTypeError
		if len(b) > 0 && b[0] == '[' && errors.As(err, &typeErr) {
			return listItemError{value: typeErr.Value}
		}
		return err
	}
	*l = list
	return nil
}

// listItemError is a list whose items are not all strings.
type listItemError struct{ value string }

func (e listItemError) Error() string { return "a list item is a " + e.value + ", not a string" }

// Param describes one parameter of a meta-tool for argument errors: what
// it must be, in words a model reads ("a list of group names").
type Param struct {
	Name string
	Want string
}

// DecodeArgs decodes a meta-tool's arguments into dst. When they do not
// fit, the error says in words which parameter was wrong, what it must be
// and shows a correct call (example), never a Go type. notes says which
// parameters took a single string for a list.
func DecodeArgs(tool string, raw json.RawMessage, dst any, params []Param, example string) (notes []string, err error) {
	if err := json.Unmarshal(raw, dst); err != nil {
		return nil, errors.New(argumentError(tool, raw, err, params, example))
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) == nil {
		for _, p := range params {
			v := bytes.TrimSpace(fields[p.Name])
			if strings.HasPrefix(p.Want, "a list") && len(v) > 0 && v[0] == '"' {
				notes = append(notes, fmt.Sprintf("%s: %q takes %s; the single value %s was read as [%s].", tool, p.Name, p.Want, v, v))
			}
		}
	}
	return notes, nil
}

func argumentError(tool string, raw json.RawMessage, err error, params []Param, example string) string {
	fix := fmt.Sprintf(" A correct call: %s %s", tool, example)
	var itemErr listItemError
	if errors.As(err, &itemErr) {
		for _, p := range params {
			if strings.HasPrefix(p.Want, "a list") {
				return fmt.Sprintf("%s: every item of %q must be %s, not %s.%s", tool, p.Name, itemOf(p.Want), article(itemErr.value), fix)
			}
		}
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		field, _, _ := strings.Cut(typeErr.Field, ".")
		want := "something else"
		for _, p := range params {
			if p.Name == field {
				want = p.Want
			}
		}
		got := article(typeErr.Value)
		if field != typeErr.Field {
			return fmt.Sprintf("%s: every item of %q must be %s, not %s.%s", tool, field, itemOf(want), got, fix)
		}
		return fmt.Sprintf("%s: %q must be %s, not %s.%s", tool, field, want, got, fix)
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return fmt.Sprintf("%s: the arguments must be a JSON object of named parameters.%s", tool, fix)
	}
	return fmt.Sprintf("%s: the arguments could not be read (%s).%s", tool, plain(err), fix)
}

// article names a JSON value's kind as the decoder reports it, for a
// sentence: "a number", "a list", "true or false".
func article(kind string) string {
	switch kind {
	case "array":
		return "a list"
	case "object":
		return "an object"
	case "bool":
		return "true or false"
	case "":
		return "something else"
	}
	return "a " + kind
}

// itemOf turns "a list of group names" into "a group name".
func itemOf(want string) string {
	rest, ok := strings.CutPrefix(want, "a list of ")
	if !ok {
		return "a string"
	}
	rest, _ = strings.CutSuffix(rest, "s")
	return "a " + rest
}

// plain strips Go's type names from a decoding error.
func plain(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, " of type "); i >= 0 {
		msg = msg[:i]
	}
	return strings.TrimPrefix(msg, "json: ")
}
