package cmdtool

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Separator is the argument that ends options for programs that honour it
// (getopt, git, cobra/pflag, click, argparse).
const Separator = "--"

// maxArrayItems bounds how many arguments one array parameter may add.
const maxArrayItems = 1024

// ParamError is a problem with one argument a model sent. Its message names
// the parameter and what was expected, so it can go back to the model as is.
type ParamError struct {
	// Param is the parameter name as the model sent it.
	Param string
	// Problem says what is wrong and what is expected.
	Problem string
}

// Error implements error.
func (e *ParamError) Error() string {
	return fmt.Sprintf("parameter %q: %s", e.Param, e.Problem)
}

// BuildArgv turns a model's arguments into the argv of one call:
//
//	command, the action's fixed words,
//	every boolean flag that is true (--flag),
//	every other flag that was given (--flag=value; an array repeats it),
//	the positionals marked BeforeSeparator (never starting with "-"),
//	"--" (only when a positional follows it),
//	the other positionals in declared order (arrays expand).
//
// Arguments are checked strictly: unknown names, wrong types (an integer
// must be integral; a boolean must be a JSON boolean), enums, anchored
// patterns, required parameters, NUL bytes, line breaks (unless the
// parameter is Multiline) and oversize values are refused. All problems are
// reported together, joined, each as a *ParamError. A JSON null counts as
// not given.
//
// No value can become an option: flag names come only from configuration,
// flag values are joined to their flag in one argv element, and positionals
// go after "--" (or, where they cannot, must not start with "-").
func BuildArgv(p Program, a Action, args map[string]any) ([]string, error) {
	if err := a.Validate(); err != nil {
		return nil, fmt.Errorf("action %q of %q is misconfigured, fix the config: %w", a.Name, p.Name, err)
	}
	problems := nameProblems(a, args)
	var parts argvParts
	for _, prm := range a.Params {
		raw, ok := args[prm.Name]
		if !ok || raw == nil {
			continue
		}
		values, isTrue, err := prm.values(raw)
		if err == nil {
			err = parts.add(p, prm, values, isTrue)
		}
		if err != nil {
			problems = append(problems, err)
		}
	}
	if err := errors.Join(problems...); err != nil {
		return nil, err
	}
	return parts.argv(p, a), nil
}

// nameProblems reports the arguments no parameter declares, in name
// order, and the required parameters that are missing.
func nameProblems(a Action, args map[string]any) []error {
	var problems []error
	declared := make(map[string]bool, len(a.Params))
	for _, prm := range a.Params {
		declared[prm.Name] = true
	}
	var unknown []string
	for name := range args {
		if !declared[name] {
			unknown = append(unknown, name)
		}
	}
	sort.Strings(unknown)
	for _, name := range unknown {
		problems = append(problems, &ParamError{Param: name, Problem: "unknown parameter; " + describeParams(a)})
	}
	for _, name := range a.Required {
		if v, ok := args[name]; !ok || v == nil {
			problems = append(problems, &ParamError{Param: name, Problem: "is required; " + describeParam(a, name)})
		}
	}
	return problems
}

// argvParts collects the argv elements by where they go.
type argvParts struct {
	switches, options, before, after []string
}

// add places the values of one parameter.
func (parts *argvParts) add(p Program, prm Param, values []string, isTrue bool) error {
	switch {
	case prm.Flag != "" && prm.typeOrDefault() == TypeBoolean:
		if isTrue {
			parts.switches = append(parts.switches, prm.Flag)
		}
	case prm.Flag != "":
		for _, v := range values {
			elem, err := joinFlag(prm, v)
			if err != nil {
				return err
			}
			parts.options = append(parts.options, elem)
		}
	case prm.BeforeSeparator || p.NoSeparator:
		for _, v := range values {
			if strings.HasPrefix(v, "-") {
				return &ParamError{Param: prm.Name, Problem: fmt.Sprintf(
					"value %q starts with '-', which %s would read as an option; pass a value that does not start with '-'",
					clip(v), placeName(p))}
			}
		}
		parts.before = append(parts.before, values...)
	default:
		parts.after = append(parts.after, values...)
	}
	return nil
}

