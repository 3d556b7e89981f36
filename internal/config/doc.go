// Package config loads, expands and validates toolfold's config file
// (docs/design.md#config-lookup, #config and #command-line-programs).
//
// A config is JSON (comments and trailing commas allowed) or YAML with the same
// keys; a plain Claude Desktop or Cursor file that has only "mcpServers" is a valid
// config. Use it in three steps:
//
//	path, found, err := config.Find(flagConfig, os.LookupEnv, "")  // where is it?
//	cfg, diags := config.Load(path, config.Options{LookupEnv: os.LookupEnv})
//	for _, p := range diags { fmt.Fprintln(os.Stderr, p) }        // errors and warnings
//	if diags.HasErrors() { os.Exit(1) }                             // cfg is nil then
//	states, more := cfg.ResolveGroupStates(groups, config.Overrides{...}, os.LookupEnv)
//
// Loading never stops at the first problem: every unknown key (with the nearest
// valid one), wrong type, bad enum value, dangling reference and parent cycle is
// reported with its file, line and key path ("mcpServers.github.args[2]"), as a
// Problem whose message says what to change.
//
// The package reads the environment only through the LookupEnv it is given, starts
// nothing and touches no network. Checks that need discovery (a glob that matches
// no tool, a group left empty) belong to the caller, who gets the patterns from
// Config.Globs and formats problems with Config.Problemf so they read the same.
//
// Secrets (env and header values, bearer tokens) are typed SecretMap and Secret,
// which print as "***"; Config.Redacted gives a copy that is safe to log.
package config
