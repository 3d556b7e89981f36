package search

import "strings"

// stem reduces an English word to a key shared by its inflections, so that
// "issues" meets "issue", "listing" meets "list", "created" meets "create"
// and "repositories" meets "repository". It is a deliberately small,
// Porter-like suffix stripper tuned for tool-catalog vocabulary:
//
//  1. plurals: -ies → -y, -sses/-xes/-ches/-shes/-zzes lose -es, other -s
//     goes (not after s, u or i: "status", "analysis", "process" stay);
//  2. -ied → -y; -ed and -ing go when a vowel remains ("need", "string" and
//     "ping" stay), a doubled final consonant is undoubled ("running" →
//     "run"), and a short stem gets its silent e back ("saved" → "save");
//  3. -ly, -ship, -ment and -tion go from long words ("recently" →
//     "recent", "relationship" → "relat", "deployment" → "deploy",
//     "deletion" → "delet"), so nouns and adverbs meet their verbs;
//  4. a final silent e goes from words of five letters or more, so
//     "create", "created" and "creating" all become "creat".
//
// Keys are not always words ("creat", "delet"): only their equality
// matters. Words with digits, and words of three letters or fewer, are
// left alone. irregularStems overrides the rules.
func stem(w string) string {
	if s, ok := irregularStems[w]; ok {
		return s
	}
	if len(w) <= 3 || strings.ContainsAny(w, "0123456789") {
		return w
	}
	w = stripPlural(w)
	w = stripVerbEnding(w)
	w = stripNounEnding(w)
	if len(w) >= 5 && strings.HasSuffix(w, "e") && !strings.HasSuffix(w, "ee") {
		w = w[:len(w)-1]
	}
	return w
}

// irregularStems lists words the rules would fold wrongly, mapped to the key
// of the word they mean. Keys must themselves be stable under stem.
var irregularStems = map[string]string{
	"news":     "news",     // not the plural of "new"
	"alias":    "alias",    // not a plural
	"aliases":  "alias",    //
	"canvas":   "canvas",   //
	"apis":     "api",      // -is is usually singular ("analysis"), not here
	"children": "child",    //
	"indices":  "index",    //
	"data":     "data",     //
	"media":    "media",    //
	"embed":    "embed",    // not embe+d
	"settings": "setting",  // not "set"
	"setting":  "setting",  //
	"seed":     "seed",     //
	"during":   "during",   //
	"string":   "string",   //
	"strings":  "string",   //
	"bytes":    "byte",     //
	"does":     "do",       //
	"goes":     "go",       //
	"series":   "series",   //
	"species":  "species",  //
	"status":   "status",   //
	"statuses": "status",   //
	"address":  "address",  //
	"process":  "process",  //
	"analysis": "analysis", //
	"analyses": "analysis", //
}

func stripPlural(w string) string {
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "xes"), strings.HasSuffix(w, "ches"),
		strings.HasSuffix(w, "shes"), strings.HasSuffix(w, "zzes"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
		return w
	case strings.HasSuffix(w, "s"):
		return w[:len(w)-1]
	}
	return w
}

func stripVerbEnding(w string) string {
	switch {
	case strings.HasSuffix(w, "ied") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "eed"):
		return w // need, feed, speed
	case strings.HasSuffix(w, "ed"):
		return restoreStem(w[:len(w)-2], w)
	case strings.HasSuffix(w, "ing"):
		return restoreStem(w[:len(w)-3], w)
	}
	return w
}

// restoreStem finishes a stem left by removing -ed or -ing from word: it
// refuses stems without a vowel ("string" → "str"), undoubles a final
// consonant ("mapped" → "map"; not "added", and "installed" keeps "ll"),
// and puts back the silent e of short stems ("coding" → "code", "used" →
// "use").
func restoreStem(s, word string) string {
	if len(s) < 2 || !strings.ContainsAny(s, "aeiouy") {
		return word
	}
	if n := len(s); n >= 4 && s[n-1] == s[n-2] && !isVowel(s[n-1]) && !strings.ContainsRune("lsz", rune(s[n-1])) {
		return s[:n-1]
	}
	if n := len(s); n <= 3 && !isVowel(s[n-1]) && isVowel(s[n-2]) && !strings.ContainsRune("wxy", rune(s[n-1])) {
		return s + "e"
	}
	return s
}

func stripNounEnding(w string) string {
	if strings.HasSuffix(w, "ly") && len(w)-2 >= 5 {
		w = w[:len(w)-2] // recently → recent
	}
	if strings.HasSuffix(w, "ship") && len(w)-4 >= 5 {
		w = w[:len(w)-4] // relationship → relation, membership → member
	}
	switch {
	case strings.HasSuffix(w, "ment") && len(w)-4 >= 5:
		return w[:len(w)-4]
	case strings.HasSuffix(w, "tion") && len(w)-3 >= 4:
		return w[:len(w)-3]
	}
	return w
}

func isVowel(c byte) bool { return strings.IndexByte("aeiou", c) >= 0 }
