package meta

import (
	"slices"
	"strings"
	"time"

	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/view"
)

// SourceUnavailable is the reason of an enable_tools error for a group
// whose tools are missing, wholly or in part, because their MCP server
// failed to start: enabling it succeeded, but without those tools.
const SourceUnavailable view.Reason = "source_unavailable"

// unavailableErrors explains, for each group named that takes tools of a
// source that failed to start, that those tools are missing, why, and
// when toolfold tries again: an answer of success with no tools would
// leave the agent guessing.
func unavailableErrors(cat *catalog.Catalog, names []string, now time.Time) []view.GroupError {
	var out []view.GroupError
	for _, name := range names {
		g, ok := cat.Group(catalog.GroupID(name))
		if !ok {
			continue
		}
		sources := cat.GroupUnavailable(g.ID)
		if len(sources) == 0 {
			continue
		}
		notes := make([]string, len(sources))
		for i, src := range sources {
			notes[i] = cat.UnavailableNote(src, now)
		}
		out = append(out, view.GroupError{Group: name, Reason: SourceUnavailable,
			Message: "the group's tools from " + strings.Join(quoteAll(sources), ", ") + " are missing: " + strings.Join(notes, "; ") + "."})
	}
	return out
}

// unavailableNotes words every unavailable source's note, sorted by
// source; only those a group's rules take when group is set.
func unavailableNotes(cat *catalog.Catalog, group string, now time.Time) []string {
	var sources []string
	if group != "" {
		sources = cat.GroupUnavailable(catalog.GroupID(group))
	} else {
		for src := range cat.Unavailable() {
			sources = append(sources, src)
		}
		slices.Sort(sources)
	}
	var out []string
	for _, src := range sources {
		out = append(out, cat.UnavailableNote(src, now))
	}
	return out
}
