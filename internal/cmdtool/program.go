package cmdtool

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Defaults applied when a Program leaves a limit at its zero value.
const (
	// DefaultTimeout bounds one call when Program.Timeout is zero.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxOutput caps each captured stream when Program.MaxOutput is zero.
	DefaultMaxOutput int64 = 256 << 10
	// MaxValueBytes is the largest single argument value accepted from a
	// model. Linux refuses any one argv string over 128 KiB (MAX_ARG_STRLEN);
	// refusing earlier gives the model a clear message instead of E2BIG.
	MaxValueBytes = 64 << 10
)

// DiscoverHelp is the Program.Discover value that reads the program's own help.
const DiscoverHelp = "help"

// Program is one command-line program exposed as a group of tools, as
// configured under the "commands" key (docs/design.md#command-line-programs). Everything in it comes from
// configuration and is trusted; only the arguments given to BuildArgv and Run
// come from a model and are treated as hostile.
type Program struct {
	// Name is the config key, used as the group name and in messages.
	Name string
	// Command is the program to run: a bare name looked up on PATH (the
	// child's PATH, skipping relative entries), or a path containing a slash
	// (relative paths are taken relative to Dir).
	Command string
	// Description describes the group to the model.
	Description string
	// Dir is the fixed working directory; empty means toolfold's own.
	Dir string
	// Env is added to the minimal environment described in Environ.
	Env map[string]string
	// Timeout bounds each call; zero means DefaultTimeout.
	Timeout time.Duration
	// MaxOutput caps the bytes kept of stdout and, separately, of stderr;
	// zero means DefaultMaxOutput.
	MaxOutput int64
	// Discover is "" (declared actions only) or DiscoverHelp.
	Discover string
	// NoSeparator says the program does not honour "--" as the end of
	// options. No "--" is emitted, and every positional value that starts
	// with "-" is refused, because it would be read as an option.
	NoSeparator bool
	// Include, when not empty, keeps only actions matching one of these
	// globs (path.Match syntax over action names; "remote *" means
	// "remote_*").
	Include []string
	// Exclude drops actions matching any of these globs, after Include.
	Exclude []string
	// Actions are the declared actions. They override or extend the
	// discovered ones, matched by name.
	Actions []Action
}

// Action is one subcommand of a Program, exposed as one tool (flat
// exposition) or one action of the group's tool (grouped exposition).
type Action struct {
	// Name is the tool or action name; nested subcommands are joined with
	// "_" ("remote_add").
	Name string
	// Description tells the model what the action does.
	Description string
	// Argv holds the fixed words placed right after the command
	// ("remote", "add", "--no-color"). Empty means none: a declared action
	// without argv runs the bare command.
	Argv []string
	// Params are the parameters a model may set, in declared order, which
	// is also the order positionals are placed in.
	Params []Param
	// Required names the parameters that must be given.
	Required []string
	// ReadOnly marks an action that changes nothing (readOnlyHint).
	ReadOnly bool
	// Destructive marks an action that may destroy data (destructiveHint).
	Destructive bool
}

// ParamType is the JSON type of a parameter.
type ParamType string

// The parameter types a command-line action accepts.
const (
	TypeString  ParamType = "string"
	TypeInteger ParamType = "integer"
	TypeNumber  ParamType = "number"
	TypeBoolean ParamType = "boolean"
	TypeArray   ParamType = "array" // of strings
)

// Param is one parameter of an Action. It is placed either as an option
// (Flag set) or as a positional argument (Positional true), never both.
type Param struct {
	// Name is the JSON property name the model sets.
	Name string
	// Type is the JSON type; empty means TypeString.
	Type ParamType
	// Enum, when not empty, lists the allowed values of a string (or of
	// each item of an array).
	Enum []string
	// Items is the item type of an array; only TypeString (or empty) is
	// supported, because every argv element is a string anyway.
	Items ParamType
	// Flag is the option this parameter sets, from configuration only:
	// "--max-count" is placed as "--max-count=VALUE", "-n" as "-nVALUE",
	// and a single-dash long option such as "-timeout" (Go's flag package)
	// as "-timeout=VALUE". A true boolean is placed as the bare flag; false
	// is omitted. An array repeats the flag once per item.
	Flag string
	// Positional places the value after the "--" separator, in declared
	// order; an array expands to one argument per item.
	Positional bool
	// BeforeSeparator places a positional before "--" instead of after it,
	// for programs that read operands differently on each side (git reads
	// revisions before "--" and paths after it). Such a value must not
	// start with "-".
	BeforeSeparator bool
	// Multiline allows "\n" and "\r" in the value (a commit message).
	// Without it, line breaks are refused: some programs write arguments
	// into line-oriented files, where a newline would smuggle in a new
	// entry.
	Multiline bool
	// Pattern is a Go regular expression the whole value must match (it is
	// anchored: "^(?:Pattern)$"). For arrays it applies to each item.
	Pattern string
	// Description tells the model what the parameter means.
	Description string
}

