package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// kind is the JSON-level type of a parsed value. JSON and YAML both parse into the
// same tree so one decoder serves both formats with the same messages.
type kind int

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindList
	kindObject
)

// describe names a kind for "got ..." in type errors.
func (k kind) describe() string {
	switch k {
	case kindNull:
		return "null"
	case kindBool:
		return "a boolean"
	case kindNumber:
		return "a number"
	case kindString:
		return "a string"
	case kindList:
		return "a list"
	}
	return "an object"
}

// node is one parsed value with the line it starts on.
type node struct {
	kind    kind
	line    int
	text    string  // scalar text: the string, the number literal, "true"/"false"
	items   []*node // list elements
	entries []entry // object entries, in file order
}

// entry is one key of an object, with the key's own line.
type entry struct {
	key     string
	keyLine int
	value   *node
}

// maxNodes bounds the size of a parsed document, counting YAML aliases as the
// values they stand for, so a small hostile file (a "billion laughs") cannot make
// the loader walk billions of values. Real configs hold hundreds.
const maxNodes = 100_000

// syntaxError is a parse failure at a line.
type syntaxError struct {
	line int
	msg  string
}

func (e *syntaxError) Error() string { return e.msg }

// isJSON decides the format: by extension, else by the first significant byte.
func isJSON(filename string, data []byte) bool {
	lower := strings.ToLower(filename)
	switch {
	case strings.HasSuffix(lower, ".json"), strings.HasSuffix(lower, ".jsonc"):
		return true
	case strings.HasSuffix(lower, ".yaml"), strings.HasSuffix(lower, ".yml"):
		return false
	}
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(data, utf8BOM), " \t\r\n")
	return len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '/')
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// parseJSONC parses JSON with // and /* */ comments and trailing commas. Comments
// and trailing commas are blanked out in place (newlines kept), so the byte offsets
// encoding/json reports still map to the user's lines.
func parseJSONC(data []byte) (*node, error) {
	if bytes.HasPrefix(data, utf8BOM) {
		data = append([]byte("   "), data[3:]...)
	}
	clean, err := blankCommentsAndTrailingCommas(data)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(clean)) == 0 {
		return &node{kind: kindNull, line: 1}, nil
	}
	p := &jsonParser{dec: json.NewDecoder(bytes.NewReader(clean)), data: clean}
	p.dec.UseNumber()
	root, err := p.value()
	if err != nil {
		return nil, p.wrap(err)
	}
	if _, err := p.dec.Token(); err != io.EOF {
		return nil, &syntaxError{line: lineAt(clean, int(p.dec.InputOffset())), msg: "unexpected text after the end of the top-level object; remove it"}
	}
	return root, nil
}

type jsonParser struct {
	dec   *json.Decoder
	data  []byte
	count int
}

// lineAt is the 1-based line holding byte offset off.
func lineAt(data []byte, off int) int {
	off = min(max(off, 0), len(data))
	return bytes.Count(data[:off], []byte{'\n'}) + 1
}

// tokenLine is the line of the token just read: the offset points right after it,
// and no JSON token spans lines, so its last byte's line is its line.
func (p *jsonParser) tokenLine() int { return lineAt(p.data, int(p.dec.InputOffset())-1) }

func (p *jsonParser) wrap(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &syntaxError{line: lineAt(p.data, int(se.Offset)), msg: "JSON syntax: " + se.Error() + jsonHint(se.Error())}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return &syntaxError{line: lineAt(p.data, len(p.data)), msg: "the file ends in the middle of a value; close every { and ["}
	}
	var syn *syntaxError
	if errors.As(err, &syn) {
		return syn
	}
	return &syntaxError{line: lineAt(p.data, int(p.dec.InputOffset())), msg: "JSON syntax: " + err.Error()}
}

// jsonHint names the likely slip behind encoding/json's terse messages.
func jsonHint(msg string) string {
	switch {
	case strings.Contains(msg, "after object key:value pair"):
		return "; a comma is probably missing after the previous entry"
	case strings.Contains(msg, "after array element"):
		return "; a comma is probably missing after the previous list item"
	case strings.Contains(msg, "looking for beginning of object key string"):
		return "; keys must be in double quotes"
	case strings.Contains(msg, "looking for beginning of value"):
		return "; strings must be in double quotes"
	}
	return ""
}

func (p *jsonParser) value() (*node, error) {
	tok, err := p.dec.Token()
	if err != nil {
		return nil, err
	}
	return p.fromToken(tok)
}