// argv puts the parts in their order after the command and the action's
// fixed arguments.
func (parts *argvParts) argv(p Program, a Action) []string {
	argv := make([]string, 0, 1+len(a.Argv)+len(parts.switches)+len(parts.options)+len(parts.before)+1+len(parts.after))
	argv = append(argv, p.Command)
	argv = append(argv, a.Argv...)
	// Switches go first: if a switch were wrongly configured as boolean
	// while the program expects a value, it would swallow the next
	// element; a "--flag=value" element is the least harmful thing to
	// swallow.
	argv = append(argv, parts.switches...)
	argv = append(argv, parts.options...)
	argv = append(argv, parts.before...)
	if len(parts.after) > 0 {
		argv = append(argv, Separator)
		argv = append(argv, parts.after...)
	}
	return argv
}

func placeName(p Program) string {
	if p.NoSeparator {
		return fmt.Sprintf("%q (configured without \"--\" support)", p.Command)
	}
	return "the program (this positional goes before \"--\")"
}

// joinFlag puts flag and value in one argv element, so the value can never
// be read as an option of its own.
func joinFlag(prm Param, v string) (string, error) {
	switch styleOfFlag(prm.Flag) {
	case flagLong, flagSingleDash:
		return prm.Flag + "=" + v, nil
	case flagShort:
		if v == "" {
			// "-m" alone would take the next argv element as its value,
			// and that element could be "--", turning every positional
			// after it into an option.
			return "", &ParamError{Param: prm.Name, Problem: fmt.Sprintf("must not be empty (it is passed as %s<value>)", prm.Flag)}
		}
		return prm.Flag + v, nil
	}
	return "", &ParamError{Param: prm.Name, Problem: fmt.Sprintf("is configured with an invalid flag %q", prm.Flag)}
}

// values converts one argument to its argv strings, checking its type and
// constraints. For booleans it reports the value instead.
func (prm Param) values(raw any) (vals []string, isTrue bool, err error) {
	fail := func(format string, a ...any) ([]string, bool, error) {
		return nil, false, &ParamError{Param: prm.Name, Problem: fmt.Sprintf(format, a...)}
	}
	switch prm.typeOrDefault() {
	case TypeBoolean:
		b, ok := raw.(bool)
		if !ok {
			return fail("expected a boolean (true or false), got %s", describeValue(raw))
		}
		return nil, b, nil
	case TypeInteger:
		n, ok := asInteger(raw)
		if !ok {
			return fail("expected an integer, got %s", describeValue(raw))
		}
		return []string{strconv.FormatInt(n, 10)}, false, nil
	case TypeNumber:
		f, ok := asNumber(raw)
		if !ok {
			return fail("expected a number, got %s", describeValue(raw))
		}
		return []string{strconv.FormatFloat(f, 'f', -1, 64)}, false, nil
	case TypeString:
		s, ok := raw.(string)
		if !ok {
			return fail("expected a string, got %s", describeValue(raw))
		}
		if err := prm.checkString(s, ""); err != nil {
			return nil, false, err
		}
		return []string{s}, false, nil
	case TypeArray:
		items, ok := asStrings(raw)
		if !ok {
			return fail("expected an array of strings, got %s", describeValue(raw))
		}
		if len(items) > maxArrayItems {
			return fail("has %d items; at most %d are accepted", len(items), maxArrayItems)
		}
		for i, s := range items {
			if err := prm.checkString(s, fmt.Sprintf("item %d ", i)); err != nil {
				return nil, false, err
			}
		}
		return items, false, nil
	}
	return fail("has unsupported type %q in config", prm.Type)
}

// checkString applies the checks every string value goes through.
func (prm Param) checkString(s, which string) error {
	fail := func(format string, a ...any) error {
		return &ParamError{Param: prm.Name, Problem: which + fmt.Sprintf(format, a...)}
	}
	if len(s) > MaxValueBytes {
		return fail("is %d bytes long; at most %d bytes are accepted", len(s), MaxValueBytes)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return fail("contains a NUL byte, which cannot be passed to a program")
	}
	if !prm.Multiline && strings.ContainsAny(s, "\r\n") {
		return fail("contains a line break; this parameter accepts a single line")
	}
	if len(prm.Enum) > 0 && !slices.Contains(prm.Enum, s) {
		return fail("value %q is not allowed; expected one of %s", clip(s), strings.Join(quoteAll(prm.Enum), ", "))
	}
	if prm.Pattern != "" {
		re, err := compilePattern(prm.Pattern)
		if err != nil {
			return fail("%v", err)
		}
		if !re.MatchString(s) {
			return fail("value %q does not match the pattern %s (the whole value must match)", clip(s), anchorPattern(prm.Pattern))
		}
	}
	return nil
}

