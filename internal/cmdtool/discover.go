package cmdtool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
)

// Discovery bounds. Help is read from the program itself, so a program
// with a huge or recursive command tree must not keep toolfold busy.
const (
	// MaxDiscoverDepth is the deepest subcommand path read ("a b c").
	MaxDiscoverDepth = 3
	// MaxHelpRuns bounds the help invocations of one discovery.
	MaxHelpRuns = 400
	// helpTimeout bounds one help invocation.
	helpTimeout = 5 * time.Second
	// helpMaxOutput caps one help text.
	helpMaxOutput = 512 << 10
	// helpParallelism is how many help invocations run at once.
	helpParallelism = 4
)

// ErrHelpTimedOut is what a HelpRunner's error wraps when a help page did
// not finish in time: discovery then describes the action from its
// parent's listing alone, and reports the page as unread.
var ErrHelpTimedOut = errors.New("a help page timed out")

// A Discovery is what help discovery read of a program.
type Discovery struct {
	Actions []Action
	// Unread names the help invocations that timed out even when tried
	// again ("prog sub --help"): their actions are described from their
	// parent's listing alone. Such a discovery is not the program's last
	// word: a loaded machine may have cost the pages, so it should not
	// be kept for later starts.
	Unread []string
}

// HelpRunner runs the program with the given arguments (not including the
// command itself) and returns what it printed. Discover uses a runner with
// the same protections as Run; tests substitute recorded help texts.
type HelpRunner func(ctx context.Context, args []string) (stdout, stderr string, err error)

// Discover returns the actions a model sees for p: when p.Discover is
// "help", the actions read from the program's own help, trimmed by
// p.Include and p.Exclude; then the declared p.Actions laid over them
// (see MergeActions), sorted by name. Declared actions are always kept:
// the globs trim what discovery found, not what the config spells out.
//
// Help is read with "prog --help", then each subcommand's
// "prog sub --help" (git: "git help -a" and "git sub -h"; when a page
// cannot be read, "prog help sub"), down to MaxDiscoverDepth words and at
// most MaxHelpRuns invocations, each run like Run does (no shell, fixed
// directory, minimal environment) with a short timeout.
func Discover(ctx context.Context, p Program) (Discovery, error) {
	if err := p.Validate(); err != nil {
		return Discovery{}, err
	}
	if p.Discover != DiscoverHelp {
		return Discovery{Actions: MergeActions(nil, p.Actions)}, nil
	}
	if _, err := ResolveCommand(p); err != nil {
		return Discovery{}, err
	}
	return DiscoverWith(ctx, p, helpRunner(p, helpTimeout))
}

// helpRunner runs p's help pages as Run runs actions. A page that times
// out is read once more with twice the time: a busy machine slows a
// program's start, and a page lost to that gives its action a poorer
// definition, which trust would then hold as changed.
func helpRunner(p Program, timeout time.Duration) HelpRunner {
	return func(ctx context.Context, args []string) (string, string, error) {
		argv := append([]string{p.Command}, args...)
		var res *Result
		for _, limit := range []time.Duration{timeout, 2 * timeout} {
			var err error
			if res, err = runArgv(ctx, p, argv, limit, helpMaxOutput); err != nil {
				return "", "", err
			}
			if !res.TimedOut {
				return res.Stdout, res.Stderr, nil
			}
		}
		slog.WarnContext(ctx, "a help page timed out twice; its action is described from its parent's listing", "command", p.Name, "args", args)
		return res.Stdout, res.Stderr, fmt.Errorf("%s %s: %w after %s", p.Command, strings.Join(args, " "), ErrHelpTimedOut, 2*timeout)
	}
}

// DiscoverWith is Discover with the help texts coming from run.
func DiscoverWith(ctx context.Context, p Program, run HelpRunner) (Discovery, error) {
	d := &discoverer{prog: p, known: knownFor(p), run: run}
	discovered, err := d.discover(ctx)
	if err != nil {
		return Discovery{}, err
	}
	discovered = FilterActions(discovered, p.Include, p.Exclude)
	slices.Sort(d.unread)
	return Discovery{Actions: MergeActions(discovered, p.Actions), Unread: d.unread}, nil
}

type discoverer struct {
	prog  Program
	known knownProgram
	run   HelpRunner
	style HelpStyle

	mu      sync.Mutex
	runs    int
	limited bool
	unread  []string // help invocations that timed out, as "prog args"
}

// node is one subcommand path to read help for.
type node struct {
	words  []string
	listed HelpCommand // how its parent listed it
}

