package autogroup

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// nameBudget bounds the member names a derived group's description
// spells out; past it, the names left out are counted, never hidden
// behind an ellipsis.
const nameBudget = 320

// describe writes a derived group's one-line description: what it is
// about, then the groups inside it and the tools it holds by the names a
// model calls them by, so the line alone tells a model whether to enable
// it and what it will find.
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
		// What nothing else took, named by what its tools act on.
		head = "Other tools"
		if res, _ := coverage(items); len(res) > 0 {
			head += " (" + strings.Join(res[:min(len(res), 6)], ", ") + ")"
		}
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
		parts = append(parts, fmt.Sprintf("%s (%d tools)", c.Name, c.Size()))
	}
	own := append(make([]string, 0, len(n.Tools)), n.Tools...)
	if len(parts) > 0 && len(own) > 0 {
		return head + ": groups " + strings.Join(parts, ", ") + "; tools " + callableNames(own, nameBudget)
	}
	if len(parts) > 0 {
		return head + ": groups " + strings.Join(parts, ", ")
	}
	return head + ": " + callableNames(own, nameBudget)
}

// callableNames spells out tool names as they are called, within budget
// bytes: whole when they fit, else with their shared start written once
// ("twilio__Api--{CreateCall, FetchCall}"), then as many as fit and the
// count of the rest.
func callableNames(ids []string, budget int) string {
	if whole := strings.Join(ids, ", "); len(whole) <= budget || len(ids) == 1 {
		return whole
	}
	prefix := commonPrefix(ids)
	rest := make([]string, len(ids))
	for i, id := range ids {
		rest[i] = strings.TrimPrefix(id, prefix)
	}
	var b strings.Builder
	b.WriteString(prefix + "{")
	for i, r := range rest {
		if i > 0 && b.Len()+len(r)+2 > budget {
			fmt.Fprintf(&b, "} and %d more", len(rest)-i)
			return b.String()
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(r)
	}
	b.WriteString("}")
	return b.String()
}

// commonPrefix is the start all ids share, cut back to a separator so
// that no word is split.
func commonPrefix(ids []string) string {
	prefix := ids[0]
	for _, id := range ids[1:] {
		for !strings.HasPrefix(id, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	cut := strings.LastIndexFunc(prefix, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	return prefix[:cut+1]
}

// summaryBudget bounds a server group's summary.
const summaryBudget = 200

// summarize describes a whole group (a server) by what its tools do: its
// name as the descriptions spell it, the first sentence of its own
// instructions when it has them, then the resources its tools act on,
// most used first, and the operations they perform. A model picks a
// server by this line, so it says what is inside rather than whose it is.
func summarize(name, instructions string, items []*item) string {
	title := capitalize(humanize(splitWords(name), items))
	if title == "" {
		title = name
	}
	var b strings.Builder
	b.WriteString(title)
	if len(items) == 1 {
		b.WriteString(" (1 tool)")
	} else {
		fmt.Fprintf(&b, " (%d tools)", len(items))
	}
	if lead := firstSentence(instructions); lead != "" {
		b.WriteString(": " + lead)
		if !strings.HasSuffix(lead, ".") {
			b.WriteString(".")
		}
		b.WriteString(" Covers")
	}
	resources, verbs := coverage(items)
	sep := ": "
	if b.Len() > len(title)+12 {
		sep = " "
	}
	if len(resources) > 0 {
		b.WriteString(sep)
		sep = "; "
		for i, r := range resources {
			if i > 0 && b.Len()+len(r)+2 > summaryBudget-60 {
				fmt.Fprintf(&b, " and %d more", len(resources)-i)
				break
			}
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(r)
		}
	}
	if len(verbs) > 0 {
		b.WriteString(sep)
		for i, v := range verbs {
			if i > 0 && b.Len()+len(v)+2 > summaryBudget {
				break
			}
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(v)
		}
	}
	return b.String()
}

// coverage lists the resources a group's tools act on (the first word of
// each name after its verb, with the next word when every such name has
// the same one: "phone number") and their verbs, each most used first.
func coverage(items []*item) (resources, verbs []string) {
	type res struct {
		next  string
		mixed bool
		n     int
		forms map[string]int
	}
	byKey := map[string]*res{}
	verbN := map[string]int{}
	for _, it := range items {
		if it.verb != "" {
			verbN[it.verb]++
		}
		if len(it.name) == 0 {
			continue
		}
		k := it.name[0]
		r := byKey[k]
		if r == nil {
			r = &res{forms: map[string]int{}}
			byKey[k] = r
			if len(it.name) > 1 {
				r.next = it.name[1]
			}
		} else if len(it.name) < 2 || it.name[1] != r.next {
			r.mixed = true
		}
		r.n++
		r.forms[it.surface[0]]++
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if c := cmp.Compare(byKey[b].n, byKey[a].n); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	words := make([]string, 0, 2*len(keys))
	for _, k := range keys {
		words = append(words, k, byKey[k].next)
	}
	spelled := spellings(words, items)
	for _, k := range keys {
		r := byKey[k]
		phrase := spelled[k]
		if !r.mixed && r.next != "" && r.n > 1 {
			phrase += " " + spelled[r.next]
		}
		resources = append(resources, phrase)
	}
	vs := make([]string, 0, len(verbN))
	for v := range verbN {
		vs = append(vs, v)
	}
	slices.SortFunc(vs, func(a, b string) int {
		if c := cmp.Compare(verbN[b], verbN[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return resources, vs
}

// firstSentence is the opening sentence of s, at most 200 bytes.
func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	if len(s) > 200 {
		cut := strings.LastIndexByte(s[:200], ' ')
		if cut < 0 {
			cut = 200
		}
		s = s[:cut] + "…"
	}
	return s
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
		// The words are scanned in place: splitting each description into
		// a new slice every time was most of a large catalog's garbage at
		// start.
		eachWord(it.tool.Description, func(field string) {
			if strings.EqualFold(field, w) {
				counts[field]++
			}
		})
	}
	return bestSpelling(w, counts)
}

// spellings is spelling for each of words, reading every description once:
// coverage asks for a word or two per resource, and a large group has
// hundreds of resources, which made reading the descriptions once per word
// a fifth of a 20,000-tool start.
func spellings(words []string, items []*item) map[string]string {
	counts := make(map[string]map[string]int, len(words))
	for _, w := range words {
		counts[strings.ToLower(w)] = nil
	}
	for _, it := range items {
		eachWord(it.tool.Description, func(field string) {
			key := strings.ToLower(field) // the field itself, unless it has capitals
			c, wanted := counts[key]
			if !wanted {
				return
			}
			if c == nil {
				c = map[string]int{}
				counts[key] = c
			}
			c[field]++
		})
	}
	out := make(map[string]string, len(words))
	for _, w := range words {
		// Forms are counted under their lower case and kept if EqualFold
		// matches them, as spelling keeps them. (A form whose lower case
		// differs though EqualFold matches, such as one with the Kelvin
		// sign for K, is not seen: tool descriptions do not write words
		// so.)
		forms := map[string]int{}
		for f, n := range counts[strings.ToLower(w)] {
			if strings.EqualFold(f, w) {
				forms[f] = n
			}
		}
		out[w] = bestSpelling(w, forms)
	}
	return out
}

// bestSpelling picks w's spelling from the counts of its forms.
func bestSpelling(w string, counts map[string]int) string {
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

// eachWord calls fn with every maximal run of letters and digits in s,
// in order: the fields strings.FieldsFunc would give, without a slice.
func eachWord(s string, fn func(string)) {
	start := -1
	for i, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			fn(s[start:i])
			start = -1
		}
	}
	if start >= 0 {
		fn(s[start:])
	}
}

func capitalize(s string) string {
	for i, r := range s {
		return string(unicode.ToUpper(r)) + s[i+len(string(r)):]
	}
	return s
}
