package config

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// decoder turns the parsed tree into Config structs, driven by the structs' json
// tags, collecting a Problem for every mismatch instead of stopping at the first.
type decoder struct {
	// fields are fieldsOf's answers by struct type: a config of hundreds
	// of servers decodes the same few structs hundreds of times.
	fields    map[reflect.Type]structFields
	file      string
	lookup    LookupEnv
	diags     Diagnostics
	positions map[string]int
	// unsetRefs indexes problems about unset variables, which are downgraded to
	// warnings inside disabled servers and commands once "disabled" is known.
	unsetRefs []int
	// leftOut are the paths of optional servers left out for unset
	// variables, and of the values that named them.
	leftOut []string
	// expansions are the variables ${VAR} references read, where.
	expansions []expansion
}

// expansion is one environment variable read by a ${VAR} reference at path.
type expansion struct {
	path, name, value string
}

var (
	durationType = reflect.TypeFor[Duration]()
	byteSizeType = reflect.TypeFor[ByteSize]()
	idleType     = reflect.TypeFor[IdleTimeout]()
	paramsType   = reflect.TypeFor[Params]()
	networkType  = reflect.TypeFor[SandboxNetwork]()
)

// plainKey is a key that reads well after a dot in a path.
var plainKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// joinPath appends an object key to a key path: "mcpServers.github", or
// `mcpServers["my server"]` when the key has characters that would confuse.
func joinPath(path, key string) string {
	if !plainKey.MatchString(key) {
		return path + "[" + strconv.Quote(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// indexPath appends a list index: "args[2]".
func indexPath(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

func (d *decoder) at(path string, line int) {
	if _, ok := d.positions[path]; !ok {
		d.positions[path] = line
	}
}

func (d *decoder) problem(sev Severity, line int, path, format string, args ...any) {
	d.diags = append(d.diags, Problem{Severity: sev, File: d.file, Line: line, Path: path, Message: fmt.Sprintf(format, args...)})
}

func (d *decoder) errorf(n *node, path, format string, args ...any) {
	d.problem(SeverityError, n.line, path, format, args...)
}

// decode fills v from n. v must be settable.
func (d *decoder) decode(n *node, path string, v reflect.Value) {
	d.at(path, n.line)
	switch v.Type() {
	case durationType:
		d.decodeDuration(n, path, v)
		return
	case byteSizeType:
		d.decodeByteSize(n, path, v)
		return
	case idleType:
		d.decodeIdleTimeout(n, path, v)
		return
	case paramsType:
		d.decodeParams(n, path, v)
		return
	case networkType:
		d.decodeNetwork(n, path, v)
		return
	}
	switch v.Kind() {
	case reflect.String:
		if s, ok := d.scalarString(n, path, v.Type()); ok {
			v.SetString(s)
		}
	case reflect.Bool:
		d.decodeBool(n, path, v)
	case reflect.Int, reflect.Int64:
		d.decodeInt(n, path, v)
	case reflect.Pointer:
		elem := reflect.New(v.Type().Elem())
		setDefaults(elem)
		d.decode(n, path, elem.Elem())
		v.Set(elem)
	case reflect.Slice:
		if n.kind != kindList {
			d.typeError(n, path, v.Type())
			return
		}
		out := reflect.MakeSlice(v.Type(), len(n.items), len(n.items))
		for i, item := range n.items {
			setDefaults(out.Index(i).Addr())
			d.decode(item, indexPath(path, i), out.Index(i))
		}
		v.Set(out)
	case reflect.Map:
		if n.kind != kindObject {
			d.typeError(n, path, v.Type())
			return
		}
		out := reflect.MakeMapWithSize(v.Type(), len(n.entries))
		for _, e := range n.entries {
			elemPath := joinPath(path, e.key)
			d.at(elemPath, e.keyLine)
			elem := reflect.New(v.Type().Elem()).Elem()
			setDefaults(elem.Addr())
			setName(elem, e.key)
			d.decode(e.value, elemPath, elem)
			out.SetMapIndex(reflect.ValueOf(e.key).Convert(v.Type().Key()), elem)
		}
		v.Set(out)
	case reflect.Struct:
		d.decodeStruct(n, path, v)
	default:
		panic(fmt.Sprintf("config: no decoder for %s", v.Type())) // a programming error in this package
	}
}

// setDefaults calls setDefaults on a freshly made element when its type has one.
func setDefaults(ptr reflect.Value) {
	if s, ok := ptr.Interface().(interface{ setDefaults() }); ok {
		s.setDefaults()
	}
}

// setName fills the Name field (json:"-") of a map element from its key.
func setName(elem reflect.Value, key string) {
	if elem.Kind() != reflect.Struct {
		return
	}
	if f, ok := elem.Type().FieldByName("Name"); ok && f.Tag.Get("json") == "-" {
		elem.FieldByIndex(f.Index).SetString(key)
	}
}

// scalarString expands a string value. Numbers and booleans are refused rather than
// converted: ["-p", 8080] is a mistake the client would refuse too.
func (d *decoder) scalarString(n *node, path string, t reflect.Type) (string, bool) {
	if n.kind != kindString {
		d.typeError(n, path, t)
		return "", false
	}
	return d.expand(n, path)
}

// expand runs ${VAR} expansion on a string node and reports failures at path.
func (d *decoder) expand(n *node, path string) (string, bool) {
	lookup := d.lookup
	if lookup != nil {
		lookup = func(name string) (string, bool) {
			v, ok := d.lookup(name)
			if ok && v != "" {
				d.expansions = append(d.expansions, expansion{path: path, name: name, value: v})
			}
			return v, ok
		}
	}
	out, errs := expand(n.text, lookup)
	for _, e := range errs {
		if e.unset {
			d.unsetRefs = append(d.unsetRefs, len(d.diags))
		}
		d.errorf(n, path, "%s", e.msg)
	}
	return out, len(errs) == 0
}

// fromVariable reports whether a string node stands in for a non-string value
// through expansion ("${LAZY:-true}"), which is the one case a string may fill a
// boolean, number, or duration given as a number.
func fromVariable(n *node) bool { return n.kind == kindString && strings.Contains(n.text, "${") }

// scalarText returns the text of a scalar of kind want, or of a string node
// that fromString accepts, after expansion; any other node is a type error.
func (d *decoder) scalarText(n *node, path string, v reflect.Value, want kind, fromString func(*node) bool) (string, bool) {
	switch {
	case n.kind == want:
		return n.text, true
	case fromString(n):
		return d.expand(n, path)
	}
	d.typeError(n, path, v.Type())
	return "", false
}

func (d *decoder) decodeBool(n *node, path string, v reflect.Value) {
	text, ok := d.scalarText(n, path, v, kindBool, fromVariable)
	if !ok {
		return
	}
	b, err := strconv.ParseBool(strings.ToLower(strings.TrimSpace(text)))
	if err != nil {
		d.errorf(n, path, "expected true or false, got %q", text)
		return
	}
	v.SetBool(b)
}

func (d *decoder) decodeInt(n *node, path string, v reflect.Value) {
	text, ok := d.scalarText(n, path, v, kindNumber, fromVariable)
	if !ok {
		return
	}
	i, err := strconv.ParseInt(strings.TrimSpace(text), 0, 32)
	if err != nil {
		d.errorf(n, path, "expected a whole number, got %s", text)
		return
	}
	v.SetInt(i)
}

func (d *decoder) decodeDuration(n *node, path string, v reflect.Value) {
	d.decodePositive(n, path, v, func(text string) (int64, error) {
		dur, err := parseDuration(text)
		return int64(dur), err
	})
}

// decodeIdleTimeout reads a duration that may also be zero or "never"
// (switched off), unlike the timeouts decodePositive reads.
func (d *decoder) decodeIdleTimeout(n *node, path string, v reflect.Value) {
	anyString := func(n *node) bool { return n.kind == kindString }
	text, ok := d.scalarText(n, path, v, kindNumber, anyString)
	if !ok {
		return
	}
	t, err := parseIdleTimeout(text)
	if err != nil {
		d.errorf(n, path, "%s", err)
		return
	}
	v.SetInt(int64(t))
}

func (d *decoder) decodeByteSize(n *node, path string, v reflect.Value) {
	d.decodePositive(n, path, v, func(text string) (int64, error) {
		size, err := parseByteSize(text)
		return int64(size), err
	})
}

// decodePositive reads a quantity written as a number or a string with a
// unit ("60s", "256KiB"), which must be more than zero.
func (d *decoder) decodePositive(n *node, path string, v reflect.Value, parse func(string) (int64, error)) {
	anyString := func(n *node) bool { return n.kind == kindString }
	text, ok := d.scalarText(n, path, v, kindNumber, anyString)
	if !ok {
		return
	}
	q, err := parse(text)
	if err != nil {
		d.errorf(n, path, "%s", err)
		return
	}
	if q <= 0 {
		d.errorf(n, path, "%s must be more than zero; remove the key to use the default", text)
		return
	}
	v.SetInt(q)
}

// decodeParams keeps the file's key order, which is the order of positionals.
func (d *decoder) decodeParams(n *node, path string, v reflect.Value) {
	if n.kind != kindObject {
		d.typeError(n, path, v.Type())
		return
	}
	params := make(Params, len(n.entries))
	for i, e := range n.entries {
		p := joinPath(path, e.key)
		d.at(p, e.keyLine)
		params[i].Name = e.key
		d.decode(e.value, p, reflect.ValueOf(&params[i]).Elem())
	}
	v.Set(reflect.ValueOf(params))
}

// structField is one key a struct accepts.
type structField struct {
	key   string // the canonical key
	index []int
}

// structFields are fieldsOf's results for one type.
type structFields struct {
	byKey     map[string]structField
	canonical []string
}

// fieldsOf is fieldsOf(t), worked out once per type; the results are
// shared and must not be changed.
func (d *decoder) fieldsOf(t reflect.Type) (map[string]structField, []string) {
	if f, ok := d.fields[t]; ok {
		return f.byKey, f.canonical
	}
	byKey, canonical := fieldsOf(t)
	if d.fields == nil {
		d.fields = map[reflect.Type]structFields{}
	}
	d.fields[t] = structFields{byKey, canonical}
	return byKey, canonical
}

// fieldsOf maps every accepted key (canonical and alias) of a struct type to its field.
func fieldsOf(t reflect.Type) (byKey map[string]structField, canonical []string) {
	byKey = map[string]structField{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		sf := structField{key: name, index: f.Index}
		byKey[name] = sf
		canonical = append(canonical, name)
		if alias := f.Tag.Get("alias"); alias != "" {
			byKey[alias] = sf
		}
	}
	return byKey, canonical
}

func (d *decoder) decodeStruct(n *node, path string, v reflect.Value) {
	if n.kind != kindObject {
		d.typeError(n, path, v.Type())
		return
	}
	byKey, canonical := d.fieldsOf(v.Type())
	var ignored map[string]string
	if ig, ok := v.Addr().Interface().(interface{ ignoredKeys() map[string]string }); ok {
		ignored = ig.ignoredKeys()
	}
	seenAs := map[string]string{} // canonical key → the spelling used first
	for _, e := range n.entries {
		keyPath := joinPath(path, e.key)
		field, known := byKey[e.key]
		if !known {
			if why, ok := ignored[e.key]; ok {
				d.problem(SeverityWarning, e.keyLine, keyPath, "ignored: %q is %s, which toolfold does not use", e.key, why)
				continue
			}
			d.unknownKey(e, path, keyPath, v.Type(), canonical)
			continue
		}
		if first, dup := seenAs[field.key]; dup {
			d.problem(SeverityError, e.keyLine, keyPath, "%q and %q are two spellings of the same key; keep one", first, e.key)
			continue
		}
		seenAs[field.key] = e.key
		d.at(keyPath, e.keyLine)
		if e.value.kind == kindNull {
			continue // an explicit null means "use the default", as an absent key does
		}
		fieldPath := joinPath(path, field.key)
		if fieldPath != keyPath {
			d.at(fieldPath, e.keyLine)
		}
		d.decode(e.value, keyPath, v.FieldByIndex(field.index))
	}
}

// misplacedKeys says where a key found at the top level belongs, for the commonest
// slip of writing a section's key beside it rather than inside it.
func misplacedKeys() map[string]string {
	out := map[string]string{}
	for _, section := range []struct {
		where string
		t     reflect.Type
	}{
		{`"mcpServers" under a server's name`, reflect.TypeFor[ServerConfig]()},
		{`"serverDefaults"`, reflect.TypeFor[ServerDefaults]()}, // after ServerConfig: a top-level idleTimeout is the default
		{`"http"`, reflect.TypeFor[HTTPConfig]()},
		{`"exposition"`, reflect.TypeFor[ExpositionConfig]()},
		{`"disclosure"`, reflect.TypeFor[DisclosureConfig]()},
	} {
		_, keys := fieldsOf(section.t)
		for _, k := range keys {
			out[k] = section.where
		}
	}
	return out
}

func (d *decoder) unknownKey(e entry, parentPath, keyPath string, t reflect.Type, canonical []string) {
	if t == reflect.TypeFor[Config]() {
		if e.key == "$schema" {
			return // editors' schema hint, harmless
		}
		if e.key == "servers" {
			d.problem(SeverityError, e.keyLine, keyPath, `unknown key "servers" (VS Code's name for it); rename it to "mcpServers"`)
			return
		}
		if e.key == "globalShortcut" {
			return // Claude Desktop's own setting; it changes nothing a user could expect of toolfold
		}
		if nearest(e.key, canonical) == "" {
			if where, ok := misplacedKeys()[e.key]; ok {
				d.problem(SeverityError, e.keyLine, keyPath, "unknown top-level key %q; it belongs inside %s", e.key, where)
				return
			}
		}
	}
	if hint := didYouMean(e.key, canonical); hint != "" {
		d.problem(SeverityError, e.keyLine, keyPath, "unknown key %q%s", e.key, hint)
		return
	}
	sorted := append([]string(nil), canonical...)
	sort.Strings(sorted)
	d.problem(SeverityError, e.keyLine, keyPath, "unknown key %q; the keys allowed here are %s", e.key, strings.Join(sorted, ", "))
}

// expectedOf describes what a Go type accepts, in the user's words.
func expectedOf(t reflect.Type) string {
	switch t {
	case durationType:
		return `a duration such as "30s"`
	case byteSizeType:
		return `a size such as "256KiB"`
	case idleType:
		return `a duration such as "10m", or "never"`
	case paramsType:
		return "an object of parameters"
	case networkType:
		return "true, false, or a list of TCP ports"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64:
		return "a whole number"
	case reflect.Pointer:
		return expectedOf(t.Elem())
	case reflect.Slice:
		if t.Elem().Kind() == reflect.String {
			return "a list of strings"
		}
		return "a list of objects"
	case reflect.Map:
		if t.Elem().Kind() == reflect.String {
			return "an object of string values"
		}
		return "an object"
	}
	return "an object"
}

func (d *decoder) typeError(n *node, path string, t reflect.Type) {
	want := expectedOf(t)
	hint := ""
	switch {
	case want == "a string" && (n.kind == kindNumber || n.kind == kindBool):
		hint = fmt.Sprintf(`; put it in quotes: "%s"`, n.text)
	case want == "a list of strings" && n.kind == kindString:
		hint = fmt.Sprintf(`; write it as a list: [%q]`, n.text)
	case want == "true or false" && n.kind == kindString:
		hint = fmt.Sprintf(`; write true or false without quotes (got %q)`, n.text)
	case want == "a whole number" && n.kind == kindString:
		hint = fmt.Sprintf(`; write the number without quotes (got %q)`, n.text)
	}
	d.errorf(n, path, "expected %s, got %s%s", want, n.kind.describe(), hint)
}

// decodeNetwork reads a sandbox's network: true, false, or a list of
// TCP ports.
func (d *decoder) decodeNetwork(n *node, path string, v reflect.Value) {
	var net SandboxNetwork
	switch n.kind {
	case kindBool:
		d.decodeBool(n, path, reflect.ValueOf(&net.All).Elem())
	case kindList:
		d.decode(n, path, reflect.ValueOf(&net.Ports).Elem())
	default:
		d.typeError(n, path, v.Type())
		return
	}
	v.Set(reflect.ValueOf(net))
}
