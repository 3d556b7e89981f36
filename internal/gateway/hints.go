package gateway

import (
	"maps"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/expose"
)

// Hints for clients that search their own tool list (Claude Code and the
// like, which auto mode gives the flat list): they defer tools behind a
// search of their own and read two _meta keys of each tool. The keys and
// their shapes are the ones those clients read: a short string of words
// the search indexes besides the name and description, and true for a tool
// that must never be deferred.
const (
	metaSearchHint = "anthropic/searchHint"
	metaAlwaysLoad = "anthropic/alwaysLoad"
	// maxSearchHint bounds a hint: a few words, not a second description.
	maxSearchHint = 120
)

// withSearchHints returns t with a search hint made from the wire's group
// path (where the tool sits, in words) and the first sentence of its
// description, and alwaysLoad for a tool in no group or in a group that is
// enabled by default: what the config says every client should have at
// hand. t is shared and never modified.
func withSearchHints(t *mcp.Tool, w *expose.Wire) *mcp.Tool {
	if w.Target == nil {
		return t
	}
	hint := searchHint(w.Target, t.Description)
	always := alwaysLoad(w.Target)
	if hint == "" && !always {
		return t
	}
	c := *t
	c.Meta = maps.Clone(t.Meta)
	if c.Meta == nil {
		c.Meta = mcp.Meta{}
	}
	if hint != "" {
		c.Meta[metaSearchHint] = hint
	}
	if always {
		c.Meta[metaAlwaysLoad] = true
	}
	return &c
}

// searchHint is the group path of a tool's first group in words, then the
// first sentence of its description, cut to maxSearchHint at a word.
func searchHint(t *catalog.Tool, description string) string {
	var words []string
	if len(t.Groups) > 0 {
		for _, part := range strings.Split(string(t.Groups[0].ID), ".") {
			words = append(words, strings.NewReplacer("-", " ", "_", " ").Replace(part))
		}
	}
	first, _, _ := strings.Cut(strings.TrimSpace(description), ". ")
	first = strings.TrimSuffix(strings.TrimPrefix(first, "[READ-ONLY] "), ".")
	first = strings.TrimPrefix(first, "[DESTRUCTIVE] ")
	hint := strings.TrimSpace(strings.Join(words, " ") + ": " + first)
	hint = strings.TrimPrefix(strings.TrimSuffix(hint, ":"), ": ")
	if len(hint) <= maxSearchHint {
		return hint
	}
	cut := hint[:maxSearchHint]
	for !utf8.ValidString(cut) {
		cut = cut[:len(cut)-1]
	}
	if i := strings.LastIndexByte(cut, ' '); i > 0 {
		cut = cut[:i]
	}
	return cut
}

// alwaysLoad reports a tool in no group, or in a group (or under one)
// enabled by default.
func alwaysLoad(t *catalog.Tool) bool {
	if len(t.Groups) == 0 {
		return true
	}
	for _, g := range t.Groups {
		for at := g; at != nil; at = at.Parent {
			if at.Default == catalog.Enabled {
				return true
			}
		}
	}
	return false
}
