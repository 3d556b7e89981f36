package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold"
)

func addJSONTools(g *toolfold.Group) {
	tool(g, &mcp.Tool{
		Name:        "json_validate",
		Description: "Check whether text is one well-formed JSON document. Returns valid, and otherwise the error with its line and column; for valid JSON also its top-level type, nesting depth and any duplicate keys.",
		Annotations: readOnly("Validate JSON"),
	}, jsonValidate)

	tool(g, &mcp.Tool{
		Name:        "json_format",
		Description: "Pretty-print a JSON document with a chosen indent, or compact it onto one line (indent 0), optionally sorting object keys. Returns the formatted JSON.",
		Annotations: readOnly("Format JSON"),
	}, jsonFormat)

	tool(g, &mcp.Tool{
		Name:        "json_query",
		Description: "Pick a value out of a JSON document by path, e.g. items[0].name, items[-1], [\"odd.key\"] or items[*].id for every element. Returns the value found and its type.",
		Annotations: readOnly("Query JSON"),
	}, jsonQuery)

	tool(g, &mcp.Tool{
		Name:        "json_diff",
		Description: "Compare two JSON documents structurally (key order and number formatting do not matter). Returns every added, removed and changed value with its path.",
		Annotations: readOnly("Diff JSON"),
	}, jsonDiff)
}

// decodeJSON reads exactly one JSON document, keeping numbers exact.
func decodeJSON(doc, param string) (any, error) {
	if strings.TrimSpace(doc) == "" {
		return nil, errEmpty(param, `JSON text such as {"a": [1, 2]}`)
	}
	if msg, line, col, bad := syntaxProblem(doc); bad {
		return nil, fmt.Errorf("%s is not valid JSON: %s at line %d, column %d", param, msg, line, col)
	}
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%s is not valid JSON: %w", param, err)
	}
	return v, nil
}

// syntaxProblem reports where a text fails to be one JSON document. It
// asks json.Unmarshal, whose error offsets are exact (a Decoder's are not),
// and points at the offending character.
func syntaxProblem(doc string) (msg string, line, col int, bad bool) {
	var raw json.RawMessage
	err := json.Unmarshal([]byte(doc), &raw)
	if err == nil {
		return "", 0, 0, false
	}
	var syn *json.SyntaxError
	if !errors.As(err, &syn) {
		return err.Error(), 1, 1, true
	}
	msg = syn.Error()
	at := int(syn.Offset) - 1 // Offset counts the offending byte
	switch {
	case strings.HasPrefix(msg, "unexpected end of JSON input"):
		msg, at = "the text ends before the JSON value does: a closing bracket, brace or quote is missing", len(doc)
	case strings.Contains(msg, "after top-level value"):
		msg = "there is more text after the first JSON value: pass a single document (wrap several in an array)"
	}
	line, col = lineCol(doc, at)
	return msg, line, col, true
}

// lineCol converts a byte offset to a 1-based line and column (in
// characters).
func lineCol(s string, offset int) (int, int) {
	offset = min(max(offset, 0), len(s))
	before := s[:offset]
	line := strings.Count(before, "\n") + 1
	col := len([]rune(before[strings.LastIndexByte(before, '\n')+1:])) + 1
	return line, col
}

type jsonDocumentInput struct {
	Document string `json:"document" jsonschema:"the JSON document, as text"`
}

type jsonValidateOutput struct {
	Valid         bool     `json:"valid" jsonschema:"true when the text is exactly one well-formed JSON document"`
	Error         string   `json:"error,omitempty" jsonschema:"what is wrong, when not valid"`
	Line          int      `json:"line,omitempty" jsonschema:"the line of the error, from 1"`
	Column        int      `json:"column,omitempty" jsonschema:"the column of the error, from 1"`
	Type          string   `json:"type,omitempty" jsonschema:"the top-level type: object, array, string, number, boolean or null"`
	Depth         int      `json:"depth,omitempty" jsonschema:"the deepest nesting of objects and arrays (a scalar is 0)"`
	DuplicateKeys []string `json:"duplicate_keys,omitempty" jsonschema:"paths of keys that occur twice in the same object; most parsers keep only the last"`
}

