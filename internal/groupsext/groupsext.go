// Package groupsext holds the wire shapes of the MCP grouping extension
// (io.modelcontextprotocol/grouping, the draft of the grouping interest
// group) and the mapping from toolfold's group names to names that also
// serve as skill names.
//
// In the draft, a server declares the extension under
// capabilities.extensions with {"listChanged": true}; groups/list
// (paginated) lists every group as {name, title?, description?, icons?,
// annotations?, _meta?}; a group names its parents, and a tool, prompt,
// resource or template names its groups, in
// _meta["io.modelcontextprotocol/groups"]; the client filters the ordinary
// lists by that membership itself; notifications/groups/list_changed says
// the groups changed. A client declares support in its capabilities: in
// initialize on 2025-11-25, per request in
// _meta["io.modelcontextprotocol/clientCapabilities"] on 2026-07-28.
//
// toolfold's names allow dots, underscores, capitals and any length; Names
// maps them deterministically and without collisions to 1–64 lowercase
// letters, digits and single hyphens, so that the same name is valid for a
// group and for the skill toolfold serves for it. `toolfold groups` shows
// the mapping.
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
	ID = "io.modelcontextprotocol/grouping"
	// MetaKey is the _meta key that lists the groups a primitive (or a
	// group) belongs to.
	MetaKey = "io.modelcontextprotocol/groups"
	// MethodList lists every group.
	MethodList = "groups/list"
	// NotificationListChanged tells a client the groups changed.
	NotificationListChanged = "notifications/groups/list_changed"
	// MetaKeyClientCapabilities is where a 2026-07-28 request declares the
	// client's capabilities (the Go SDK's mcp.MetaKeyClientCapabilities).
	MetaKeyClientCapabilities = mcp.MetaKeyClientCapabilities
)

// Group is one entry of groups/list.
type Group struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Icons       []mcp.Icon       `json:"icons,omitempty"`
	Annotations *mcp.Annotations `json:"annotations,omitempty"`
	Meta        map[string]any   `json:"_meta,omitempty"`
}

// Parents are the names of the groups that hold g, from its _meta.
func (g Group) Parents() []string { return MetaGroups(g.Meta) }

// MetaGroups reads the group names a _meta lists under MetaKey, however it
// was decoded; anything malformed lists none.
func MetaGroups(meta map[string]any) []string {
	switch v := meta[MetaKey].(type) {
	case []string:
		return v
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// ListParams are the parameters of groups/list.
type ListParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

// ListResult is the answer to groups/list. The caching hints are set on a
// 2026-07-28 answer, as on the other lists.
type ListResult struct {
	mcp.ResultBase
	ResultType string  `json:"resultType,omitempty"`
	Groups     []Group `json:"groups"`
	NextCursor string  `json:"nextCursor,omitempty"`
	TTLMs      *int    `json:"ttlMs,omitempty"`
	CacheScope string  `json:"cacheScope,omitempty"`
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

// MaxName is the longest name Names gives.
const MaxName = 64

var validName = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// Valid reports whether name is one Names keeps as it is.
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
