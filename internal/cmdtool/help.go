package cmdtool

import (
	"errors"
	"regexp"
	"strings"
	"sync"
	"unicode"
)

// HelpStyle names the help layout a page was written in.
type HelpStyle string

// The help styles ParseHelp recognises. The style is a hint: the parser is
// one tolerant grammar, and the style only changes a few decisions (whether
// a lower-case word in a usage line is a positional, whether an unnamed
// section lists commands).
const (
	StyleUnknown  HelpStyle = "unknown"
	StyleCobra    HelpStyle = "cobra"    // docker, kubectl, gh (Go, spf13/cobra)
	StyleClick    HelpStyle = "click"    // Python click
	StyleArgparse HelpStyle = "argparse" // Python argparse
	StyleGit      HelpStyle = "git"      // git's parse-options and "git help -a"
)

// HelpPage is what ParseHelp understood of one help text.
type HelpPage struct {
	// Style is the detected layout.
	Style HelpStyle
	// Usage holds the usage lines, each with its continuation lines joined.
	Usage []string
	// Description is the first paragraph describing the command.
	Description string
	// Commands are the subcommands the page lists.
	Commands []HelpCommand
	// NeedsCommand says the page's own command cannot run without a
	// subcommand (its usage requires one), so it is not an action itself.
	NeedsCommand bool
	// Flags are the options, without help and version.
	Flags []HelpFlag
	// Positionals are the operands, in usage order.
	Positionals []HelpPositional
}

// HelpCommand is one subcommand listed on a help page.
type HelpCommand struct {
	// Name is the word that selects it ("add", "cherry-pick").
	Name string
	// Description is its one-line summary.
	Description string
	// Category is the heading it was listed under ("Management Commands",
	// "Main Porcelain Commands"), or "usage" for a git subcommand found in
	// a usage line.
	Category string
	// Usage is the usage line it came from, for subcommands found in usage
	// lines; it stands in for the subcommand's own help if that fails.
	Usage string
}

// HelpFlag is one option listed on a help page.
type HelpFlag struct {
	// Long is the long form ("--max-count"), if any.
	Long string
	// Short is the short form ("-n"), if any.
	Short string
	// Type is the inferred value type; TypeBoolean for a switch.
	Type ParamType
	// Enum lists the allowed values when the help shows them.
	Enum []string
	// ValueName is the placeholder or type word shown ("<n>", "string").
	ValueName string
	// OptionalValue says the value may be left out ("--stat[=<width>]").
	OptionalValue bool
	// Required says the help marks the option as required (click).
	Required bool
	// Description is the help text.
	Description string
}

// HelpPositional is one operand of a command.
type HelpPositional struct {
	// Name is a parameter name derived from the placeholder.
	Name string
	// Array says it repeats ("<path>...").
	Array bool
	// Optional says it may be left out.
	Optional bool
	// BeforeSeparator says it appears before "--" in a usage line that
	// has one, as git revisions do.
	BeforeSeparator bool
	// Enum lists the allowed values when the usage shows them.
	Enum []string
	// Description is its help text, when the page has one.
	Description string
}

// Parser bounds: help texts come from programs and are trusted, but the
// parser is fuzzed and must stay linear and bounded on any input.
const (
	maxHelpBytes     = 1 << 20
	maxHelpLines     = 20000
	maxDescription   = 600
	maxTokenNesting  = 16
	maxUsageTokens   = 400
	maxEntriesOnPage = 2000
)