func (d *discoverer) discover(ctx context.Context) ([]Action, error) {
	root, err := d.readRoot(ctx)
	if err != nil {
		return nil, err
	}
	d.style = root.Style
	var actions []Action
	level := d.children(nil, root)
	for depth := 1; depth <= MaxDiscoverDepth && len(level) > 0; depth++ {
		pages := make([]*HelpPage, len(level))
		ran := make([]bool, len(level))
		var wg sync.WaitGroup
		sem := make(chan struct{}, helpParallelism)
		for i, n := range level {
			if !d.takeRun() {
				break
			}
			ran[i] = true
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				pages[i] = d.readNode(ctx, n)
			}()
		}
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("discovering the commands of %q: %w", d.prog.Name, err)
		}
		var next []node
		for i, n := range level {
			if !ran[i] {
				continue // over the budget: not read, not guessed
			}
			page := pages[i]
			if page == nil {
				page = fallbackPage(n)
			}
			if !page.NeedsCommand || len(page.Commands) == 0 {
				actions = append(actions, d.actionFrom(n, page))
			}
			if depth < MaxDiscoverDepth {
				next = append(next, d.children(n.words, *page)...)
			}
		}
		level = next
	}
	if d.limited {
		slog.WarnContext(ctx, "command discovery stopped early; use include to narrow it",
			"command", d.prog.Name, "helpRuns", MaxHelpRuns)
	}
	if len(actions) == 0 {
		return nil, fmt.Errorf("no subcommands found in the help of %q (%s --help); declare its actions in \"actions\" instead", d.prog.Name, d.prog.Command)
	}
	return actions, nil
}

func (d *discoverer) takeRun() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.runs >= MaxHelpRuns {
		d.limited = true
		return false
	}
	d.runs++
	return true
}

// readRoot reads the top-level help; for git, the full command list.
func (d *discoverer) readRoot(ctx context.Context) (HelpPage, error) {
	var page *HelpPage
	for _, args := range [][]string{{"--help"}, {"help"}, {"-h"}} {
		d.takeRun()
		if page = d.read(ctx, args); page != nil {
			break
		}
	}
	if page == nil {
		return HelpPage{}, fmt.Errorf("could not read the help of %q: \"%s --help\" printed nothing toolfold understands; declare its actions in \"actions\" instead", d.prog.Name, d.prog.Command)
	}
	if page.Style == StyleGit {
		d.takeRun()
		if all := d.read(ctx, []string{"help", "-a"}); all != nil && len(all.Commands) > 0 {
			all.Style = StyleGit
			return *all, nil
		}
	}
	return *page, nil
}

func (d *discoverer) readNode(ctx context.Context, n node) *HelpPage {
	if d.style == StyleGit && n.listed.Usage != "" {
		// A git subcommand found in its parent's usage ("git remote add")
		// is described by that usage line alone. Running "git bisect
		// start -h" would start a bisection: not every nested git
		// subcommand honours -h.
		return fallbackPage(n)
	}
	var tries [][]string
	if d.style == StyleGit {
		tries = [][]string{append(slices.Clone(n.words), "-h")}
	} else {
		tries = [][]string{append(slices.Clone(n.words), "--help"), append([]string{"help"}, n.words...)}
	}
	var lost []string
	for i, args := range tries {
		if i > 0 && !d.takeRun() {
			break
		}
		page, timedOut := d.readTimed(ctx, args)
		if page != nil {
			return page
		}
		if timedOut {
			lost = append(lost, strings.Join(append([]string{d.prog.Command}, args...), " "))
		}
	}
	if len(lost) > 0 {
		// Lost to time, not absent: the caller describes the action from
		// its listing, and the discovery says it is not complete.
		d.mu.Lock()
		d.unread = append(d.unread, lost...)
		d.mu.Unlock()
	}
	return nil
}

// read runs one help invocation and parses whichever stream holds the help
// (git prints some pages on stderr).
func (d *discoverer) read(ctx context.Context, args []string) *HelpPage {
	page, _ := d.readTimed(ctx, args)
	return page
}

// readTimed is read, also reporting whether the invocation timed out.
func (d *discoverer) readTimed(ctx context.Context, args []string) (*HelpPage, bool) {
	stdout, stderr, err := d.run(ctx, args)
	timedOut := errors.Is(err, ErrHelpTimedOut)
	if err != nil && stdout == "" && stderr == "" {
		slog.DebugContext(ctx, "help invocation failed", "command", d.prog.Name, "args", args, "err", err)
		return nil, timedOut
	}
	var best *HelpPage
	for _, text := range []string{stdout, stderr} {
		page, err := ParseHelp(text)
		if err != nil {
			continue
		}
		if best == nil || helpScore(page) > helpScore(*best) {
			best = &page
		}
	}
	return best, timedOut && best == nil
}