func (p *jsonParser) fromToken(tok json.Token) (*node, error) {
	p.count++
	if p.count > maxNodes {
		return nil, &syntaxError{line: p.tokenLine(), msg: "the document is too large"}
	}
	n := &node{line: p.tokenLine()}
	switch t := tok.(type) {
	case nil:
		n.kind = kindNull
	case bool:
		n.kind, n.text = kindBool, fmt.Sprint(t)
	case json.Number:
		n.kind, n.text = kindNumber, t.String()
	case string:
		n.kind, n.text = kindString, t
	case json.Delim:
		switch t {
		case '[':
			n.kind = kindList
			for p.dec.More() {
				item, err := p.value()
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, item)
			}
		case '{':
			n.kind = kindObject
			seen := map[string]int{}
			for p.dec.More() {
				keyTok, err := p.dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := keyTok.(string)
				keyLine := p.tokenLine()
				if first, dup := seen[key]; dup {
					return nil, &syntaxError{line: keyLine, msg: fmt.Sprintf("key %q appears twice in the same object (first on line %d); keep one", key, first)}
				}
				seen[key] = keyLine
				val, err := p.value()
				if err != nil {
					return nil, err
				}
				n.entries = append(n.entries, entry{key: key, keyLine: keyLine, value: val})
			}
		}
		if _, err := p.dec.Token(); err != nil { // the closing ] or }
			return nil, err
		}
	}
	return n, nil
}

// blankCommentsAndTrailingCommas turns jsonc into JSON of the same length: comment
// bytes become spaces (newlines stay), and a comma followed only by whitespace
// before } or ] becomes a space.
func blankCommentsAndTrailingCommas(in []byte) ([]byte, error) {
	out := bytes.Clone(in)
	lastComma := -1 // offset of a comma not yet followed by a value
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case c == '"':
			i, lastComma = stringEnd(out, i), -1
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			i = blankLineComment(out, i)
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			start := i
			var closed bool
			if i, closed = blankBlockComment(out, i); !closed {
				return nil, &syntaxError{line: lineAt(in, start), msg: "a /* comment is never closed; add */"}
			}
		case c == ',':
			lastComma = i
		case c == '}' || c == ']':
			if lastComma >= 0 {
				out[lastComma] = ' '
			}
			lastComma = -1
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
		default:
			lastComma = -1
		}
	}
	return out, nil
}

// stringEnd returns the offset of the quote that closes the string opening
// at b[open], or len(b) when it is never closed.
func stringEnd(b []byte, open int) int {
	escaped := false
	for i := open + 1; i < len(b); i++ {
		switch {
		case escaped:
			escaped = false
		case b[i] == '\\':
			escaped = true
		case b[i] == '"':
			return i
		}
	}
	return len(b)
}

// blankLineComment blanks the // comment starting at b[start] and returns
// the offset of the newline that ends it (or len(b)).
func blankLineComment(b []byte, start int) int {
	i := start
	for i < len(b) && b[i] != '\n' {
		b[i] = ' '
		i++
	}
	return i
}

// blankBlockComment blanks the /* comment starting at b[start], keeping its
// newlines so that line numbers still hold, and returns the offset of its
// closing slash; closed is false when the comment never ends.
func blankBlockComment(b []byte, start int) (end int, closed bool) {
	b[start], b[start+1] = ' ', ' '
	for i := start + 2; i < len(b); i++ {
		if b[i] == '*' && i+1 < len(b) && b[i+1] == '/' {
			b[i], b[i+1] = ' ', ' '
			return i + 1, true
		}
		if b[i] != '\n' {
			b[i] = ' '
		}
	}
	return len(b), false
}

// parseYAML parses the first YAML document into the shared tree, expanding aliases
// within the node budget.
func parseYAML(data []byte) (*node, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return &node{kind: kindNull, line: 1}, nil
		}
		se := yamlSyntaxError(err)
		if line := yamlErrorLine(data, err); line > 0 {
			se.line = line
		}
		return nil, se
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &syntaxError{line: extra.Line, msg: "the file holds more than one YAML document; keep one (remove the extra ---)"}
	}
	conv := &yamlConverter{done: map[*yaml.Node]converted{}}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return &node{kind: kindNull, line: 1}, nil
		}
		root = root.Content[0]
	}
	return conv.convert(root, 0)
}

// maxLocateLines bounds yamlErrorLine's work (it parses every prefix).
const maxLocateLines = 2000

// yamlErrorLine finds the line a YAML syntax error is on. The YAML parser
// often reports the line where the enclosing block began (a key indented
// one space too far on line 5 is "line 1: did not find expected key"; a
// tab on line 4 is "line 3"), which sends the user to the wrong place. The
// first line whose prefix of the file already fails with the same message
// is where the mistake is. It returns 0 when that cannot be found.
func yamlErrorLine(data []byte, full error) int {
	want := yamlMessage(full)
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines) > maxLocateLines {
		return 0
	}
	end := 0
	for i, l := range lines {
		end += len(l)
		var doc yaml.Node
		err := yaml.Unmarshal(data[:end], &doc)
		if err != nil && yamlMessage(err) == want {
			return i + 1
		}
	}
	return 0
}

// yamlMessage is a YAML error without its "yaml: line N: " prefix.
func yamlMessage(err error) string {
	return yamlSyntaxError(err).msg
}