var (
	ansiEscape = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-Z\\-_]`) })
	// Overstrike bold/underline as man and some help printers emit it.
	overstrike   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`.\x08`) })
	commandEntry = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9._:-]*?)\*?(:)?(?:\s{2,}(\S.*))?$`)
	})
	plainWord  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`) })
	upperWord  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z][A-Z0-9_-]*$`) })
	choiceList = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\{([^{}\s]+)\}$`) })
)

// ErrNoHelp is returned by ParseHelp for a text in which no usage line,
// command or option was found.
var ErrNoHelp = errors.New("no usage line, command list or option list found in the help text")

// ParseHelp parses one help text (the output of "prog --help",
// "prog sub -h", "git help -a") in the cobra, click, argparse or git style.
// It never panics, runs in time linear in the (bounded) input, and returns
// ErrNoHelp when the text has nothing it recognises.
func ParseHelp(text string) (HelpPage, error) {
	lines := normalizeHelp(text)
	page := HelpPage{Style: detectStyle(lines)}
	p := &helpParser{page: &page, lines: lines}
	p.parse()
	page.Positionals, page.NeedsCommand = positionalsFromUsage(&page, p.positionalHelp)
	if page.Style == StyleGit {
		addGitUsageCommands(&page)
		if len(page.Flags) == 0 && len(page.Usage) > 0 {
			page.Flags = flagsFromUsage(ownUsageTail(&page))
		}
	}
	if len(page.Usage) == 0 && len(page.Commands) == 0 && len(page.Flags) == 0 {
		return page, ErrNoHelp
	}
	return page, nil
}

func normalizeHelp(text string) []string {
	if len(text) > maxHelpBytes {
		text = text[:maxHelpBytes]
	}
	text = strings.ToValidUTF8(text, "\uFFFD")
	text = ansiEscape().ReplaceAllString(text, "")
	text = overstrike().ReplaceAllString(text, "")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	lines := strings.Split(text, "\n")
	if len(lines) > maxHelpLines {
		lines = lines[:maxHelpLines]
	}
	for i, l := range lines {
		lines[i] = strings.TrimRightFunc(expandTabs(l), unicode.IsSpace)
	}
	return lines
}

func expandTabs(s string) string {
	if !strings.Contains(s, "\t") {
		return s
	}
	var b strings.Builder
	col := 0
	for _, r := range s {
		if r == '\t' {
			n := 8 - col%8
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		}
		b.WriteRune(r)
		col++
	}
	return b.String()
}

func detectStyle(lines []string) HelpStyle {
	joined := strings.Join(lines, "\n")
	lowerUsage, upperUsage := false, false
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "usage:") {
			lowerUsage = true
		}
		if strings.HasPrefix(t, "Usage:") || t == "USAGE" {
			upperUsage = true
		}
	}
	switch {
	case strings.Contains(joined, "Show this message and exit."):
		return StyleClick
	case lowerUsage && (strings.Contains(joined, "show this help message and exit") || strings.Contains(joined, " [-h]")):
		return StyleArgparse
	case lowerUsage && strings.Contains(joined, "<"):
		return StyleGit
	case strings.HasPrefix(strings.TrimSpace(joined), "See 'git help <command>'"):
		return StyleGit
	case upperUsage:
		return StyleCobra
	case lowerUsage:
		return StyleArgparse
	}
	return StyleUnknown
}

// sectionKind says what the entries under a heading are.
type sectionKind int

const (
	sectionNone        sectionKind = iota // before any heading
	sectionUsage                          // usage lines
	sectionCommands                       // subcommands
	sectionFlags                          // options
	sectionPositionals                    // argparse "positional arguments"
	sectionAuto                           // unknown heading: decide per entry
	sectionIgnored                        // examples, aliases, global flags...
)

type helpParser struct {
	page  *HelpPage
	lines []string

	kind           sectionKind
	category       string
	entryIndent    int // indent of the section's first entry
	flag           *HelpFlag
	command        *HelpCommand
	positional     *HelpPositional
	descCol        int // column where the current entry's description starts; 0 if unknown
	choices        map[string]bool
	positionalHelp []HelpPositional
	descDone       bool
	descLines      []string
	entries        int
}

func (p *helpParser) parse() {
	for i := 0; i < len(p.lines); i++ {
		line := p.lines[i]
		trimmed := strings.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		if trimmed == "" {
			p.endEntry()
			p.endDescription()
			if p.kind == sectionUsage {
				p.kind = sectionNone
			}
			continue
		}
		if indent == 0 || (p.kind == sectionUsage && strings.HasPrefix(trimmed, "or:")) {
			if p.startUsage(trimmed) {
				continue
			}
		}
		if indent == 0 && p.isHeading(trimmed, i) {
			p.startSection(trimmed)
			continue
		}
		switch p.kind {
		case sectionUsage:
			if n := len(p.page.Usage); n > 0 && indent > 0 {
				p.page.Usage[n-1] += " " + trimmed
				continue
			}
			p.kind = sectionNone
			p.addDescription(trimmed)
		case sectionNone:
			if indent > 0 && looksLikeFlag(trimmed) {
				// git -h and some argparse pages list options with no heading.
				p.startSection("")
				p.entry(trimmed, indent)
				continue
			}
			p.addDescription(trimmed)
		case sectionIgnored:
		default:
			if p.entries >= maxEntriesOnPage {
				continue
			}
			p.entry(trimmed, indent)
		}
	}
	p.endEntry()
	p.endDescription()
}

// startUsage handles "usage: ...", "Usage:", "USAGE" and git's "or: ...".
func (p *helpParser) startUsage(trimmed string) bool {
	rest, ok := "", false
	for _, prefix := range []string{"usage:", "Usage:", "USAGE:", "or:"} {
		if r, found := strings.CutPrefix(trimmed, prefix); found {
			if prefix == "or:" && p.kind != sectionUsage {
				return false
			}
			rest, ok = strings.TrimSpace(r), true
			break
		}
	}
	if !ok && trimmed == "USAGE" {
		ok = true
	}
	if !ok {
		return false
	}
	p.endEntry()
	p.endDescription()
	p.kind = sectionUsage
	if rest != "" {
		p.page.Usage = append(p.page.Usage, rest)
	} else {
		// "Usage:" alone: the usage lines follow, indented. Mark with an
		// empty line that the next indented line fills.
		p.page.Usage = append(p.page.Usage, "")
	}
	return true
}

// isHeading reports whether an unindented line starts a section: it ends
// with ':' (and is short), is in capitals ("CORE COMMANDS"), or is directly
// followed by an indented entry (git's category names).
func (p *helpParser) isHeading(trimmed string, i int) bool {
	if len(trimmed) > 80 {
		return false
	}
	if strings.HasSuffix(trimmed, ":") && !strings.Contains(trimmed, ". ") {
		return true
	}
	if strings.ToUpper(trimmed) == trimmed && strings.IndexFunc(trimmed, unicode.IsLetter) >= 0 {
		return true
	}
	if i+1 < len(p.lines) {
		next := p.lines[i+1]
		nt := strings.TrimLeft(next, " ")
		if nt != "" && len(next) > len(nt) && !strings.HasSuffix(trimmed, ".") {
			return true
		}
	}
	return false
}

func (p *helpParser) startSection(heading string) {
	p.endEntry()
	p.endDescription()
	p.descDone = true
	p.category = strings.TrimSuffix(heading, ":")
	p.entryIndent = -1
	p.choices = nil
	h := strings.ToLower(p.category)
	switch {
	case strings.Contains(h, "global") || strings.Contains(h, "inherited") ||
		strings.Contains(h, "help topic") || strings.Contains(h, "alias") ||
		strings.Contains(h, "example") || strings.Contains(h, "see also") ||
		strings.Contains(h, "learn more") || strings.Contains(h, "environment"):
		p.kind = sectionIgnored
	case strings.Contains(h, "positional argument"):
		p.kind = sectionPositionals
	case strings.Contains(h, "command") && !strings.Contains(h, "option") && !strings.Contains(h, "flag"):
		p.kind = sectionCommands
	case strings.Contains(h, "option") || strings.Contains(h, "flag"):
		p.kind = sectionFlags
	case h == "arguments":
		// gh lists operands under ARGUMENTS; their names are in the usage.
		p.kind = sectionIgnored
	default:
		p.kind = sectionAuto
	}
}

// entry handles one indented line inside a section.
func (p *helpParser) entry(trimmed string, indent int) {
	startsFlag := looksLikeFlag(trimmed)
	if p.entryIndent < 0 {
		p.entryIndent = indent
	}
	if p.choices != nil && indent > p.entryIndent && p.choiceEntry(trimmed, indent) {
		return
	}
	if p.hasCurrent() && p.isContinuation(indent, startsFlag) {
		p.continueEntry(trimmed, indent)
		return
	}
	p.endEntry()
	p.entries++
	if p.choiceList(trimmed) {
		return
	}
	kind := p.kind
	if startsFlag && kind != sectionCommands {
		kind = sectionFlags
	}
	p.startEntry(kind, trimmed, indent)
}

// choiceEntry starts a command entry for a line that names one of the
// argparse subparser choices, deeper than the choice list; it reports
// whether the line was one.
func (p *helpParser) choiceEntry(trimmed string, indent int) bool {
	m := commandEntry().FindStringSubmatch(trimmed)
	if m == nil || !p.choices[m[1]] {
		return false
	}
	p.endEntry()
	p.command = &HelpCommand{Name: m[1], Description: m[3], Category: p.category}
	p.descCol = descColumn(trimmed, indent, m[3])
	return true
}

// choiceList reads argparse's subparser list, "{search,remove}", whose
// choices follow on deeper lines with their help; it reports whether the
// line was one.
func (p *helpParser) choiceList(trimmed string) bool {
	m := choiceList().FindStringSubmatch(strings.Fields(trimmed)[0])
	if m == nil {
		return false
	}
	p.choices = map[string]bool{}
	for _, c := range strings.Split(m[1], ",") {
		if c != "" {
			p.choices[c] = true
			p.addCommand(HelpCommand{Name: c, Category: p.category})
		}
	}
	p.descCol = 0
	return true
}

// startEntry starts a flag, command or positional entry from a line of a
// section of the given kind.
func (p *helpParser) startEntry(kind sectionKind, trimmed string, indent int) {
	switch kind {
	case sectionFlags:
		if f, descCol, ok := parseFlagLine(trimmed); ok {
			p.flag = &f
			p.descCol = 0
			if descCol > 0 {
				p.descCol = indent + descCol
			}
		}
	case sectionCommands, sectionAuto:
		if kind == sectionAuto && p.page.Style != StyleGit {
			return
		}
		if m := commandEntry().FindStringSubmatch(trimmed); m != nil {
			p.command = &HelpCommand{Name: m[1], Description: m[3], Category: p.category}
			p.descCol = descColumn(trimmed, indent, m[3])
		}
	case sectionPositionals:
		if m := commandEntry().FindStringSubmatch(trimmed); m != nil {
			p.positional = &HelpPositional{Name: paramNameFrom(m[1]), Description: m[3]}
			p.descCol = descColumn(trimmed, indent, m[3])
		}
	}
}

func (p *helpParser) hasCurrent() bool {
	return p.flag != nil || p.command != nil || p.positional != nil
}

// isContinuation tells a wrapped description line from a new entry. A line
// starting with '-' left of the description column is a new option (cobra
// indents long-only options deeper than "-a, --all", so the entry indent
// alone cannot tell); any other line continues an option, and continues a
// command or operand when it is indented deeper than the entries.
func (p *helpParser) isContinuation(indent int, startsFlag bool) bool {
	if startsFlag && p.kind != sectionCommands {
		return p.descCol > 0 && indent >= p.descCol
	}
	if p.flag != nil {
		return true
	}
	return indent > p.entryIndent
}

func descColumn(trimmed string, indent int, desc string) int {
	if desc == "" {
		return 0
	}
	return indent + len(trimmed) - len(desc)
}

func (p *helpParser) continueEntry(trimmed string, indent int) {
	if p.descCol == 0 {
		p.descCol = indent
	}
	switch {
	case p.flag != nil:
		p.flag.Description = joinText(p.flag.Description, trimmed)
	case p.command != nil:
		p.command.Description = joinText(p.command.Description, trimmed)
	case p.positional != nil:
		p.positional.Description = joinText(p.positional.Description, trimmed)
	}
}

func (p *helpParser) endEntry() {
	if p.flag != nil {
		f := *p.flag
		if strings.Contains(f.Description, "[required]") {
			f.Required = true
		}
		if !isHelpOrVersion(f) && !p.hasFlag(f) {
			p.page.Flags = append(p.page.Flags, f)
		}
	}
	if p.command != nil {
		if p.choices != nil && p.choices[p.command.Name] {
			p.setCommandDescription(p.command.Name, p.command.Description)
		} else {
			p.addCommand(*p.command)
		}
	}
	if p.positional != nil {
		p.positionalHelp = append(p.positionalHelp, *p.positional)
	}
	p.flag, p.command, p.positional = nil, nil, nil
}

func (p *helpParser) hasFlag(f HelpFlag) bool {
	for _, g := range p.page.Flags {
		if (f.Long != "" && g.Long == f.Long) || (f.Long == "" && g.Long == "" && g.Short == f.Short) {
			return true
		}
	}
	return false
}

func (p *helpParser) addCommand(c HelpCommand) {
	for _, have := range p.page.Commands {
		if have.Name == c.Name {
			return
		}
	}
	p.page.Commands = append(p.page.Commands, c)
}

func (p *helpParser) setCommandDescription(name, desc string) {
	for i := range p.page.Commands {
		if p.page.Commands[i].Name == name {
			p.page.Commands[i].Description = joinText(p.page.Commands[i].Description, desc)
			return
		}
	}
}

func (p *helpParser) addDescription(trimmed string) {
	if p.descDone {
		return
	}
	// "Usage:" alone is followed by the indented usage line.
	if n := len(p.page.Usage); n > 0 && p.page.Usage[n-1] == "" {
		p.page.Usage[n-1] = trimmed
		p.kind = sectionUsage
		return
	}
	p.descLines = append(p.descLines, trimmed)
}

func (p *helpParser) endDescription() {
	if len(p.descLines) == 0 || p.descDone {
		return
	}
	p.descDone = true
	d := strings.Join(p.descLines, " ")
	if len(d) > maxDescription {
		d = clip(d[:maxDescription])
	}
	p.page.Description = d
}

func joinText(a, b string) string {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	return a + " " + b
}

func looksLikeFlag(trimmed string) bool {
	if len(trimmed) < 2 || trimmed[0] != '-' {
		return false
	}
	c := trimmed[1]
	return c == '-' || c == '[' || isAlnum(c)
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isHelpOrVersion(f HelpFlag) bool {
	switch f.Long {
	case "--help", "--version":
		return true
	case "":
		return f.Short == "-h" && strings.Contains(strings.ToLower(f.Description), "help")
	}
	return false
}

// paramNameFrom turns a flag or placeholder ("--max-count", "<revision-range>",
// "SOURCE_IMAGE") into a parameter name ("max_count", "revision_range",
// "source_image").
func paramNameFrom(s string) string {
	s = strings.TrimLeft(s, "-")
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			if b.Len() > 0 && !strings.HasSuffix(b.String(), "_") {
				b.WriteByte('_')
			}
		}
	}
	name := strings.TrimSuffix(b.String(), "_")
	switch {
	case name == "":
		return "arg"
	case name[0] >= '0' && name[0] <= '9':
		name = "flag_" + name
	}
	if len(name) > 64 {
		name = strings.TrimSuffix(name[:64], "_")
	}
	return name
}