func helpScore(p HelpPage) int { return 2*len(p.Commands) + 2*len(p.Flags) + len(p.Usage) }

// fallbackPage stands in for a page that could not be read: git lists a
// subcommand's usage on its parent's page (git remote add needs a
// repository to print its own help), which is enough for its operands.
func fallbackPage(n node) *HelpPage {
	if n.listed.Usage != "" {
		if page, err := ParseHelp("usage: " + n.listed.Usage); err == nil {
			page.Commands, page.NeedsCommand = nil, false
			return &page
		}
	}
	return &HelpPage{Positionals: []HelpPositional{{Name: "args", Array: true, Optional: true,
		Description: "Arguments for this subcommand (its help could not be read)."}}}
}

// children lists the subcommands of a page to read next.
func (d *discoverer) children(words []string, page HelpPage) []node {
	var out []node
	var usagePrefix []string
	if d.style == StyleGit {
		usagePrefix = gitUsagePrefix(&page)
	}
	for _, c := range page.Commands {
		if c.Category == "usage" && (len(usagePrefix) == 0 || !slices.Equal(usagePrefix[1:], words)) {
			// "git submodule add -h" repeats the usage of all of
			// "git submodule": those are not subcommands of "add".
			continue
		}
		path := append(slices.Clone(words), c.Name)
		name := strings.Join(path, "_")
		switch {
		case len(words) == 0 && !d.known.keepCategory(c.Category),
			len(words) > 0 && c.Name == words[len(words)-1], // git notes list -h repeats "list"
			slices.Contains(hiddenEverywhere, c.Name),
			matchesAny(d.known.hidden, name),
			!actionNamePattern().MatchString(name),
			!d.mayMatchInclude(name):
			continue
		}
		out = append(out, node{words: path, listed: c})
	}
	return out
}

// mayMatchInclude says whether an action, or one nested under it, can
// pass the include globs, so discovery does not read help it will drop.
func (d *discoverer) mayMatchInclude(name string) bool {
	if len(d.prog.Include) == 0 {
		return true
	}
	for _, g := range d.prog.Include {
		glob := normalizeGlob(g)
		if MatchGlob(glob, name) {
			return true
		}
		literal := glob
		if i := strings.IndexAny(glob, `*?[\`); i >= 0 {
			literal = glob[:i]
		}
		prefix := name + "_"
		if strings.HasPrefix(prefix, literal) || strings.HasPrefix(literal, prefix) {
			return true
		}
	}
	return false
}

// actionFrom builds the action of one subcommand from its help page.
func (d *discoverer) actionFrom(n node, page *HelpPage) Action {
	name := strings.Join(n.words, "_")
	a := Action{
		Name:        name,
		Description: n.listed.Description,
		Argv:        slices.Clone(n.words),
		ReadOnly:    matchesAny(d.known.readOnly, name),
		Destructive: matchesAny(d.known.destructive, name),
	}
	if a.Description == "" {
		a.Description = page.Description
	}
	used := map[string]bool{}
	add := func(prm Param, required bool) {
		if used[prm.Name] || prm.validate() != nil {
			return
		}
		used[prm.Name] = true
		a.Params = append(a.Params, prm)
		if required {
			a.Required = append(a.Required, prm.Name)
		}
	}
	for _, f := range page.Flags {
		if d.known.flagDenied(f.Long) {
			continue
		}
		flag, pname := f.Long, ""
		if flag != "" {
			pname = paramNameFrom(flag)
		} else {
			flag = f.Short
			pname = shortParamName(f.Short)
		}
		prm := Param{Name: pname, Type: f.Type, Flag: flag, Description: f.Description}
		if f.Type == TypeString || f.Type == TypeArray {
			prm.Enum = f.Enum
		}
		add(prm, f.Required)
	}
	for _, pos := range page.Positionals {
		prm := Param{Name: pos.Name, Type: TypeString, Positional: true, BeforeSeparator: pos.BeforeSeparator,
			Enum: pos.Enum, Description: pos.Description}
		if pos.Array {
			prm.Type = TypeArray
		}
		if used[prm.Name] {
			prm.Name += "_arg"
		}
		add(prm, !pos.Optional)
	}
	if err := a.Validate(); err != nil {
		// Cannot happen with the checks above; never expose a broken action.
		slog.Warn("discovered action dropped its parameters", "command", d.prog.Name, "action", name, "err", err)
		a.Params, a.Required = nil, nil
	}
	return a
}

// shortParamName names a parameter for a short-only option, keeping case:
// git has both -c and -C.
func shortParamName(short string) string {
	s := strings.TrimPrefix(short, "-")
	if s == "" || !paramNamePattern().MatchString(s) {
		return "flag_" + paramNameFrom(s)
	}
	return s
}