// maxExactInteger is the largest integer a float64 holds exactly; JSON
// numbers beyond it have already lost precision.
const maxExactInteger = 1 << 53

func asInteger(raw any) (int64, bool) {
	switch v := raw.(type) {
	case float64:
		return floatInteger(v)
	case float32:
		return floatInteger(float64(v))
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return n, true
		}
		f, err := v.Float64()
		if err != nil {
			return 0, false
		}
		return floatInteger(f)
	}
	return goInteger(raw)
}

// floatInteger accepts a float that holds an integer exactly.
func floatInteger(v float64) (int64, bool) {
	if math.IsNaN(v) || math.IsInf(v, 0) || v != math.Trunc(v) || math.Abs(v) > maxExactInteger {
		return 0, false
	}
	return int64(v), true
}

// goInteger accepts Go's integer types, as callers in Go pass them, when
// the value fits in an int64.
func goInteger(raw any) (int64, bool) {
	switch v := raw.(type) {
	case int:
		return int64(v), true
	case int8:
		return int64(v), true
	case int16:
		return int64(v), true
	case int32:
		return int64(v), true
	case int64:
		return v, true
	case uint8:
		return int64(v), true
	case uint16:
		return int64(v), true
	case uint32:
		return int64(v), true
	case uint:
		if uint64(v) > math.MaxInt64 {
			return 0, false
		}
		return int64(v), true
	case uint64:
		if v > math.MaxInt64 {
			return 0, false
		}
		return int64(v), true
	}
	return 0, false
}

func asNumber(raw any) (float64, bool) {
	var f float64
	switch v := raw.(type) {
	case float64:
		f = v
	case float32:
		f = float64(v)
	case json.Number:
		var err error
		if f, err = v.Float64(); err != nil {
			return 0, false
		}
	default:
		n, ok := asInteger(raw)
		if !ok {
			return 0, false
		}
		f = float64(n)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

func asStrings(raw any) ([]string, bool) {
	switch v := raw.(type) {
	case []string:
		return v, true
	case []any:
		out := make([]string, len(v))
		for i, item := range v {
			s, ok := item.(string)
			if !ok {
				return nil, false
			}
			out[i] = s
		}
		return out, true
	}
	return nil, false
}

// describeValue names what a model sent, for error messages.
func describeValue(raw any) string {
	switch v := raw.(type) {
	case string:
		return fmt.Sprintf("the string %q", clip(v))
	case bool:
		return fmt.Sprintf("the boolean %v", v)
	case float64, float32, json.Number, int, int64, int32, uint, uint64:
		return fmt.Sprintf("the number %v", v)
	case []any, []string:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a %T", raw)
}

// describeParams lists an action's parameters for an error message.
func describeParams(a Action) string {
	if len(a.Params) == 0 {
		return fmt.Sprintf("action %q takes no parameters", a.Name)
	}
	parts := make([]string, len(a.Params))
	for i, prm := range a.Params {
		parts[i] = prm.Name + " (" + prm.typeLabel() + ")"
	}
	return fmt.Sprintf("action %q takes: %s", a.Name, strings.Join(parts, ", "))
}

func describeParam(a Action, name string) string {
	for _, prm := range a.Params {
		if prm.Name == name {
			if prm.Description != "" {
				return fmt.Sprintf("expected %s: %s", prm.typeLabel(), prm.Description)
			}
			return "expected " + prm.typeLabel()
		}
	}
	return "it is not declared in params (config error)"
}

func (prm Param) typeLabel() string {
	t := prm.typeOrDefault()
	switch {
	case len(prm.Enum) > 0 && t == TypeString:
		return "one of " + strings.Join(quoteAll(prm.Enum), ", ")
	case t == TypeArray:
		return "array of strings"
	}
	return string(t)
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// clip shortens a value quoted in an error message.
func clip(s string) string {
	const max = 80
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
