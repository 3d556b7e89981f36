// Command toolfold serves a large MCP tool surface folded into groups that
// an agent unfolds on demand, and inspects what it would serve.
//
// Run "toolfold help" for the commands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	// A sandboxed server's launch runs in this package's init, before
	// the rest of toolfold is initialised, and becomes the server.
	_ "github.com/toolfold/toolfold/internal/sandbox/launch"
)

// Exit codes (docs/design.md#command-line).
const (
	exitOK     = 0
	exitFailed = 1 // bad config or a failed command
	exitUsage  = 2 // bad usage
)

// env is everything a command may touch from the outside world, so that
// tests can run commands in-process.
type env struct {
	stdin     io.ReadCloser
	stdout    io.WriteCloser
	stderr    io.Writer
	lookupEnv func(string) (string, bool)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, lookupEnv: os.LookupEnv})
	stop()
	os.Exit(code)
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e env, args []string) error
}

func commands() []command {
	return []command{
		{"serve", "serve the folded catalog over stdio, or streamable HTTP with --http", runServe},
		{"demo", "serve the built-in demo catalog (serve's flags; same as serve --demo)", runDemo},
		{"tools", "list every tool with its groups, source and annotations", runTools},
		{"groups", "show the group tree with tool counts, context cost and default state", runGroups},
		{"check", "validate a config and list every problem with its location", runCheck},
		{"call", "call one tool through the gateway and print its result", runCall},
		{"pins", "show pinned definitions, held changes with their diffs and scan findings; 'pins approve SERVER [ITEM...]' re-pins", runPins},
		{"tokens", "compare the context cost of the first tools/list in every mode, and per group", runTokens},
		{"version", "print the version and the MCP protocol versions supported", runVersion},
	}
}

// usageError is bad usage: exit code 2.
type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

func run(ctx context.Context, args []string, e env) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		printUsage(e.stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	name := args[0]
	for _, c := range commands() {
		if c.name != name {
			continue
		}
		err := c.run(ctx, e, args[1:])
		var ue usageError
		switch {
		case err == nil:
			return exitOK
		case errors.Is(err, flag.ErrHelp):
			return exitOK
		case errors.As(err, &ue):
			fmt.Fprintf(e.stderr, "toolfold %s: %s\nRun 'toolfold %s -h' for its flags.\n", name, ue.msg, name)
			return exitUsage
		default:
			fmt.Fprintf(e.stderr, "toolfold %s: %s\n", name, sentence(err.Error()))
			return exitFailed
		}
	}
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	fmt.Fprintf(e.stderr, "toolfold: unknown command %q; the commands are %s. Run 'toolfold help' for more.\n", name, strings.Join(names, ", "))
	return exitUsage
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "toolfold folds many MCP tools into groups that an agent unfolds on demand.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: toolfold <command> [flags]")
	fmt.Fprintln(w)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The catalog comes from --config, $TOOLFOLD_CONFIG or ./toolfold.json (.yaml);")
	fmt.Fprintln(w, "'toolfold demo' (or --demo on any command) uses the built-in demo catalog instead.")
}

// newFlags returns a flag set whose errors come back as usage errors
// rather than exiting the process.
func newFlags(e env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	// Usage writes where the flag set writes: nowhere while parsing (the
	// flag package calls it on every mistake), stderr when asked for help.
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: toolfold %s %s\n\nFlags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses flags, turning mistakes into usage errors: one line, with
// no usage text before it. -h prints the usage once.
func parse(fs *flag.FlagSet, args []string) error {
	out := fs.Output()
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.SetOutput(out)
	if errors.Is(err, flag.ErrHelp) {
		fs.Usage()
		return err
	}
	if err != nil {
		return usageError{err.Error()}
	}
	return nil
}

// parseInterspersed parses flags anywhere among the arguments, so that
// "toolfold call TOOL --mode grouped" works as well as flags first, and
// returns the positional arguments in order. "--" ends the flags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := parse(fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// sentence makes an error message read as one sentence.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "failed."
	}
	if !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, "?") && !strings.HasSuffix(s, "\n") {
		s += "."
	}
	return s
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if p := strings.TrimSpace(part); p != "" {
			out = append(out, p)
		}
	}
	return out
}