// Param names are JSON property names chosen in config or derived from
// help; keep them to identifiers so every exposition and client can use them.
// Compiled on first use (see help.go).
var paramNamePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`) })

// Flag names a model can never choose; these shapes are the only ones
// BuildArgv knows how to join with a value without ambiguity.
var (
	longFlagPattern       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^--[A-Za-z0-9][A-Za-z0-9_.-]*$`) })
	shortFlagPattern      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^-[A-Za-z0-9]$`) })
	singleDashLongPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^-[A-Za-z0-9][A-Za-z0-9_.-]+$`) })
	actionNamePattern     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`) })
	envNamePattern        = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
)

// flagStyle says how a flag is joined with its value.
type flagStyle int

const (
	flagInvalid    flagStyle = iota
	flagLong                 // --name=value
	flagShort                // -nvalue
	flagSingleDash           // -name=value
)

func styleOfFlag(flag string) flagStyle {
	switch {
	case longFlagPattern().MatchString(flag):
		return flagLong
	case shortFlagPattern().MatchString(flag):
		return flagShort
	case singleDashLongPattern().MatchString(flag):
		return flagSingleDash
	}
	return flagInvalid
}

// typeOrDefault returns the parameter's type, TypeString when unset.
func (prm Param) typeOrDefault() ParamType {
	if prm.Type == "" {
		return TypeString
	}
	return prm.Type
}

// Validate reports every problem with the program's configuration, one
// error per problem, each naming where it is and how to fix it. Run and
// BuildArgv repeat the checks that matter for safety, so an unvalidated
// Program cannot be used to bypass them.
func (p Program) Validate() error {
	var errs []error
	where := "command " + quoteName(p.Name)
	if strings.TrimSpace(p.Command) == "" {
		errs = append(errs, fmt.Errorf("%s: \"command\" is empty; set it to a program name on PATH or a path", where))
	}
	if strings.ContainsRune(p.Command, 0) {
		errs = append(errs, fmt.Errorf("%s: \"command\" contains a NUL byte", where))
	}
	switch p.Discover {
	case "", DiscoverHelp:
	default:
		errs = append(errs, fmt.Errorf("%s: discover %q is not supported; use %q or leave it out", where, p.Discover, DiscoverHelp))
	}
	if p.Timeout < 0 {
		errs = append(errs, fmt.Errorf("%s: timeout %s is negative", where, p.Timeout))
	}
	if p.MaxOutput < 0 {
		errs = append(errs, fmt.Errorf("%s: maxOutput %d is negative", where, p.MaxOutput))
	}
	for k, v := range p.Env {
		if !envNamePattern().MatchString(k) {
			errs = append(errs, fmt.Errorf("%s: env name %q is not a valid variable name (letters, digits, _)", where, k))
		}
		if strings.ContainsRune(v, 0) {
			errs = append(errs, fmt.Errorf("%s: env %s contains a NUL byte", where, k))
		}
	}
	for _, g := range append(append([]string(nil), p.Include...), p.Exclude...) {
		if err := checkGlob(g); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
		}
	}
	if p.Discover == "" && len(p.Actions) == 0 {
		errs = append(errs, fmt.Errorf("%s: no actions; declare \"actions\" or set \"discover\": %q", where, DiscoverHelp))
	}
	seen := map[string]bool{}
	for _, a := range p.Actions {
		if seen[a.Name] {
			errs = append(errs, fmt.Errorf("%s: action %q is declared twice", where, a.Name))
		}
		seen[a.Name] = true
		if err := a.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
		}
	}
	return errors.Join(errs...)
}

// Validate reports every problem with one action's declaration.
func (a Action) Validate() error {
	var errs []error
	where := "action " + quoteName(a.Name)
	if !actionNamePattern().MatchString(a.Name) {
		errs = append(errs, fmt.Errorf("%s: name must be 1-64 letters, digits, '_' or '-'", where))
	}
	for _, w := range a.Argv {
		if strings.ContainsRune(w, 0) {
			errs = append(errs, fmt.Errorf("%s: argv word %q contains a NUL byte", where, w))
		}
	}
	names := map[string]bool{}
	flags := map[string]string{}
	for _, prm := range a.Params {
		if names[prm.Name] {
			errs = append(errs, fmt.Errorf("%s: parameter %q is declared twice", where, prm.Name))
		}
		names[prm.Name] = true
		if err := prm.validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
		}
		if prm.Flag != "" {
			if other, dup := flags[prm.Flag]; dup {
				errs = append(errs, fmt.Errorf("%s: parameters %q and %q both set %s", where, other, prm.Name, prm.Flag))
			}
			flags[prm.Flag] = prm.Name
		}
	}
	for _, r := range a.Required {
		if !names[r] {
			errs = append(errs, fmt.Errorf("%s: required parameter %q is not declared in params", where, r))
		}
	}
	return errors.Join(errs...)
}

func (prm Param) validate() error {
	where := "parameter " + quoteName(prm.Name)
	var errs []error
	if !paramNamePattern().MatchString(prm.Name) {
		errs = append(errs, fmt.Errorf("%s: name must be a letter or '_' followed by up to 63 letters, digits or '_'", where))
	}
	errs = append(errs, prm.typeErrors(where)...)
	errs = append(errs, prm.placementErrors(where)...)
	if prm.Pattern != "" {
		if _, err := compilePattern(prm.Pattern); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
		}
	}
	return errors.Join(errs...)
}

// typeErrors checks type, items and enum, and that they fit together.
func (prm Param) typeErrors(where string) []error {
	var errs []error
	typ := prm.typeOrDefault()
	switch typ {
	case TypeString, TypeInteger, TypeNumber, TypeBoolean, TypeArray:
	default:
		errs = append(errs, fmt.Errorf("%s: type %q is not one of string, integer, number, boolean, array", where, prm.Type))
	}
	if prm.Items != "" && prm.Items != TypeString {
		errs = append(errs, fmt.Errorf("%s: array items must be strings, not %q", where, prm.Items))
	}
	if prm.Items != "" && typ != TypeArray {
		errs = append(errs, fmt.Errorf("%s: items is only meaningful for type array", where))
	}
	if len(prm.Enum) > 0 && typ != TypeString && typ != TypeArray {
		errs = append(errs, fmt.Errorf("%s: enum is only supported for string and array parameters", where))
	}
	return errs
}

// placementErrors checks that the parameter has exactly one place in the
// command line, a well-formed flag or a position, and that its options
// suit that place.
func (prm Param) placementErrors(where string) []error {
	var errs []error
	switch {
	case prm.Flag != "" && prm.Positional:
		errs = append(errs, fmt.Errorf("%s: set either flag or positional, not both", where))
	case prm.Flag == "" && !prm.Positional:
		errs = append(errs, fmt.Errorf("%s: set a flag (such as \"--%s\") or \"positional\": true", where, strings.ReplaceAll(prm.Name, "_", "-")))
	case prm.Flag != "" && styleOfFlag(prm.Flag) == flagInvalid:
		errs = append(errs, fmt.Errorf("%s: flag %q must look like \"--name\", \"-n\" or \"-name\" (letters, digits, '-', '_', '.')", where, prm.Flag))
	}
	if prm.Positional && prm.typeOrDefault() == TypeBoolean {
		errs = append(errs, fmt.Errorf("%s: a boolean cannot be positional; give it a flag", where))
	}
	if prm.BeforeSeparator && !prm.Positional {
		errs = append(errs, fmt.Errorf("%s: beforeSeparator only applies to positional parameters", where))
	}
	return errs
}

// compilePattern anchors a configured pattern so that it must match the
// whole value: an unanchored "[0-9]+" would otherwise accept "1; rm -rf /".
func compilePattern(pattern string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(anchorPattern(pattern))
	if err != nil {
		return nil, fmt.Errorf("pattern %q is not a valid Go regular expression: %w", pattern, err)
	}
	return re, nil
}

func anchorPattern(pattern string) string { return "^(?:" + pattern + ")$" }

func quoteName(s string) string { return fmt.Sprintf("%q", s) }
