package trust

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Kind is what an item is. It is the first half of the item's key in the
// lock ("tool:send_email").
type Kind string

// The kinds of item a server may give the model.
const (
	KindTool         Kind = "tool"
	KindPrompt       Kind = "prompt"
	KindResource     Kind = "resource"
	KindTemplate     Kind = "template"
	KindInstructions Kind = "instructions"
	KindGroup        Kind = "group"
	KindSkill        Kind = "skill"
	KindHelp         Kind = "help"
)

// Item is one definition a server gave: its kind, its name within the server
// and its definition as canonical JSON.
type Item struct {
	Kind Kind
	Name string
	// Def is canonical JSON (see [Canonical]). It is nil in an item
	// remembered from an earlier start ([Remembered]), whose digest alone
	// is known.
	Def json.RawMessage
	// digest is Def's, computed once by the constructors: a start compares
	// and scans tens of thousands of items, each several times.
	digest string
}

// Key is the item's name in the lock and on the command line: "kind:name".
func (it Item) Key() string { return string(it.Kind) + ":" + it.Name }

// Digest is "sha256:" and the hex SHA-256 of the item's canonical JSON.
func (it Item) Digest() string {
	if it.digest != "" {
		return it.digest
	}
	return digest(it.Def)
}

// withDigest is it with its digest computed once.
func (it Item) withDigest() Item {
	it.digest = digest(it.Def)
	return it
}

func digest(canon []byte) string {
	sum := sha256.Sum256(canon)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Canonical returns v as canonical JSON: object keys sorted, no insignificant
// whitespace, numbers as the server wrote them. Two definitions that differ
// only in key order or spacing have the same canonical form.
func Canonical(v any) (json.RawMessage, error) {
	tree, err := jsonTree(v)
	if err != nil {
		return nil, err
	}
	return encodeTree(tree)
}

// jsonTree is v as encoding/json decodes JSON into any (numbers as
// json.Number, as the text wrote them). JSON text is decoded as it is,
// anything else encoded first.
func jsonTree(v any) (any, error) {
	raw, ok := v.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(v); err != nil {
			return nil, fmt.Errorf("trust: encode definition: %w", err)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, fmt.Errorf("trust: read definition: %w", err)
	}
	return tree, nil
}

// encodeTree writes a decoded tree canonically: encoding/json writes map
// keys sorted, which is the canonical order.
func encodeTree(tree any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(tree); err != nil {
		return nil, fmt.Errorf("trust: encode definition: %w", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// toolFields are the parts of a tool the model reads. _meta and icons are
// left out: the model never sees them, and servers stamp _meta per start.
var toolFields = []string{"name", "title", "description", "inputSchema", "outputSchema", "annotations"}

// ToolItem is the item of a tool. Its fields are taken as encoding the
// tool would give them (an empty title or description and a nil schema
// are absent), without encoding the whole tool first: a start judges every
// tool it reads, and this is most of that work.
func ToolItem(t *mcp.Tool) (Item, error) {
	tree := make(map[string]any, len(toolFields))
	tree["name"] = t.Name
	if t.Title != "" {
		tree["title"] = t.Title
	}
	if t.Description != "" {
		tree["description"] = t.Description
	}
	for field, v := range map[string]any{"inputSchema": t.InputSchema, "outputSchema": t.OutputSchema, "annotations": t.Annotations} {
		if v == nil || isJSONNull(v) || v == (*mcp.ToolAnnotations)(nil) {
			continue
		}
		sub, err := jsonTree(v)
		if err != nil {
			return Item{}, fmt.Errorf("trust: %s of tool %q: %w", field, t.Name, err)
		}
		tree[field] = sub
	}
	def, err := encodeTree(tree)
	if err != nil {
		return Item{}, fmt.Errorf("trust: encode %s %q: %w", KindTool, t.Name, err)
	}
	return Item{Kind: KindTool, Name: t.Name, Def: def}.withDigest(), nil
}

// isJSONNull reports whether v is JSON text that says null, which the
// encoding of a whole tool would leave out like a nil schema.
func isJSONNull(v any) bool {
	raw, ok := v.(json.RawMessage)
	return ok && (len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null")
}

// PromptItem is the item of a prompt (name, title, description, arguments).
func PromptItem(p *mcp.Prompt) (Item, error) {
	return pick(KindPrompt, p.Name, p, []string{"name", "title", "description", "arguments"})
}

// ResourceItem is the item of a resource, keyed by its URI.
func ResourceItem(r *mcp.Resource) (Item, error) {
	return pick(KindResource, r.URI, r, []string{"uri", "name", "title", "description", "mimeType"})
}

// TemplateItem is the item of a resource template, keyed by its URI template.
func TemplateItem(r *mcp.ResourceTemplate) (Item, error) {
	return pick(KindTemplate, r.URITemplate, r, []string{"uriTemplate", "name", "title", "description", "mimeType"})
}

// InstructionsItem is the item of a server's instructions.
func InstructionsItem(text string) (Item, error) {
	return ValueItem(KindInstructions, "instructions", map[string]string{"instructions": text})
}

// ValueItem is the item of any other definition (a group, a skill, a
// command's help): v whole, canonical.
func ValueItem(kind Kind, name string, v any) (Item, error) {
	c, err := Canonical(v)
	if err != nil {
		return Item{}, err
	}
	return Item{Kind: kind, Name: name, Def: c}.withDigest(), nil
}

func pick(kind Kind, name string, v any, fields []string) (Item, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return Item{}, fmt.Errorf("trust: encode %s %q: %w", kind, name, err)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(raw, &all); err != nil {
		return Item{}, fmt.Errorf("trust: read %s %q: %w", kind, name, err)
	}
	kept := make(map[string]json.RawMessage, len(fields))
	for _, f := range fields {
		if v, ok := all[f]; ok && string(v) != "null" {
			kept[f] = v
		}
	}
	return ValueItem(kind, name, kept)
}

// Changed names the top-level fields of two canonical definitions that
// differ ("description", "inputSchema"…), sorted. Either may be nil.
func Changed(old, cur json.RawMessage) []string {
	var a, b map[string]json.RawMessage
	_ = json.Unmarshal(old, &a)
	_ = json.Unmarshal(cur, &b)
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok || !bytes.Equal(v, w) {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// ParseKey splits "kind:name" into its halves. A bare name is a tool's.
func ParseKey(key string) (Kind, string) {
	if k, n, ok := strings.Cut(key, ":"); ok {
		switch Kind(k) {
		case KindTool, KindPrompt, KindResource, KindTemplate, KindInstructions, KindGroup, KindSkill, KindHelp:
			return Kind(k), n
		}
	}
	return KindTool, key
}
