package autogroup

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
)

// listed is how many tool or group names a description spells out.
const listed = 8

// describe writes a derived group's one-line description: what it is
// about, then the tools (or child groups) it holds by the names a model
// will see, so the line alone tells a model whether to enable it.
func describe(n *Node, items []*item, topic []string) string {
	var head string
	switch n.Basis {
	case "access":
		if n.Name == "read" {
			head = "Tools that only read"
		} else {
			head = "Tools that change things"
		}
		if len(topic) > 0 {
			head += " (" + humanize(topic, items) + ")"
		}
	case "rest":
		head = "Other tools"
	case "description":
		about := humanize(strings.Split(n.Name, "_"), items)
		head = "Tools about " + about
		if len(topic) > 0 {
			head = capitalize(humanize(topic, items)) + ": tools about " + about
		}
	default:
		head = capitalize(humanize(topic, items))
	}
	var parts []string
	for _, c := range n.Children {
		parts = append(parts, c.Name)
	}
	short := shortNames(items)
	for _, id := range n.Tools {
		parts = append(parts, short[id])
	}
	if len(parts) > listed {
		parts = append(parts[:listed], "…")
	}
	return head + ": " + strings.Join(parts, ", ")
}

// shortNames maps each tool to its own name without the namespace the
// tools share ("TwilioApiV2010--CreateQueue" → "CreateQueue").
func shortNames(items []*item) map[string]string {
	prefix := ""
	for i, it := range items {
		if i == 0 {
			prefix = it.tool.Name
			continue
		}
		for !strings.HasPrefix(it.tool.Name, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	// Cut back to a separator so that no word is split ("kv_get", "kv_put"
	// share "kv_", never "kv_p").
	cut := strings.LastIndexFunc(prefix, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	prefix = prefix[:cut+1]
	out := make(map[string]string, len(items))
	for _, it := range items {
		name := strings.TrimPrefix(it.tool.Name, prefix)
		if name == "" || len(items) == 1 {
			name = it.tool.Name
		}
		out[it.tool.ID] = name
	}
	return out
}

// humanize joins words into a phrase, each spelled as the tools'
// descriptions spell it most ("R2", "SIP"), lower case otherwise.
func humanize(words []string, items []*item) string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = spelling(w, items)
	}
	return strings.Join(out, " ")
}

// spelling finds how the descriptions write a word: an all-capitals or
// mixed-case form that they use at least as often as the lower-case one.
func spelling(w string, items []*item) string {
	counts := map[string]int{}
	for _, it := range items {
		for _, field := range strings.FieldsFunc(it.tool.Description, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if strings.EqualFold(field, w) {
				counts[field]++
			}
		}
	}
	best, bestN := w, counts[w]
	forms := make([]string, 0, len(counts))
	for f := range counts {
		forms = append(forms, f)
	}
	slices.SortFunc(forms, func(a, b string) int { return cmp.Compare(a, b) })
	for _, f := range forms {
		// A capitalized first letter is only the start of a sentence.
		if f == capitalize(w) || f == w {
			continue
		}
		if counts[f] > bestN || (counts[f] == bestN && best == w && counts[f] > 0) {
			best, bestN = f, counts[f]
		}
	}
	return best
}

func capitalize(s string) string {
	for i, r := range s {
		return string(unicode.ToUpper(r)) + s[i+len(string(r)):]
	}
	return s
}