// yamlSyntaxError turns "yaml: line 3: did not find expected key" into a located error.
func yamlSyntaxError(err error) *syntaxError {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, after, ok := strings.Cut(rest, ": "); ok {
			if _, scanErr := fmt.Sscanf(num, "%d", &line); scanErr == nil {
				msg = after
			}
		}
	}
	return &syntaxError{line: line, msg: "YAML syntax: " + msg}
}

// yamlConverter converts each yaml.Node once (an alias shares the converted
// target) while counting the expanded size against maxNodes.
type yamlConverter struct {
	count int
	done  map[*yaml.Node]converted
}

type converted struct {
	node *node
	size int // values in the subtree with aliases expanded
}

// maxYAMLDepth stops alias chains that refer back into themselves.
const maxYAMLDepth = 200

func (c *yamlConverter) convert(y *yaml.Node, depth int) (*node, error) {
	n, _, err := c.convertSized(y, depth)
	return n, err
}

func (c *yamlConverter) convertSized(y *yaml.Node, depth int) (*node, int, error) {
	if depth > maxYAMLDepth {
		return nil, 0, &syntaxError{line: y.Line, msg: "values are nested too deeply"}
	}
	if y.Kind == yaml.AliasNode {
		return c.alias(y, depth)
	}
	if done, ok := c.done[y]; ok {
		return done.node, done.size, nil
	}
	if err := c.add(1, y.Line); err != nil {
		return nil, 0, err
	}
	n := &node{line: y.Line}
	children := 0
	var err error
	switch y.Kind {
	case yaml.SequenceNode:
		n.kind = kindList
		children, err = c.sequence(n, y, depth)
	case yaml.MappingNode:
		n.kind = kindObject
		children, err = c.mapping(n, y, depth)
	case yaml.ScalarNode:
		n.kind, n.text = scalarKind(y)
	default:
		n.kind = kindNull
	}
	if err != nil {
		return nil, 0, err
	}
	size := 1 + children
	c.done[y] = converted{node: n, size: size}
	return n, size, nil
}

// alias converts the anchored value an alias refers to, and counts its
// whole size again, since every alias expands it once more.
func (c *yamlConverter) alias(y *yaml.Node, depth int) (*node, int, error) {
	if y.Alias == nil {
		return nil, 0, &syntaxError{line: y.Line, msg: "an alias refers to no anchor"}
	}
	target, size, err := c.convertSized(y.Alias, depth+1)
	if err != nil {
		return nil, 0, err
	}
	if err := c.add(size, y.Line); err != nil {
		return nil, 0, err
	}
	clone := *target
	clone.line = y.Line
	return &clone, size, nil
}

// sequence converts the items of y into n and returns their size.
func (c *yamlConverter) sequence(n *node, y *yaml.Node, depth int) (int, error) {
	size := 0
	for _, item := range y.Content {
		v, s, err := c.convertSized(item, depth+1)
		if err != nil {
			return 0, err
		}
		n.items = append(n.items, v)
		size += s
	}
	return size, nil
}

// mapping converts the entries of y into n and returns their size. Keys
// must be plain, unique names; merge keys are refused.
func (c *yamlConverter) mapping(n *node, y *yaml.Node, depth int) (int, error) {
	size := 0
	seen := map[string]int{}
	for i := 0; i+1 < len(y.Content); i += 2 {
		k, v := y.Content[i], y.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return 0, &syntaxError{line: k.Line, msg: "a key must be a plain name, not a list or an object"}
		}
		if k.Value == "<<" && k.Tag == "!!merge" {
			return 0, &syntaxError{line: k.Line, msg: "YAML merge keys (<<) are not supported; write the keys out"}
		}
		if first, dup := seen[k.Value]; dup {
			return 0, &syntaxError{line: k.Line, msg: fmt.Sprintf("key %q appears twice in the same mapping (first on line %d); keep one", k.Value, first)}
		}
		seen[k.Value] = k.Line
		val, s, err := c.convertSized(v, depth+1)
		if err != nil {
			return 0, err
		}
		n.entries = append(n.entries, entry{key: k.Value, keyLine: k.Line, value: val})
		size += s
	}
	return size, nil
}

// scalarKind maps a YAML scalar's resolved tag to the tree's kinds; a
// boolean's text is lower-cased so that True and TRUE read as true.
func scalarKind(y *yaml.Node) (kind, string) {
	switch y.ShortTag() {
	case "!!null":
		return kindNull, y.Value
	case "!!bool":
		return kindBool, strings.ToLower(y.Value)
	case "!!int", "!!float":
		return kindNumber, y.Value
	default:
		return kindString, y.Value
	}
}

// add counts values against maxNodes.
func (c *yamlConverter) add(values, line int) error {
	c.count += values
	if c.count > maxNodes {
		return &syntaxError{line: line, msg: fmt.Sprintf("the document is too large (more than %d values once aliases are expanded); write it out plainly", maxNodes)}
	}
	return nil
}
