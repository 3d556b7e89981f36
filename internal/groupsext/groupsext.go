// Package groupsext holds the wire shapes of the MCP groups extension
// (io.modelcontextprotocol/groups, "Progressive Disclosure via Groups", a
// draft of the extensions track) and the mapping from toolfold's group names
// to the extension's name rule.
//
// The extension lets a client discover a server's tools a group at a time:
// groups/list names the top-level groups, groups/get returns one group's
// instructions and complete tool definitions (and its child groups), and the
// scoped tools stay out of tools/list while remaining callable. A client
// declares support per request in
// _meta["io.modelcontextprotocol/clientCapabilities"].extensions (or, on a
// 2025-11-25 session, in the capabilities of its initialize request).
//
// Group names on the wire are 1–64 characters of lowercase letters, digits
// and single hyphens. toolfold's names allow dots, underscores, capitals and
// any length, so Names maps them deterministically and without collisions;
// `toolfold groups` shows the mapping.
package groupsext

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The extension's identifiers.
const (
	// ID names the extension in capabilities.extensions. The server's
	// settings object there may hold {"listChanged": true}.
	ID = "io.modelcontextprotocol/groups"
	// MethodList lists the top-level groups.
	MethodList = "groups/list"
	// MethodGet fetches one group.
	MethodGet = "groups/get"
	// NotificationListChanged tells a client the top-level list changed.
	NotificationListChanged = "notifications/groups/list_changed"
	// CodeNotFound is the error of groups/get for an unknown name (the code
	// resources/read uses for an unknown URI).
	CodeNotFound = -32002
	// MetaKeyClientCapabilities is where a 2026-07-28 request declares the
	// client's capabilities (the Go SDK's mcp.MetaKeyClientCapabilities).
	MetaKeyClientCapabilities = mcp.MetaKeyClientCapabilities
)

// Group is one entry of groups/list or of a parent's contents.groups.
type Group struct {
	Name        string         `json:"name"`
	Title       string         `json:"title,omitempty"`
	Description string         `json:"description"`
	Meta        map[string]any `json:"_meta,omitempty"`
}

// ListParams are the parameters of groups/list.
type ListParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

// ListResult is the answer to groups/list.
type ListResult struct {
	mcp.ResultBase
	Groups     []Group `json:"groups"`
	NextCursor string  `json:"nextCursor,omitempty"`
}

// GetParams are the parameters of groups/get.
type GetParams struct {
	mcp.ParamsBase
	Name string `json:"name"`
}

// GetResult is the answer to groups/get: a group's instructions and the
// complete definitions of what it scopes.
type GetResult struct {
	mcp.ResultBase
	Instructions string    `json:"instructions,omitempty"`
	Contents     *Contents `json:"contents,omitempty"`
}

// Contents are the primitives a group scopes. Tools are complete wire
// definitions, callable by tools/call; Groups are the child groups, each
// fetched with its own groups/get.
type Contents struct {
	Tools     []*mcp.Tool     `json:"tools,omitempty"`
	Prompts   []*mcp.Prompt   `json:"prompts,omitempty"`
	Resources []*mcp.Resource `json:"resources,omitempty"`
	Groups    []Group         `json:"groups,omitempty"`
}

// Declared reports whether a request's _meta declares the extension in
// its client capabilities. meta is the params' _meta as the SDK decodes it.
func Declared(meta map[string]any) bool {
	caps, ok := meta[MetaKeyClientCapabilities]
	if !ok || caps == nil {
		return false
	}
	var c struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	switch v := caps.(type) {
	case map[string]any:
		ext, _ := v["extensions"].(map[string]any)
		_, ok := ext[ID]
		return ok
	default:
		b, err := json.Marshal(v)
		if err != nil || json.Unmarshal(b, &c) != nil {
			return false
		}
		_, ok := c.Extensions[ID]
		return ok
	}
}

// DeclaredIn reports whether client capabilities (from initialize, or
// decoded from a request) declare the extension.
func DeclaredIn(caps *mcp.ClientCapabilities) bool {
	if caps == nil {
		return false
	}
	_, ok := caps.Extensions[ID]
	return ok
}

// MaxName is the longest group name the extension allows.
const MaxName = 64

var validName = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// Valid reports whether name follows the extension's name rule.
func Valid(name string) bool { return len(name) <= MaxName && validName.MatchString(name) }

// hashLen is the length of the suffix that keeps shortened or colliding
// names apart: 8 hex digits of SHA-256 over the original name.
const hashLen = 8

// Names maps toolfold group names to extension names. The result depends
// only on the set of names given, never on their order:
//
//   - a name is lowercased, and every run of other characters than a-z and
//     0-9 (dots of nested groups, underscores, spaces) becomes one hyphen,
//     trimmed at both ends ("files.search" → "files-search");
//   - a name that is already valid keeps itself;
//   - a name that comes out longer than 64 characters, or the same as
//     another's, is cut to 55 characters and ends in "-" and 8 hex digits of
//     the SHA-256 of the original name, so the same config always yields the
//     same names; a valid original name wins over mapped ones;
//   - a name with no letters or digits at all becomes "group-<hash>".
//
// It returns an error only if two names still collide, which takes a hash
// collision.
func Names(names []string) (map[string]string, error) {
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	base := make(map[string]string, len(sorted))
	count := map[string]int{}
	for _, n := range sorted {
		b := sanitize(n)
		base[n] = b
		count[b]++
	}
	out := make(map[string]string, len(sorted))
	owner := map[string]string{}
	for _, n := range sorted {
		b := base[n]
		name := b
		// The valid original keeps the plain name even when others map to it.
		if b == "" || len(b) > MaxName || (count[b] > 1 && n != b) {
			name = hashed(b, n)
		}
		if prev, taken := owner[name]; taken {
			return nil, fmt.Errorf("the groups %q and %q both map to the extension name %q: rename one", prev, n, name)
		}
		owner[name] = n
		out[n] = name
	}
	return out, nil
}

func sanitize(n string) string {
	var b strings.Builder
	hyphen := false
	for _, r := range strings.ToLower(n) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if hyphen && b.Len() > 0 {
				b.WriteByte('-')
			}
			hyphen = false
			b.WriteRune(r)
			continue
		}
		hyphen = true
	}
	return b.String()
}

func hashed(base, original string) string {
	sum := sha256.Sum256([]byte(original))
	suffix := hex.EncodeToString(sum[:])[:hashLen]
	if base == "" {
		return "group-" + suffix
	}
	keep := MaxName - hashLen - 1
	if len(base) > keep {
		base = strings.TrimRight(base[:keep], "-")
	}
	return base + "-" + suffix
}