func jsonValidate(_ context.Context, in jsonDocumentInput) (jsonValidateOutput, error) {
	doc := in.Document
	if strings.TrimSpace(doc) == "" {
		return jsonValidateOutput{Valid: false, Error: "the document is empty", Line: 1, Column: 1}, nil
	}
	if msg, line, col, bad := syntaxProblem(doc); bad {
		return jsonValidateOutput{Error: msg, Line: line, Column: col}, nil
	}
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	w := &jsonWalker{dec: dec}
	v, err := w.value("")
	if err != nil {
		return jsonValidateOutput{}, fmt.Errorf("walking a document that parsed: %w", err)
	}
	return jsonValidateOutput{Valid: true, Type: jsonType(v), Depth: w.maxDepth, DuplicateKeys: w.duplicates}, nil
}

// jsonWalker reads a document token by token, which is the only way to see
// duplicate keys (decoding into a map silently keeps the last one).
type jsonWalker struct {
	dec        *json.Decoder
	depth      int
	maxDepth   int
	duplicates []string
}

// value reads one value and returns a stand-in of its type (its content
// is not needed).
func (w *jsonWalker) value(path string) (any, error) {
	tok, err := w.dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	w.depth++
	w.maxDepth = max(w.maxDepth, w.depth)
	defer func() { w.depth-- }()
	switch d {
	case '{':
		seen := map[string]bool{}
		for w.dec.More() {
			kt, err := w.dec.Token()
			if err != nil {
				return nil, err
			}
			key, _ := kt.(string)
			p := joinPath(path, key)
			if seen[key] {
				w.duplicates = append(w.duplicates, p)
			}
			seen[key] = true
			if _, err := w.value(p); err != nil {
				return nil, err
			}
		}
		if _, err := w.dec.Token(); err != nil {
			return nil, err
		}
		return map[string]any{}, nil
	case '[':
		for i := 0; w.dec.More(); i++ {
			if _, err := w.value(fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return nil, err
			}
		}
		if _, err := w.dec.Token(); err != nil {
			return nil, err
		}
		return []any{}, nil
	}
	return nil, fmt.Errorf("unexpected %q", d)
}

