package cmdtool

import (
	"regexp"
	"strings"
	"sync"
)

// Type words that help texts print after an option, lower-cased: pflag's
// (cobra), click's and common metavars. Anything not listed takes a
// string, which is always a safe reading: the program checks it.
var (
	integerWords = setOf("int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64",
		"integer", "integer range", "n", "num", "count", "depth", "limit", "lines")
	numberWords = setOf("float", "float32", "float64", "decimal", "float range")
	arrayWords  = setOf("strings", "stringarray", "stringslice", "stringtostring", "list", "ints", "uints",
		"intslice", "uintslice", "int32slice", "int64slice", "float32slice", "float64slice", "boolslice",
		"durationslice", "map", "filter")
	booleanWords = setOf("bool")
)

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

var (
	optionToken = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(--?)(\[no-\])?([A-Za-z0-9][A-Za-z0-9_.-]*)(.*)$`) })
	lowerWord   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-zA-Z0-9-]*$`) })
	kubectlBool = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^=(true|false):?$`) })
	kubectlInt  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^=-?[0-9]+:?$`) })
)

// parseFlagLine parses one option entry ("-n, --max-count <n>   limit the
// number of commits"). It returns the option, the column (within trimmed)
// where the description starts (0 if it starts on a later line), and false
// if the line is not an option entry.
func parseFlagLine(trimmed string) (HelpFlag, int, bool) {
	spec, desc, descCol := joinSpellings(splitColumns(trimmed))
	tokens := tokenize(spec, true)
	var f HelpFlag
	var values []string
	attached, optional := "", false
	skipNext, seenOption := false, false
	for i, tok := range tokens {
		if tok == "/" {
			// click: "--shout / --no-shout" is one boolean.
			skipNext = true
			continue
		}
		if m := optionToken().FindStringSubmatch(tok); m != nil && looksLikeFlag(tok) {
			if skipNext {
				skipNext = false
				continue
			}
			seenOption = true
			f.addSpelling(m[1], m[3])
			value, opt := attachedValue(m[4])
			optional = optional || opt
			if value != "" {
				attached = value
			}
			continue
		}
		if !seenOption {
			return HelpFlag{}, 0, false
		}
		if isValueToken(tok, i == len(tokens)-1 && len(values) == 0) {
			values = append(values, tok)
			continue
		}
		// The rest was description separated by a single space (git's
		// "--name-status show names ...").
		desc = joinText(strings.Join(tokens[i:], " "), desc)
		descCol = 0
		break
	}
	if f.Long == "" && f.Short == "" {
		return HelpFlag{}, 0, false
	}
	f.Description = desc
	f.OptionalValue = optional
	f.Type, f.Enum, f.ValueName = classifyValue(attached, values)
	if desc == "" {
		descCol = 0
	}
	return f, descCol, true
}

// joinSpellings folds git's "-a  --text    treat all files as text", two
// spellings with a wide gap between them, into one spec.
func joinSpellings(spec, desc string, descCol int) (string, string, int) {
	for i := 0; i < 3 && strings.HasPrefix(desc, "--") && !strings.ContainsAny(spec, " <=[") && !strings.HasPrefix(spec, "--"); i++ {
		s2, d2, c2 := splitColumns(desc)
		spec, desc = spec+", "+s2, d2
		if c2 > 0 {
			descCol += c2
		} else {
			descCol = 0
		}
	}
	return spec, desc, descCol
}

// addSpelling records one spelling of the option; the first long and the
// first short spelling win.
func (f *HelpFlag) addSpelling(dashes, name string) {
	spelled := dashes + name
	if dashes == "--" || len(name) > 1 {
		// "--max-count", or a single-dash long option ("-timeout").
		if f.Long == "" {
			f.Long = spelled
		}
	} else if f.Short == "" {
		f.Short = spelled
	}
}

// attachedValue reads what is glued to an option, as in "--color[=WHEN]"
// or "--limit=-1:"; optional is true when it is in brackets.
func attachedValue(rest string) (value string, optional bool) {
	rest = strings.TrimSuffix(rest, ":")
	if strings.HasPrefix(rest, "[") && strings.HasSuffix(rest, "]") {
		optional = true
		rest = rest[1 : len(rest)-1]
	}
	return rest, optional
}

// splitColumns splits "spec  description" at the first run of two or
// more spaces.
func splitColumns(s string) (spec, desc string, descCol int) {
	i := strings.Index(s, "  ")
	if i < 0 {
		return s, "", 0
	}
	j := i
	for j < len(s) && s[j] == ' ' {
		j++
	}
	return s[:i], s[j:], j
}

