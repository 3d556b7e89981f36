// Package cmdtool turns command-line programs into folded tools and runs
// them safely (docs/design.md#command-line-programs).
//
// A [Program] is one "commands" entry of the config: a command, a fixed
// working directory and environment, limits, and [Action]s (subcommands)
// whose typed [Param]s a model fills in. Actions are declared, discovered
// from the program's own help ([Discover], [ParseHelp]: cobra, click,
// argparse and git styles), or both.
//
// Everything in a Program is trusted configuration; the argument map a
// model sends is hostile. [BuildArgv] turns it into an argv without a
// shell, such that no value can become an option: flag names come only
// from the config and values are joined to them ("--max-count=3"),
// positionals go after "--", and anything that cannot be placed safely is
// refused with a [*ParamError] naming the parameter and the fix. [Run]
// executes that argv in its own process group with a minimal environment
// ([Environ]), a timeout, and capped output, and returns a [Result] that
// renders for a model with [Result.Text].
//
// The package README describes the threat model and the limits.
package cmdtool