func jsonType(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number, float64:
		return "number"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

var plainKey = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$-]*$`)

// joinPath appends a key to a path in the syntax json_query reads.
func joinPath(path, key string) string {
	if plainKey.MatchString(key) && key != "$" {
		if path == "" {
			return key
		}
		return path + "." + key
	}
	return path + "[" + strconv.Quote(key) + "]"
}

func displayPath(path string) string {
	if path == "" {
		return "$"
	}
	return path
}

type jsonFormatInput struct {
	Document string `json:"document" jsonschema:"the JSON document, as text"`
	Indent   *int   `json:"indent,omitempty" jsonschema:"spaces per level, 0 to 8; 0 puts everything on one line (compact); default 2"`
	SortKeys bool   `json:"sort_keys,omitempty" jsonschema:"sort the keys of every object alphabetically"`
}

type jsonFormatOutput struct {
	Result string `json:"result" jsonschema:"the formatted JSON"`
	Bytes  int    `json:"bytes" jsonschema:"the length of result in bytes"`
}

func jsonFormat(_ context.Context, in jsonFormatInput) (jsonFormatOutput, error) {
	indent := 2
	if in.Indent != nil {
		indent = *in.Indent
	}
	if indent < 0 || indent > 8 {
		return jsonFormatOutput{}, fmt.Errorf("indent is %d: pass 0 (compact) to 8", indent)
	}
	v, err := decodeJSON(in.Document, "document")
	if err != nil {
		return jsonFormatOutput{}, err
	}
	var buf bytes.Buffer
	if in.SortKeys {
		// encoding/json writes map keys sorted; numbers stay as written
		// because they were decoded as json.Number.
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", strings.Repeat(" ", indent))
		if err := enc.Encode(v); err != nil {
			return jsonFormatOutput{}, fmt.Errorf("re-encoding the document: %w", err)
		}
		if indent == 0 {
			compact := bytes.Buffer{}
			if err := json.Compact(&compact, buf.Bytes()); err != nil {
				return jsonFormatOutput{}, fmt.Errorf("compacting the document: %w", err)
			}
			buf = compact
		}
	} else {
		// Indent and Compact keep key order and every token as written.
		var err error
		if indent == 0 {
			err = json.Compact(&buf, []byte(in.Document))
		} else {
			err = json.Indent(&buf, bytes.TrimSpace([]byte(in.Document)), "", strings.Repeat(" ", indent))
		}
		if err != nil {
			return jsonFormatOutput{}, fmt.Errorf("formatting the document: %w", err)
		}
	}
	s := strings.TrimRight(buf.String(), "\n")
	return jsonFormatOutput{Result: s, Bytes: len(s)}, nil
}

type jsonQueryInput struct {
	Document string `json:"document" jsonschema:"the JSON document, as text"`
	Path     string `json:"path" jsonschema:"where to look: keys joined by dots and array indexes in brackets, e.g. user.emails[0]; [-1] is the last element, [*] or .* every element or value, [\"a.b\"] a key with odd characters; empty or $ is the whole document"`
}

type jsonQueryOutput struct {
	Path    string `json:"path" jsonschema:"the path as given"`
	Value   any    `json:"value" jsonschema:"the value found; with a wildcard, an array of every value found"`
	Type    string `json:"type" jsonschema:"the JSON type of value"`
	Matches int    `json:"matches" jsonschema:"how many values the path selected (1 without a wildcard)"`
}

// pathStep is one step of a query path: a key, an index or a wildcard.
type pathStep struct {
	key      string
	index    int
	isIndex  bool
	wildcard bool
}

func (s pathStep) String() string {
	switch {
	case s.wildcard:
		return "[*]"
	case s.isIndex:
		return fmt.Sprintf("[%d]", s.index)
	}
	return joinPath("", s.key)
}

func parsePath(p string) ([]pathStep, error) {
	s := strings.TrimSpace(p)
	s = strings.TrimPrefix(s, "$")
	var steps []pathStep
	for i := 0; i < len(s); {
		var step pathStep
		var err error
		switch s[i] {
		case '.':
			step, i, err = dotStep(p, s, i+1)
		case '[':
			step, i, err = bracketStep(p, s, i)
		default:
			if i != 0 {
				return nil, fmt.Errorf("path %q: expected . or [ at position %d", p, i+1)
			}
			s = "." + s // a leading key needs no dot
			continue
		}
		if err != nil {
			return nil, err
		}
		steps = append(steps, step)
	}
	return steps, nil
}

// dotStep reads the key or * that starts at s[i], just after a dot, and
// returns where the next step starts. p is the whole path, for errors.
func dotStep(p, s string, i int) (pathStep, int, error) {
	if i < len(s) && s[i] == '*' {
		return pathStep{wildcard: true}, i + 1, nil
	}
	j := i
	for j < len(s) && s[j] != '.' && s[j] != '[' {
		j++
	}
	if j == i {
		return pathStep{}, 0, fmt.Errorf("path %q has an empty key at position %d: remove the extra dot", p, i+1)
	}
	return pathStep{key: s[i:j]}, j, nil
}

// bracketStep reads the [0], [*] or ["key"] that starts at s[i] and returns
// where the next step starts. p is the whole path, for errors.
func bracketStep(p, s string, i int) (pathStep, int, error) {
	if i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\'') {
		return quotedKeyStep(p, s, i)
	}
	end := strings.IndexByte(s[i:], ']')
	if end < 0 {
		return pathStep{}, 0, fmt.Errorf("path %q has a [ without ]: close it, e.g. items[0]", p)
	}
	next := i + end + 1
	inner := strings.TrimSpace(s[i+1 : i+end])
	if inner == "*" {
		return pathStep{wildcard: true}, next, nil
	}
	n, err := strconv.Atoi(inner)
	if err != nil {
		return pathStep{}, 0, fmt.Errorf("path %q has [%s], which is neither an index nor a quoted key: write [0], [-1], [*] or [\"key\"]", p, inner)
	}
	return pathStep{index: n, isIndex: true}, next, nil
}

// quotedKeyStep reads a ["key"] or ['key'] that starts at s[i]. A quoted
// key may contain ] and dots, so it ends at its closing quote.
func quotedKeyStep(p, s string, i int) (pathStep, int, error) {
	q := s[i+1]
	closing := strings.IndexByte(s[i+2:], q)
	if closing < 0 || i+2+closing+1 >= len(s) || s[i+2+closing+1] != ']' {
		return pathStep{}, 0, fmt.Errorf("path %q has an unterminated quoted key: write [\"key\"]", p)
	}
	raw := s[i+1 : i+2+closing+1]
	key := raw[1 : len(raw)-1]
	if q == '"' {
		if uq, err := strconv.Unquote(raw); err == nil {
			key = uq
		}
	}
	return pathStep{key: key}, i + 2 + closing + 2, nil
}

func jsonQuery(_ context.Context, in jsonQueryInput) (jsonQueryOutput, error) {
	doc, err := decodeJSON(in.Document, "document")
	if err != nil {
		return jsonQueryOutput{}, err
	}
	steps, err := parsePath(in.Path)
	if err != nil {
		return jsonQueryOutput{}, err
	}
	wild := slices.ContainsFunc(steps, func(s pathStep) bool { return s.wildcard })
	found, err := walkPath(doc, steps, "")
	if err != nil {
		return jsonQueryOutput{}, err
	}
	out := jsonQueryOutput{Path: in.Path, Matches: len(found)}
	if wild {
		out.Value, out.Type = found, "array"
		if found == nil {
			out.Value = []any{}
		}
	} else {
		out.Value, out.Type = found[0], jsonType(found[0])
	}
	return out, nil
}

// walkPath follows steps from v. Without wildcards it returns exactly one
// value or an error saying where the path broke; under a wildcard, elements
// that lack the rest of the path are skipped.
func walkPath(v any, steps []pathStep, at string) ([]any, error) {
	if len(steps) == 0 {
		return []any{v}, nil
	}
	st, rest := steps[0], steps[1:]
	switch {
	case st.wildcard:
		var out []any
		switch c := v.(type) {
		case []any:
			for i, e := range c {
				if r, err := walkPath(e, rest, fmt.Sprintf("%s[%d]", at, i)); err == nil {
					out = append(out, r...)
				}
			}
		case map[string]any:
			keys := make([]string, 0, len(c))
			for k := range c {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				if r, err := walkPath(c[k], rest, joinPath(at, k)); err == nil {
					out = append(out, r...)
				}
			}
		default:
			return nil, fmt.Errorf("%s is a %s, so [*] has nothing to go through", displayPath(at), jsonType(v))
		}
		return out, nil
	case st.isIndex:
		arr, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("%s is a %s, not an array, so it has no index [%d]", displayPath(at), jsonType(v), st.index)
		}
		i := st.index
		if i < 0 {
			i += len(arr)
		}
		if i < 0 || i >= len(arr) {
			return nil, fmt.Errorf("index [%d] is out of range at %s, which has %d elements (valid: 0 to %d, or -1 for the last)", st.index, displayPath(at), len(arr), len(arr)-1)
		}
		return walkPath(arr[i], rest, fmt.Sprintf("%s[%d]", at, i))
	default:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s is a %s, not an object, so it has no key %q", displayPath(at), jsonType(v), st.key)
		}
		e, ok := obj[st.key]
		if !ok {
			keys := make([]string, 0, len(obj))
			for k := range obj {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			if len(keys) > 20 {
				keys = append(keys[:20], "…")
			}
			return nil, fmt.Errorf("key %q is not in %s; its keys are: %s", st.key, displayPath(at), strings.Join(keys, ", "))
		}
		return walkPath(e, rest, joinPath(at, st.key))
	}
}

type jsonDiffInput struct {
	Before string `json:"before" jsonschema:"the original JSON document, as text"`
	After  string `json:"after" jsonschema:"the changed JSON document, as text"`
}

type jsonDifference struct {
	Path   string `json:"path" jsonschema:"where the difference is, e.g. items[2].price ($ for the whole document)"`
	Change string `json:"change" jsonschema:"added, removed or changed"`
	Before *any   `json:"before,omitempty" jsonschema:"the old value (absent for added)"`
	After  *any   `json:"after,omitempty" jsonschema:"the new value (absent for removed)"`
}

type jsonDiffOutput struct {
	Equal       bool             `json:"equal" jsonschema:"true when the documents hold the same data"`
	Count       int              `json:"count" jsonschema:"how many differences there are"`
	Differences []jsonDifference `json:"differences" jsonschema:"the differences in document order, at most 500"`
	Truncated   bool             `json:"truncated" jsonschema:"true when there were more than 500 differences"`
}

const maxJSONDifferences = 500

func jsonDiff(_ context.Context, in jsonDiffInput) (jsonDiffOutput, error) {
	a, err := decodeJSON(in.Before, "before")
	if err != nil {
		return jsonDiffOutput{}, err
	}
	b, err := decodeJSON(in.After, "after")
	if err != nil {
		return jsonDiffOutput{}, err
	}
	out := jsonDiffOutput{Differences: []jsonDifference{}}
	record := func(d jsonDifference) {
		out.Count++
		if len(out.Differences) < maxJSONDifferences {
			d.Path = displayPath(d.Path)
			out.Differences = append(out.Differences, d)
		} else {
			out.Truncated = true
		}
	}
	diffValues(a, b, "", record)
	out.Equal = out.Count == 0
	return out, nil
}

func diffValues(a, b any, path string, record func(jsonDifference)) {
	switch av := a.(type) {
	case map[string]any:
		if bv, ok := b.(map[string]any); ok {
			diffObjects(av, bv, path, record)
			return
		}
	case []any:
		if bv, ok := b.([]any); ok {
			diffArrays(av, bv, path, record)
			return
		}
	case json.Number:
		if sameNumber(av, b) {
			return
		}
	default:
		if a == b {
			return
		}
	}
	record(jsonDifference{Path: path, Change: "changed", Before: &a, After: &b})
}

// diffObjects records the keys only one side has and compares the rest,
// in key order so that the differences come out the same every time.
func diffObjects(av, bv map[string]any, path string, record func(jsonDifference)) {
	keys := make([]string, 0, len(av)+len(bv))
	for k := range av {
		keys = append(keys, k)
	}
	for k := range bv {
		if _, ok := av[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		x, inA := av[k]
		y, inB := bv[k]
		p := joinPath(path, k)
		switch {
		case !inB:
			record(jsonDifference{Path: p, Change: "removed", Before: &x})
		case !inA:
			record(jsonDifference{Path: p, Change: "added", After: &y})
		default:
			diffValues(x, y, p, record)
		}
	}
}

// diffArrays compares the arrays element by element; the longer one's
// tail is added or removed.
func diffArrays(av, bv []any, path string, record func(jsonDifference)) {
	for i := 0; i < max(len(av), len(bv)); i++ {
		p := fmt.Sprintf("%s[%d]", path, i)
		switch {
		case i >= len(bv):
			record(jsonDifference{Path: p, Change: "removed", Before: &av[i]})
		case i >= len(av):
			record(jsonDifference{Path: p, Change: "added", After: &bv[i]})
		default:
			diffValues(av[i], bv[i], p, record)
		}
	}
}

// sameNumber reports whether b is the number a: 1, 1.0 and 1e0 are the
// same number.
func sameNumber(a json.Number, b any) bool {
	bn, ok := b.(json.Number)
	if !ok {
		return false
	}
	if a == bn {
		return true
	}
	x, errX := a.Float64()
	y, errY := bn.Float64()
	return errX == nil && errY == nil && x == y
}
