package meta

import (
	"strings"
	"unicode"

	"github.com/toolfold/toolfold/internal/catalog"
)

// maxHeldNotes bounds the held tools one find_tools answer names.
const maxHeldNotes = 3

// heldNotes are the refusals of the held tools whose names share words with
// a phrasing: two words, or the only word of a one-word phrasing. Only the
// name is matched, never the held definition, whose text is what is not
// trusted; the note is toolfold's own words.
func heldNotes(cat *catalog.Catalog, phrasings []string) []string {
	ids := cat.HeldIDs()
	if len(ids) == 0 {
		return nil
	}
	var queries []map[string]bool
	for _, p := range phrasings {
		queries = append(queries, nameWords(p))
	}
	var out []string
	for _, id := range ids {
		words := nameWords(string(id))
		for _, q := range queries {
			shared := 0
			for w := range q {
				if words[w] {
					shared++
				}
			}
			if shared >= 2 || (shared == 1 && len(q) == 1) {
				out = append(out, cat.HeldNote(id))
				break
			}
		}
		if len(out) == maxHeldNotes {
			break
		}
	}
	return out
}

// nameWords are the lowercase words of three letters or more in s, split
// at anything not a letter or digit ("slack__slack_post_message": slack,
// post, message).
func nameWords(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) >= 3 {
			out[w] = true
		}
	}
	return out
}