// isValueToken says whether a token after an option names its value.
func isValueToken(tok string, lastAndAlone bool) bool {
	switch {
	case tok == "...":
		return true
	case strings.HasPrefix(tok, "<"), strings.HasPrefix(tok, "{"), strings.HasPrefix(tok, "["), strings.HasPrefix(tok, "("):
		return true
	case strings.HasPrefix(tok, "="):
		return true
	case upperWord().MatchString(strings.TrimSuffix(tok, "...")):
		return true
	case lastAndAlone && lowerWord().MatchString(tok):
		// cobra's type word: "--format string   Format output".
		return true
	}
	return false
}

// classifyValue infers the parameter type from what follows an option.
func classifyValue(attached string, values []string) (ParamType, []string, string) {
	all := values
	if attached != "" {
		all = append([]string{attached}, values...)
	}
	if len(all) == 0 {
		return TypeBoolean, nil, ""
	}
	valueName := strings.Join(all, " ")
	if attached != "" && len(values) == 0 && !strings.ContainsAny(attached, "<[{(") {
		if t, ok := kubectlDefault(attached); ok {
			if t == TypeBoolean {
				return TypeBoolean, nil, ""
			}
			return t, nil, valueName
		}
	}
	array := repeats(values)
	first := strings.TrimPrefix(all[0], "=")
	if enum := enumOf(first); enum != nil {
		if array {
			return TypeArray, enum, valueName
		}
		return TypeString, enum, valueName
	}
	if array {
		return TypeArray, nil, valueName
	}
	word := strings.Trim(first, "<>[]=")
	if len(values) >= 2 && values[1] == "RANGE" {
		word += " range"
	}
	t, enum := typeOfWord(word)
	return t, enum, valueName
}

// repeats reports whether a value is marked as given many times: "...",
// "FILE..." or "[FILE...]".
func repeats(values []string) bool {
	for _, v := range values {
		if strings.HasSuffix(v, "...") || strings.HasSuffix(v, "...]") {
			return true
		}
	}
	return false
}

// kubectlDefault reads the type from the default kubectl shows in place of
// a value: "--all-namespaces=false:", "--limit=-1:", "--labels=[]:".
func kubectlDefault(attached string) (ParamType, bool) {
	a := "=" + strings.TrimPrefix(attached, "=")
	switch {
	case kubectlBool().MatchString(a + ":"):
		return TypeBoolean, true
	case a == "=[]" || a == "=[]:":
		return TypeArray, true
	case kubectlInt().MatchString(a):
		return TypeInteger, true
	}
	return "", false
}

// typeOfWord reads the type from a value's name, such as <n>, FILE or
// BOOLEAN.
func typeOfWord(word string) (ParamType, []string) {
	lower := strings.ToLower(word)
	switch {
	case word == "BOOLEAN":
		return TypeString, []string{"true", "false"}
	case integerWords[lower]:
		return TypeInteger, nil
	case numberWords[lower]:
		return TypeNumber, nil
	case arrayWords[lower]:
		return TypeArray, nil
	case booleanWords[lower]:
		return TypeString, []string{"true", "false"}
	}
	return TypeString, nil
}

// enumOf reads a list of choices: argparse "{a,b}", click "[a|b]", git
// "(push|fetch)" or "<fetch|push>".
func enumOf(tok string) []string {
	if len(tok) < 3 {
		return nil
	}
	open, close := tok[0], tok[len(tok)-1]
	inner := tok[1 : len(tok)-1]
	sep := ""
	switch {
	case open == '{' && close == '}':
		sep = ","
	case open == '[' && close == ']', open == '(' && close == ')', open == '<' && close == '>':
		sep = "|"
	default:
		return nil
	}
	if !strings.Contains(inner, sep) {
		return nil
	}
	parts := strings.Split(inner, sep)
	for _, p := range parts {
		if p == "" || strings.ContainsAny(p, " <>[](){}=") {
			return nil
		}
	}
	return parts
}

// tokenize splits at spaces outside brackets (and at commas too, for option
// specs), keeping "[...]", "<...>", "{...}" and "(...)" groups whole.
// Unbalanced brackets end at the end of the string.
func tokenize(s string, commas bool) []string {
	var tokens []string
	var cur strings.Builder
	depth := 0
	flush := func() {
		if cur.Len() > 0 && len(tokens) < maxUsageTokens {
			tokens = append(tokens, cur.String())
		}
		cur.Reset()
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '[' || c == '(' || c == '{' || c == '<':
			if depth < maxTokenNesting {
				depth++
			}
			cur.WriteByte(c)
		case c == ']' || c == ')' || c == '}' || c == '>':
			if depth > 0 {
				depth--
			}
			cur.WriteByte(c)
		case depth == 0 && (c == ' ' || commas && c == ','):
			flush()
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return tokens
}
