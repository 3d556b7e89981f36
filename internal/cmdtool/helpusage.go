package cmdtool

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Compiled on first use (see help.go).
var (
	anglePlaceholder = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^<([A-Za-z][A-Za-z0-9_ .-]*)>(\.\.\.)?$`) })
	upperPlaceholder = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([A-Z][A-Z0-9_-]*)((?:\[[^\]]*\])*)(\.\.\.)?$`) })
	optionsWord      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^<?[a-z-]*(options|flags)>?$`) })
)

// usageLine is what one usage line says.
type usageLine struct {
	leading     []string // program and subcommand words before the first option
	positionals []HelpPositional
	complex     bool     // operands too intricate to map one by one
	subs        []string // subcommand words found after options (git)
	requiredSub bool     // a subcommand word is required on this line
	command     bool     // a COMMAND/<command>/{a,b} placeholder is present
	optionalCmd bool     // ...and it is optional
}

type usageWalker struct {
	style       HelpStyle
	hasCommands bool
	line        *usageLine
	sepAt       int // number of positionals seen when "--" appeared; -1 if none
	afterCmd    bool
}

func analyzeUsage(text string, style HelpStyle, hasCommands bool) usageLine {
	var u usageLine
	tokens := tokenize(text, false)
	i := 0
	for ; i < len(tokens); i++ {
		t := tokens[i]
		if i > 0 && !plainWord().MatchString(t) {
			break
		}
		u.leading = append(u.leading, t)
	}
	w := &usageWalker{style: style, hasCommands: hasCommands, line: &u, sepAt: -1}
	w.walk(tokens[i:], false, 0)
	if w.sepAt >= 0 {
		for j := 0; j < w.sepAt && j < len(u.positionals); j++ {
			u.positionals[j].BeforeSeparator = true
		}
	}
	return u
}

func (w *usageWalker) walk(tokens []string, optional bool, depth int) {
	if depth > maxTokenNesting {
		w.line.complex = true
		return
	}
	for _, tok := range tokens {
		if w.afterCmd {
			return
		}
		w.token(tok, optional, depth)
	}
}

func (w *usageWalker) token(tok string, optional bool, depth int) {
	u := w.line
	switch {
	case tok == "--":
		w.markSeparator()
	case tok == "...":
		w.markLastArray()
	case tok == "|":
		u.complex = true
	case strings.HasPrefix(tok, "-"):
		// An option, with its value if attached.
	case strings.HasPrefix(tok, "["):
		w.group(tok, '[', ']', true, depth)
	case strings.HasPrefix(tok, "("):
		w.group(tok, '(', ')', optional, depth)
	case strings.HasPrefix(tok, "{"):
		w.commandPlaceholder(optional)
	case optionsWord().MatchString(tok):
	default:
		w.placeholder(tok, optional)
	}
}

// group handles "[...]" and "(...)" with an optional suffix ("[ARGS]...").
func (w *usageWalker) group(tok string, open, close byte, optional bool, depth int) {
	u := w.line
	end := matchingClose(tok, open, close)
	inner, suffix := tok[1:end], ""
	if end < len(tok) {
		suffix = tok[end+1:]
	}
	inner = strings.TrimSpace(inner)
	if inner == "" || optionsWord().MatchString(inner) {
		return
	}
	parts := tokenize(inner, false)
	first := parts[0]
	if first == "--" && len(parts) == 1 {
		w.markSeparator()
		return
	}
	if isOptionGroup(first) {
		return
	}
	if alts := wordAlternatives(inner); alts != nil {
		// git bisect [help|start|bad...], git sparse-checkout (init | list | set)
		u.subs = append(u.subs, alts...)
		if !optional {
			u.requiredSub = true
		}
		return
	}
	if w.style == StyleGit && plainWord().MatchString(first) {
		// git stash [push [-p] ...]: an optional subcommand and its options.
		u.subs = append(u.subs, first)
		return
	}
	if strings.Contains(inner, "|") && !strings.HasPrefix(inner, "<") {
		u.complex = true
		return
	}
	if w.repeatsLast(parts) {
		// "items [items ...]" (argparse), "CONTAINER [CONTAINER...]"
		// (cobra): one or more.
		w.markLastArray()
		return
	}
	before := len(u.positionals)
	w.walk(parts, optional, depth+1)
	switch {
	case suffix == "...":
		if len(u.positionals) > before {
			w.markLastArray()
		}
	case suffix != "":
		u.complex = true
	}
}

// markSeparator records that "--" comes before the positionals seen so
// far, unless one came earlier.
func (w *usageWalker) markSeparator() {
	if w.sepAt < 0 {
		w.sepAt = len(w.line.positionals)
	}
}

// repeatsLast reports whether a group's parts ("items ...", "ITEM...")
// repeat the last positional, making it one or more.
func (w *usageWalker) repeatsLast(parts []string) bool {
	n := len(w.line.positionals)
	if n == 0 {
		return false
	}
	first := parts[0]
	repeated := len(parts) == 2 && parts[1] == "..." || len(parts) == 1 && strings.HasSuffix(first, "...")
	return repeated && paramNameFrom(strings.Trim(strings.TrimSuffix(first, "..."), "<>")) == w.line.positionals[n-1].Name
}

func (w *usageWalker) placeholder(tok string, optional bool) {
	u := w.line
	name, array := "", false
	if m := anglePlaceholder().FindStringSubmatch(tok); m != nil {
		name, array = m[1], m[2] != ""
	} else if m := upperPlaceholder().FindStringSubmatch(tok); m != nil {
		name, array = m[1], m[3] != ""
	} else if plainWord().MatchString(tok) || strings.HasSuffix(tok, "...") && plainWord().MatchString(strings.TrimSuffix(tok, "...")) {
		switch w.style {
		case StyleArgparse:
			name, array = strings.TrimSuffix(tok, "..."), strings.HasSuffix(tok, "...")
		case StyleGit:
			u.subs = append(u.subs, tok)
			u.requiredSub = true
			w.afterCmd = true
			return
		default:
			// A literal word in a cobra/click usage ("[flags]" aside):
			// nothing the model has to fill.
			return
		}
	} else {
		u.complex = true
		return
	}
	lower := strings.ToLower(name)
	if w.hasCommands && (lower == "command" || lower == "subcommand" || lower == "cmd") {
		w.commandPlaceholder(optional)
		return
	}
	if optionsWord().MatchString(name) {
		return
	}
	u.positionals = append(u.positionals, HelpPositional{Name: paramNameFrom(name), Array: array, Optional: optional})
}

func (w *usageWalker) commandPlaceholder(optional bool) {
	w.line.command = true
	w.line.optionalCmd = optional
	w.afterCmd = true
}

func (w *usageWalker) markLastArray() {
	if n := len(w.line.positionals); n > 0 {
		w.line.positionals[n-1].Array = true
	}
}

// matchingClose finds the bracket closing tok[0]; len(tok) if unbalanced.
func matchingClose(tok string, open, close byte) int {
	depth := 0
	for i := 0; i < len(tok); i++ {
		switch tok[i] {
		case open:
			depth++
		case close:
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return len(tok)
}

// isOptionGroup says a bracketed group holds options ("-v | --verbose",
// "(-m | --message) <message>").
func isOptionGroup(first string) bool {
	first = strings.TrimLeft(first, "(")
	return strings.HasPrefix(first, "-") && first != "--"
}

// wordAlternatives reads "a|b|c" or "a | b | c" of plain words.
func wordAlternatives(inner string) []string {
	if !strings.Contains(inner, "|") {
		return nil
	}
	var out []string
	for _, p := range strings.Split(inner, "|") {
		p = strings.TrimSpace(p)
		if !plainWord().MatchString(p) {
			return nil
		}
		out = append(out, p)
	}
	return out
}

// positionalsFromUsage picks the usage line of the page's own command and
// reads its operands; it also decides whether the command needs a
// subcommand. Descriptions come from an argparse "positional arguments"
// section when there is one.
func positionalsFromUsage(page *HelpPage, help []HelpPositional) ([]HelpPositional, bool) {
	if len(page.Usage) == 0 {
		return mergePositionalHelp(nil, help, false), len(page.Commands) > 0
	}
	hasCommands := len(page.Commands) > 0
	own := analyzeUsage(page.Usage[0], page.Style, hasCommands)
	if page.Style == StyleGit {
		prefix := gitUsagePrefix(page)
		found := false
		for _, line := range page.Usage {
			u := analyzeUsage(line, page.Style, hasCommands)
			if len(prefix) >= 2 && len(u.leading) > len(prefix) {
				continue
			}
			if !u.requiredSub {
				own, found = u, true
				break
			}
		}
		if !found {
			return nil, true
		}
		if len(prefix) >= 2 && len(gitUsageCommands(page)) > 0 {
			hasCommands = true
		}
	}
	needsCommand := hasCommands && (!own.command || !own.optionalCmd)
	if page.Style == StyleGit && !own.command {
		needsCommand = false
	}
	if own.complex {
		desc := "Arguments, as in the usage: " + page.Usage[0]
		return []HelpPositional{{Name: "args", Array: true, Optional: true, Description: clip(desc)}}, needsCommand
	}
	return mergePositionalHelp(dedupePositionals(own.positionals), help, true), needsCommand
}

func dedupePositionals(ps []HelpPositional) []HelpPositional {
	seen := map[string]int{}
	for i := range ps {
		seen[ps[i].Name]++
		if n := seen[ps[i].Name]; n > 1 {
			ps[i].Name += "_" + strconv.Itoa(n)
		}
	}
	return ps
}

func mergePositionalHelp(ps, help []HelpPositional, appendExtra bool) []HelpPositional {
	for _, h := range help {
		matched := false
		for i := range ps {
			if ps[i].Name == h.Name {
				ps[i].Description = h.Description
				matched = true
			}
		}
		if !matched && appendExtra {
			h.Optional = true
			ps = append(ps, h)
		}
	}
	return ps
}

// gitUsagePrefix is the words every usage line of a git page starts with
// ("git", "remote").
func gitUsagePrefix(page *HelpPage) []string {
	var prefix []string
	for i, line := range page.Usage {
		lead := analyzeUsage(line, page.Style, false).leading
		if i == 0 {
			prefix = lead
			continue
		}
		n := 0
		for n < len(prefix) && n < len(lead) && prefix[n] == lead[n] {
			n++
		}
		prefix = prefix[:n]
	}
	return prefix
}

// gitUsageCommands finds the subcommands of a git page in its usage lines:
// "git remote add ...", "git remote [-v] show ...", "git stash [push ...]".
func gitUsageCommands(page *HelpPage) []HelpCommand {
	prefix := gitUsagePrefix(page)
	if len(prefix) < 2 {
		// "git log" and "git show" share a page: those are not subcommands.
		return nil
	}
	var out []HelpCommand
	seen := map[string]bool{}
	add := func(name, line string) {
		if !seen[name] {
			seen[name] = true
			out = append(out, HelpCommand{Name: name, Category: "usage", Usage: line})
		}
	}
	for _, line := range page.Usage {
		u := analyzeUsage(line, page.Style, false)
		if len(u.leading) > len(prefix) {
			add(u.leading[len(prefix)], line)
			continue
		}
		for _, s := range u.subs {
			add(s, line)
		}
	}
	return out
}

func addGitUsageCommands(page *HelpPage) {
	for _, c := range gitUsageCommands(page) {
		exists := false
		for _, have := range page.Commands {
			if have.Name == c.Name {
				exists = true
			}
		}
		if !exists {
			page.Commands = append(page.Commands, c)
		}
	}
}

// flagsFromUsage reads the options spelled out in a usage line
// ("[-t <branch>] [-f] [--tags | --no-tags] [--mirror=<fetch|push>]"), for
// pages that have no option list of their own (a git subcommand known only
// from its parent's usage).
func flagsFromUsage(usage string) []HelpFlag {
	var flags []HelpFlag
	var walk func(tokens []string, depth int)
	addAlternative := func(alt string) {
		alt = strings.TrimSpace(alt)
		// "(-m | --message) <message>" → "-m, --message <message>"
		if strings.HasPrefix(alt, "(") {
			end := matchingClose(alt, '(', ')')
			if end < len(alt) {
				names := strings.Split(alt[1:end], "|")
				for i := range names {
					names[i] = strings.TrimSpace(names[i])
				}
				alt = strings.Join(names, ", ") + alt[end+1:]
			}
		}
		if !looksLikeFlag(alt) {
			return
		}
		if f, _, ok := parseFlagLine(alt); ok && !isHelpOrVersion(f) {
			flags = append(flags, f)
		}
	}
	walk = func(tokens []string, depth int) {
		if depth > maxTokenNesting {
			return
		}
		for _, tok := range tokens {
			switch {
			case strings.HasPrefix(tok, "-") && tok != "--":
				addAlternative(tok)
			case strings.HasPrefix(tok, "["):
				end := matchingClose(tok, '[', ']')
				inner := strings.TrimSpace(tok[1:end])
				var rest []string
				var kept []string
				for _, t := range tokenize(inner, false) {
					if strings.HasPrefix(t, "[") {
						rest = append(rest, t) // nested option groups
					} else {
						kept = append(kept, t)
					}
				}
				alts := splitAlternatives(strings.Join(kept, " "))
				if len(alts) == 2 && isShortLongPair(alts[0], alts[1]) {
					addAlternative(strings.TrimSpace(alts[0]) + ", " + strings.TrimSpace(alts[1]))
				} else {
					for _, alt := range alts {
						addAlternative(alt)
					}
				}
				walk(rest, depth+1)
			}
		}
	}
	walk(tokenize(usage, false), 0)
	var out []HelpFlag
	seen := map[string]bool{}
	for _, f := range flags {
		key := f.Long + " " + f.Short
		if !seen[key] {
			seen[key] = true
			out = append(out, f)
		}
	}
	return out
}

// splitAlternatives splits at '|' outside brackets.
func splitAlternatives(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[', '(', '{', '<':
			depth++
		case ']', ')', '}', '>':
			if depth > 0 {
				depth--
			}
		case '|':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// isShortLongPair reports "-v | --verbose": one option spelled two ways.
func isShortLongPair(a, b string) bool {
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	return len(a) == 2 && a[0] == '-' && isAlnum(a[1]) && strings.HasPrefix(b, "--") && !strings.Contains(a+b, " ")
}

// ownUsageTail is the first usage line after its leading words: the
// options of the page's own command.
func ownUsageTail(page *HelpPage) string {
	line := page.Usage[0]
	lead := analyzeUsage(line, page.Style, false).leading
	tokens := tokenize(line, false)
	if len(lead) <= len(tokens) {
		tokens = tokens[len(lead):]
	}
	return strings.Join(tokens, " ")
}
