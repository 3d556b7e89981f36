package config

import (
	"fmt"
	"net"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Validate normalizes a decoded config (transports, group defaults) and checks
// everything that can be checked without starting anything. Parse and Load call
// it; call it yourself on a Config built in code. Problems that need discovery (a
// glob that matches no tool, a group that ends up empty) are the caller's: see
// Globs and Problemf.
func (c *Config) Validate() Diagnostics {
	v := &checker{cfg: c}
	v.servers()
	v.commands()
	v.groups()
	v.disclosure()
	v.exposition()
	v.http()
	v.telemetry()
	v.trust()
	v.metaToolCollisions()
	return v.diags
}

// Problemf builds a Problem located at a key path of this config (file and line
// filled in), so problems found after loading, such as a glob matching nothing,
// read like the loader's own.
func (c *Config) Problemf(sev Severity, keyPath, format string, args ...any) Problem {
	return Problem{Severity: sev, File: c.File, Line: c.lineOf(keyPath), Path: keyPath, Message: fmt.Sprintf(format, args...)}
}

// lineOf finds the line of a key path, or of its nearest recorded ancestor.
func (c *Config) lineOf(keyPath string) int {
	for p := keyPath; p != ""; {
		if line, ok := c.positions[p]; ok {
			return line
		}
		cut := strings.LastIndexAny(p, ".[")
		if cut < 0 {
			break
		}
		p = p[:cut]
	}
	return 0
}

type checker struct {
	cfg   *Config
	diags Diagnostics
}

func (v *checker) errorf(keyPath, format string, args ...any) {
	v.diags = append(v.diags, v.cfg.Problemf(SeverityError, keyPath, format, args...))
}

func (v *checker) warnf(keyPath, format string, args ...any) {
	v.diags = append(v.diags, v.cfg.Problemf(SeverityWarning, keyPath, format, args...))
}

// sortedKeys gives map keys in a stable order so problems come out the same way
// every run.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// enum checks value against allowed, naming the nearest and every allowed value.
func (v *checker) enum(keyPath, value, what string, allowed ...string) bool {
	for _, a := range allowed {
		if value == a {
			return true
		}
	}
	v.errorf(keyPath, "%s", withFix(fmt.Sprintf("%q is not %s", value, what), value, allowed, "use "+orList(allowed)))
	return false
}

// withFix joins what is wrong, the nearest candidate if one is close, and the fix:
// `group "gihub" does not exist; did you mean "github"? Define it under ...` or
// `"x" is not a mode; use flat, groups, ...`.
func withFix(wrong, word string, candidates []string, fix string) string {
	if s := didYouMean(word, candidates); s != "" {
		return wrong + s + " " + strings.ToUpper(fix[:1]) + fix[1:] + "."
	}
	return wrong + "; " + fix + "."
}

// orList renders "a, b or c" (unquoted, for enum values that read as words).
func orList(items []string) string {
	if len(items) == 1 {
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// globs checks glob syntax (path.Match's: *, ?, [a-z], \ escapes).
func (v *checker) globs(keyPath string, patterns []string) {
	for i, p := range patterns {
		if p == "" {
			v.errorf(indexPath(keyPath, i), "an empty pattern matches nothing; remove it")
			continue
		}
		if _, err := path.Match(p, ""); err != nil {
			v.errorf(indexPath(keyPath, i), "%q is not a valid glob (unclosed [ or a trailing \\); use * and ? wildcards, [abc] classes, \\ to escape", p)
		}
	}
}

// MatchGlob reports whether name matches a config glob. The gateway and the
// command runner use it so include, exclude and groups.tools mean one thing.
func MatchGlob(pattern, name string) bool {
	ok, err := path.Match(pattern, name)
	return err == nil && ok
}

var wireChars = regexp.MustCompile(`^[A-Za-z0-9_-]*$`)

func (v *checker) servers() {
	c := v.cfg
	prefixOwner := map[string]string{}
	if sb := c.ServerDefaults.Sandbox; sb != nil {
		v.sandboxBlock("serverDefaults.sandbox", sb)
	}
	for _, key := range sortedKeys(c.MCPServers) {
		s := c.MCPServers[key]
		p := joinPath("mcpServers", key)
		v.server(p, key, &s)
		c.MCPServers[key] = s
		v.claimPrefix(p, key, &s, prefixOwner)
	}
	for _, key := range sortedKeys(c.Commands) {
		if other, taken := prefixOwner[key]; taken && !c.Commands[key].Disabled {
			v.errorf(joinPath("commands", key), "the command %q and the server %q both prefix tools with %q, so their names would collide; rename the command or give the server another \"prefix\"", key, other, key)
		}
	}
}

// server checks one entry of mcpServers at p and fills in the start
// timeout it inherits from serverDefaults.
func (v *checker) server(p, key string, s *ServerConfig) {
	if key == "" {
		v.errorf(p, "a server needs a non-empty name; give it a key such as \"github\"")
	}
	switch {
	case s.Command == "" && s.URL == "":
		v.errorf(p, `the server has neither "command" (a program to run over stdio) nor "url" (a remote server); add one`)
	case s.Command != "" && s.URL != "":
		v.errorf(p, `the server has both "command" and "url"; keep "command" for a local program or "url" for a remote server`)
	}
	v.transport(p, s)
	v.launchFields(p, s)
	v.envKeys(joinPath(p, "env"), s.Env)
	v.dir(joinPath(p, "cwd"), s.Cwd)
	if s.Prefix != nil && !wireChars.MatchString(*s.Prefix) {
		v.errorf(joinPath(p, "prefix"), "%q cannot be part of a tool name; use only letters, digits, _ and -", *s.Prefix)
	}
	if s.Group != nil && *s.Group != "" {
		v.groupName(joinPath(p, "group"), *s.Group)
	}
	v.globs(joinPath(p, "include"), s.Include)
	v.globs(joinPath(p, "exclude"), s.Exclude)
	v.idleTimeout(p, s)
	v.sandbox(p, s)
	if s.MaxTools < 0 {
		v.errorf(joinPath(p, "maxTools"), "%d is not a number of tools; leave it out for the default of %d", s.MaxTools, DefaultMaxTools)
	}
	if s.StartTimeout == 0 {
		s.StartTimeout = v.cfg.ServerDefaults.StartTimeout
	}
}

// launchFields checks that the fields for starting a local program and
// those for reaching a remote server are not mixed, and checks the url.
func (v *checker) launchFields(p string, s *ServerConfig) {
	if s.URL != "" {
		for _, k := range []struct {
			key string
			set bool
		}{{"args", len(s.Args) > 0}, {"env", len(s.Env) > 0}, {"envFile", s.EnvFile != ""}, {"cwd", s.Cwd != ""}} {
			if k.set && s.Command == "" {
				v.errorf(joinPath(p, k.key), "%q only applies to servers started with \"command\"; remove it (a remote server at \"url\" runs elsewhere)", k.key)
			}
		}
		v.url(joinPath(p, "url"), s.URL)
	}
	if s.Command != "" && s.URL == "" && len(s.Headers) > 0 {
		v.errorf(joinPath(p, "headers"), `"headers" only apply to remote servers with "url"; for a local program pass secrets in "env"`)
	}
}

// claimPrefix records which server uses the tool-name prefix of s, and
// reports a second enabled server that uses the same one.
func (v *checker) claimPrefix(p, key string, s *ServerConfig, owner map[string]string) {
	prefix := s.EffectivePrefix()
	if prefix == "" || s.Disabled {
		return
	}
	if other, taken := owner[prefix]; taken {
		v.errorf(joinPath(p, "prefix"), "servers %q and %q both use the prefix %q, so their tool names would collide; give one a different \"prefix\"", other, key, prefix)
		return
	}
	owner[prefix] = key
}

// idleTimeout warns about an idle timeout on a remote server, which toolfold
// does not stop, and gives every stdio server the default when it sets none,
// so the value that applies is in the server's own config.
func (v *checker) idleTimeout(p string, s *ServerConfig) {
	if s.Transport != TransportStdio {
		if s.IdleTimeout != nil && *s.IdleTimeout > 0 {
			v.warnf(joinPath(p, "idleTimeout"), `"idleTimeout" only applies to servers started with "command"; a remote server at "url" is not a process toolfold runs, so it is left connected; remove the key`)
		}
		return
	}
	if s.IdleTimeout == nil {
		d := v.cfg.ServerDefaults.IdleTimeout
		s.IdleTimeout = &d
	}
}

// transport validates and normalizes transport (or Cursor's "type") to one of
// stdio, http, sse.
func (v *checker) transport(p string, s *ServerConfig) {
	raw := string(s.Transport)
	var t Transport
	switch strings.ToLower(raw) {
	case "":
	case "stdio":
		t = TransportStdio
	case "http", "streamable-http", "streamablehttp", "streamable_http":
		t = TransportHTTP
	case "sse":
		t = TransportSSE
	default:
		v.enum(joinPath(p, "transport"), raw, "a transport", "http", "sse", "stdio")
		return
	}
	switch {
	case t == "" && s.URL != "":
		t = TransportHTTP
		// An SSE server answers a streamable HTTP client with an HTML
		// 404 that names no cause; the URL's usual ending does.
		if u, err := url.Parse(s.URL); err == nil && strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/sse") {
			v.warnf(joinPath(p, "url"), `the URL ends in /sse, and without a "type" toolfold speaks streamable HTTP to it; if this is an SSE server, set "type": "sse"`)
		}
	case t == "":
		t = TransportStdio
	case t == TransportStdio && s.URL != "" && s.Command == "":
		v.errorf(joinPath(p, "transport"), `"stdio" needs a "command"; a server with "url" uses "http" or "sse"`)
	case t != TransportStdio && s.Command != "" && s.URL == "":
		v.errorf(joinPath(p, "transport"), `%q needs a "url"; a server started with "command" speaks stdio, so remove the transport`, raw)
	}
	s.Transport = t
}

func (v *checker) url(p, raw string) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v.errorf(p, "%q is not an http:// or https:// URL; write the full address, such as \"https://example.com/mcp\"", redactURL(raw))
	}
}

func (v *checker) envKeys(p string, env SecretMap) {
	for _, k := range sortedKeys(env) {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			v.errorf(joinPath(p, k), "%q cannot be an environment variable name; use letters, digits and _", k)
		}
	}
}

func (v *checker) dir(p, dir string) {
	if strings.HasPrefix(dir, "~") {
		v.errorf(p, "%q: ~ is not expanded; write ${HOME}%s instead", dir, strings.TrimPrefix(dir, "~"))
	}
}

// groupName checks a name can be a group: wire characters plus dots, the dots
// separating non-empty parts. Any length will do: a name longer than the 64
// characters of the wire is shortened there with a stable hash suffix (docs/design.md#expositions).
func (v *checker) groupName(p, name string) bool {
	switch {
	case !groupNamePattern.MatchString(name):
		v.errorf(p, "%q cannot be a group name; use only letters, digits, _, - and . (for nesting)", name)
	case strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") || strings.Contains(name, ".."):
		v.errorf(p, "%q has an empty part between dots; dots separate a parent from a child, as in \"code.repos\"", name)
	default:
		return true
	}
	return false
}

func (v *checker) commands() {
	c := v.cfg
	for _, key := range sortedKeys(c.Commands) {
		cmd := c.Commands[key]
		p := joinPath("commands", key)
		if !wireNamePattern.MatchString(key) {
			v.errorf(p, "%q cannot name a command's group and prefix its tools; use only letters, digits, _ and - (at most 64)", key)
		}
		if cmd.Command == "" {
			v.errorf(p, `the entry has no "command"; name the program to run, such as "git"`)
		}
		if cmd.Discover != DiscoverNone && cmd.Discover != DiscoverHelp {
			v.enum(joinPath(p, "discover"), string(cmd.Discover), "a discovery method", "help")
		}
		if cmd.Discover == DiscoverNone && len(cmd.Actions) == 0 {
			v.errorf(p, `the command has no actions; declare some under "actions", or add "discover": "help" to read them from the program's help`)
		}
		v.envKeys(joinPath(p, "env"), cmd.Env)
		v.dir(joinPath(p, "cwd"), cmd.Cwd)
		v.globs(joinPath(p, "include"), cmd.Include)
		v.globs(joinPath(p, "exclude"), cmd.Exclude)
		for _, name := range sortedKeys(cmd.Actions) {
			v.action(joinPath(joinPath(p, "actions"), name), cmd.Actions[name])
		}
	}
}

var paramTypes = []string{"string", "integer", "number", "boolean", "enum", "array"}

func (v *checker) action(p string, a ActionConfig) {
	if !wireNamePattern.MatchString(a.Name) {
		v.errorf(p, "%q cannot be an action name; use only letters, digits, _ and -", a.Name)
	}
	if a.ReadOnly && a.Destructive {
		v.errorf(p, `an action cannot be both "readOnly" and "destructive"; keep the one that is true`)
	}
	declared := map[string]bool{}
	for i := range a.Params {
		param := &a.Params[i]
		declared[param.Name] = true
		v.param(joinPath(joinPath(p, "params"), param.Name), param)
	}
	for i, r := range a.Required {
		if !declared[r] {
			names := make([]string, len(a.Params))
			for j, prm := range a.Params {
				names[j] = prm.Name
			}
			v.errorf(indexPath(joinPath(p, "required"), i), "%s", withFix(fmt.Sprintf("%q is not a parameter of this action", r), r, names, `declare it under "params" or fix the name`))
		}
	}
}

// param checks one parameter and fills in its implied type.
func (v *checker) param(p string, prm *Param) {
	if !wireNamePattern.MatchString(prm.Name) {
		v.errorf(p, "%q cannot be a parameter name; use only letters, digits, _ and -", prm.Name)
	}
	if prm.Type == "" {
		prm.Type = ParamString
		if len(prm.Enum) > 0 {
			prm.Type = ParamEnum
		}
	}
	if !v.enum(joinPath(p, "type"), string(prm.Type), "a parameter type", paramTypes...) {
		return
	}
	switch {
	case prm.Type == ParamEnum && len(prm.Enum) == 0:
		v.errorf(p, `an enum parameter needs its values in "enum", such as ["json", "text"]`)
	case len(prm.Enum) > 0 && prm.Type != ParamEnum && prm.Type != ParamString:
		v.errorf(joinPath(p, "enum"), `"enum" only applies to string and enum parameters; remove it or change "type"`)
	}
	v.paramItems(p, prm)
	v.paramPlacement(p, prm)
	if prm.Pattern != "" {
		if _, err := regexp.Compile(prm.Pattern); err != nil {
			v.errorf(joinPath(p, "pattern"), "%q is not a valid regular expression: %v", prm.Pattern, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		}
	}
}

// paramItems checks "items", which only arrays of strings may have.
func (v *checker) paramItems(p string, prm *Param) {
	switch {
	case prm.Type != ParamArray && prm.Items != nil:
		v.errorf(joinPath(p, "items"), `"items" only applies to "type": "array"; remove it`)
	case prm.Type == ParamArray && prm.Items != nil && prm.Items.Type != ParamString:
		v.errorf(joinPath(joinPath(p, "items"), "type"), `only arrays of strings are supported; write "items": {"type": "string"}`)
	}
}

// paramPlacement checks that the parameter has exactly one place in the
// command line: a well-formed flag, or a position.
func (v *checker) paramPlacement(p string, prm *Param) {
	switch {
	case prm.Flag != "" && prm.Positional:
		v.errorf(p, `a parameter is either a "flag" or "positional", not both; remove one`)
	case prm.Flag == "" && !prm.Positional:
		v.errorf(p, `the parameter has neither "flag" nor "positional": true, so it cannot be placed in the command line; add one, such as "flag": "--%s"`, strings.ReplaceAll(prm.Name, "_", "-"))
	case prm.Flag != "" && !isOptionName(prm.Flag):
		v.errorf(joinPath(p, "flag"), "%q is not an option name; write it with its dashes and without a value, such as \"--max-count\"", prm.Flag)
	case prm.Positional && prm.Type == ParamBoolean:
		v.errorf(joinPath(p, "positional"), `a boolean cannot be positional (true and false are not arguments); give it a "flag" instead`)
	}
}

// isOptionName reports whether flag is an option name with its dashes and
// without a value, such as "--max-count" or "-n".
func isOptionName(flag string) bool {
	return strings.HasPrefix(flag, "-") && !strings.ContainsAny(flag, "= \t") && strings.Trim(flag, "-") != ""
}

var groupStates = []string{string(GroupAvailable), string(GroupEnabled), string(GroupExcluded)}
var expositions = []string{string(ExposeFlat), string(ExposeGrouped)}

func (v *checker) groups() {
	c := v.cfg
	known := c.staticGroups()
	knownList := c.GroupNames()
	for _, name := range sortedKeys(c.Groups) {
		g := c.Groups[name]
		p := joinPath("groups", name)
		if v.groupName(p, name) {
			v.groupParent(p, name, g.Parent, known, knownList)
		}
		if g.Default == "" {
			g.Default = GroupAvailable
		} else {
			v.enum(joinPath(p, "default"), string(g.Default), "a group state", groupStates...)
		}
		if g.Exposition == "" {
			g.Exposition = c.Exposition.Default
		} else {
			v.enum(joinPath(p, "exposition"), string(g.Exposition), "an exposition", expositions...)
		}
		v.globs(joinPath(p, "tools"), g.Tools)
		v.groupMerge(p, name, g.Merge, known)
		v.groupMembers(p, &g)
		c.Groups[name] = g
	}
	v.parentCycles()
	v.switchCollisions(knownList)
}

// groupParent checks the parent of the group name: the one "parent" names
// and the one its dotted name implies must agree and exist.
func (v *checker) groupParent(p, name, parent string, known map[string]bool, knownList []string) {
	implied := impliedParent(name)
	switch {
	case parent == name:
		v.errorf(joinPath(p, "parent"), "a group cannot be its own parent; remove \"parent\" or name another group")
	case parent != "" && implied != "" && parent != implied:
		v.errorf(joinPath(p, "parent"), "the name %q already makes %q its parent, but \"parent\" says %q; drop \"parent\" or rename the group", name, implied, parent)
	case parent != "" && !known[parent]:
		v.errorf(joinPath(p, "parent"), "%s", missingGroup(fmt.Sprintf("group %q does not exist", parent), parent, knownList))
	case parent == "" && implied != "" && !known[implied]:
		v.errorf(p, "the name %q makes %q its parent, which does not exist; define %q under \"groups\", or name the group without a dot", name, implied, implied)
	}
}

// groupMerge checks that the group name merges only derived groups.
func (v *checker) groupMerge(p, name string, merge []string, known map[string]bool) {
	for i, m := range merge {
		mp := indexPath(joinPath(p, "merge"), i)
		switch {
		case m == name:
			v.errorf(mp, "a group cannot merge itself; name the derived groups it takes over")
		case known[m]:
			v.errorf(mp, "%q is a declared group, not a derived one; merge names groups toolfold derived ('toolfold groups' marks them), so edit %q itself instead", m, m)
		case impliedParent(m) == "" || !groupNamePattern.MatchString(m):
			v.errorf(mp, "%q cannot be a derived group: derived groups are named <group>.<name>, such as \"github.issue\"; 'toolfold groups' lists them", m)
		}
	}
}

// groupMembers checks the prefixes, servers and tags that pick the
// group's tools.
func (v *checker) groupMembers(p string, g *GroupConfig) {
	for i, pre := range g.Prefixes {
		if pre == "" {
			v.errorf(indexPath(joinPath(p, "prefixes"), i), `an empty prefix would match every tool; remove it, or use "tools": ["*"]`)
		}
	}
	serverKeys := sortedKeys(v.cfg.MCPServers)
	for i, s := range g.Servers {
		if _, ok := v.cfg.MCPServers[s]; !ok {
			v.errorf(indexPath(joinPath(p, "servers"), i), "%s", withFix(fmt.Sprintf("server %q does not exist", s), s, serverKeys, `define it under "mcpServers" or fix the name`))
		}
	}
	for i, t := range g.Tags {
		if t == "" {
			v.errorf(indexPath(joinPath(p, "tags"), i), "an empty tag matches nothing; remove it")
		}
	}
}

// parentCycles reports each cycle in parent links once, naming every group in it.
func (v *checker) parentCycles() {
	c := v.cfg
	reported := map[string]bool{}
	for name, g := range c.Groups {
		if g.Parent == name {
			reported[name] = true // "its own parent" is already said
		}
	}
	for _, start := range sortedKeys(c.Groups) {
		var chain []string
		onChain := map[string]int{}
		for g := start; g != "" && !reported[g]; g = c.Groups[g].Parent {
			if at, seen := onChain[g]; seen {
				cycle := append(append([]string(nil), chain[at:]...), g)
				for _, member := range cycle {
					reported[member] = true
				}
				v.errorf(joinPath(joinPath("groups", g), "parent"), "groups form a cycle through their parents: %s; remove one of these \"parent\" links", strings.Join(cycle, " → "))
				break
			}
			if _, declared := c.Groups[g]; !declared {
				break
			}
			onChain[g] = len(chain)
			chain = append(chain, g)
		}
	}
}

// switchCollisions warns when two groups share one MCP_GROUP_ variable, since
// setting it switches both.
func (v *checker) switchCollisions(names []string) {
	byVar := map[string][]string{}
	for _, n := range names {
		byVar[GroupEnvVar(n)] = append(byVar[GroupEnvVar(n)], n)
	}
	for _, key := range sortedKeys(byVar) {
		if groups := byVar[key]; len(groups) > 1 {
			v.warnf(joinPath("groups", groups[1]), "groups %s share the switch %s, so setting it switches all of them; rename one if they need separate switches", quoteList(groups), key)
		}
	}
}

var modes = []string{string(ModeFlat), string(ModeGroups), string(ModeGrouped), string(ModeSearch), string(ModeAuto)}

func (v *checker) disclosure() {
	c := v.cfg
	d := &c.Disclosure
	v.enum("disclosure.mode", string(d.Mode), "a mode", modes...)
	v.enum("disclosure.ungrouped", string(d.Ungrouped), "an ungrouped policy", string(UngroupedVisible), string(UngroupedHidden))
	if d.MaxTools < 0 {
		v.errorf("disclosure.maxTools", "%d is negative; use 0 for no limit or a positive number of tools", d.MaxTools)
	}
	if d.AutoGroups.Size < 2 || d.AutoGroups.Size > 100 {
		v.errorf("disclosure.autoGroups.size", "%d is not a usable group size; use 2 to 100 tools (default %d), or \"enabled\": false to keep groups whole", d.AutoGroups.Size, DefaultAutoGroupSize)
	}
	v.groupRefs("disclosure.initialGroups", d.InitialGroups)
	v.globs("disclosure.refreshingClients", d.RefreshingClients)
	v.globs("disclosure.searchingClients", d.SearchingClients)
	owner := map[string]string{}
	m := d.MetaTools
	for _, mt := range []struct{ key, name string }{
		{"enable_tools", m.EnableTools}, {"disable_tools", m.DisableTools}, {"reset_tools", m.ResetTools},
		{"find_tools", m.FindTools}, {"describe_tools", m.DescribeTools}, {"call_tool", m.CallTool}, {"guidance", m.Guidance},
	} {
		p := joinPath("disclosure.metaTools", mt.key)
		if !wireNamePattern.MatchString(mt.name) {
			v.errorf(p, "%q cannot be a tool name; use 1 to 64 letters, digits, _ and -", mt.name)
			continue
		}
		if other, dup := owner[mt.name]; dup {
			v.errorf(p, "%s and %s are both named %q; give each meta-tool its own name", other, mt.key, mt.name)
		}
		owner[mt.name] = mt.key
	}
}

// missingGroup words a missing group (what is wrong about name) with the
// nearest known one.
func missingGroup(wrong, name string, known []string) string {
	return withFix(wrong, name, known, `define it under "groups" or fix the name`)
}

// metaToolCollisions refuses a top-level group named like a meta-tool: in grouped
// exposition or grouped mode the group becomes a wire tool of that name.
func (v *checker) metaToolCollisions() {
	m := v.cfg.Disclosure.MetaTools
	meta := map[string]string{}
	for key, name := range map[string]string{"enable_tools": m.EnableTools, "disable_tools": m.DisableTools, "reset_tools": m.ResetTools,
		"find_tools": m.FindTools, "describe_tools": m.DescribeTools, "call_tool": m.CallTool, "guidance": m.Guidance} {
		meta[name] = key
	}
	for _, g := range v.cfg.GroupNames() {
		if key, clash := meta[g]; clash && impliedParent(g) == "" {
			v.errorf(joinPath("groups", g), "the group %q has the name of the meta-tool %s, and a grouped group is a tool of its own name; rename the group, or rename the meta-tool under disclosure.metaTools", g, key)
		}
	}
}

// groupRefs checks that each name refers to a group the config knows, or
// to one discovery may bring under a known group (a derived group, a group
// an upstream declares), which is checked once the catalog is built.
func (v *checker) groupRefs(p string, names []string) {
	known := v.cfg.staticGroups()
	for i, n := range names {
		if !known[n] && !v.cfg.MayDiscover(n) {
			v.errorf(indexPath(p, i), "%s", v.cfg.missingGroupRef(n))
		}
	}
}

func (v *checker) exposition() {
	e := v.cfg.Exposition
	v.enum("exposition.default", string(e.Default), "an exposition", expositions...)
	if e.Separator == "" || !wireChars.MatchString(e.Separator) {
		v.errorf("exposition.separator", "%q cannot join names on the wire; use one or more of letters, digits, _ and -, such as \"__\"", e.Separator)
	}
}

// OTLPProtocols are the telemetry.protocol values.
var OTLPProtocols = []string{"http/protobuf", "grpc"}

func (v *checker) telemetry() {
	t := v.cfg.Telemetry
	if t.Protocol != "" {
		v.enum("telemetry.protocol", t.Protocol, "an OTLP protocol toolfold exports with", OTLPProtocols...)
	}
	if t.Endpoint != "" && !isServerURL(t.Endpoint) {
		v.errorf("telemetry.endpoint", "%q is not an http(s) URL with a host; write the collector's OTLP address like \"http://127.0.0.1:4318\" (or :4317 for grpc)", redactURL(t.Endpoint))
	}
	if !t.Tracing && (t.Endpoint != "" || t.Protocol != "" || t.RecordArguments) {
		v.warnf("telemetry", "telemetry.tracing is off, so the other telemetry keys do nothing; set \"tracing\": true to export traces")
	}
}

func (v *checker) trust() {
	t := v.cfg.Trust
	for _, k := range []struct {
		path, value string
		allowed     []string
	}{
		{"trust.onChange", t.OnChange, []string{"hold", "warn", "accept"}},
		{"trust.onNew", t.OnNew, []string{"hold", "accept"}},
		{"trust.newServers", t.NewServers, []string{"accept", "hold"}},
		{"trust.onFinding", t.OnFinding, []string{"warn", "hold"}},
	} {
		if k.value != "" {
			v.enum(k.path, k.value, "a trust policy", k.allowed...)
		}
	}
}

func (v *checker) http() {
	h := v.cfg.HTTP
	if h.Listen != "" {
		v.httpListen(h)
	}
	if h.MaxSessions < 1 {
		v.errorf("http.maxSessions", "%d cannot cap the sessions; use at least 1 (the default is %d), or remove the key", h.MaxSessions, DefaultMaxSessions)
	}
	v.authTokens(h.Auth.Tokens)
	if h.Auth.OAuth != nil {
		v.oauth(h.Auth.OAuth)
	}
	v.allowedOrigins(h.AllowedOrigins)
}

// httpListen checks the listen address, and warns when it is open to other
// machines without authentication.
func (v *checker) httpListen(h HTTPConfig) {
	host, port, err := net.SplitHostPort(h.Listen)
	n, perr := strconv.Atoi(port)
	switch {
	case err != nil || perr != nil || n < 0 || n > 65535:
		v.errorf("http.listen", "%q is not host:port; write it like \"127.0.0.1:8080\"", h.Listen)
	case !h.Auth.Enabled() && !isLoopback(host) && !h.AllowUnauthenticated:
		v.warnf("http.listen", "%q accepts connections from other machines and http.auth has neither tokens nor oauth, so toolfold serve refuses it: anyone who can reach it could call every tool; bind to 127.0.0.1, add tokens under http.auth.tokens or your identity provider under http.auth.oauth, or set http.allowUnauthenticated to true if the network is trusted", h.Listen)
	}
}

// authTokens checks that every bearer token is set, listed once, and
// grants groups that exist.
func (v *checker) authTokens(tokens []TokenConfig) {
	seen := map[Secret]int{}
	for i, t := range tokens {
		p := indexPath("http.auth.tokens", i)
		if strings.TrimSpace(string(t.Token)) == "" {
			v.errorf(joinPath(p, "token"), `the token is empty, which would let anyone in; set it, usually to "${SOME_VARIABLE}" holding a long random value`)
		} else if first, dup := seen[t.Token]; dup {
			v.errorf(joinPath(p, "token"), "the same token is listed twice (also at http.auth.tokens[%d]); keep one entry per token", first)
		} else {
			seen[t.Token] = i
		}
		v.groupRefs(joinPath(p, "groups"), t.Groups)
	}
}

// allowedOrigins checks that each entry is an origin, and warns about "*".
func (v *checker) allowedOrigins(origins []string) {
	for i, o := range origins {
		p := indexPath("http.allowedOrigins", i)
		if o == "*" {
			v.warnf(p, `"*" accepts every Origin and turns off DNS-rebinding protection; list the origins you use instead`)
			continue
		}
		u, err := url.Parse(o)
		if err != nil || u.Scheme == "" || u.Host == "" || (u.Path != "" && u.Path != "/") {
			v.errorf(p, "%q is not an origin; write scheme and host (and port if any), such as \"https://app.example.com\"", o)
		}
	}
}

const oauthPath = "http.auth.oauth"

func (v *checker) oauth(o *OAuthConfig) {
	if o.Resource == "" {
		v.errorf(joinPath(oauthPath, "resource"), `the resource is missing: set it to toolfold's MCP URL as clients reach it, such as "https://tools.example.com/mcp"; tokens must name it as their audience`)
	} else if !isServerURL(o.Resource) {
		v.errorf(joinPath(oauthPath, "resource"), "%q is not an http(s) URL with a host and no fragment; write it like \"https://tools.example.com/mcp\"", o.Resource)
	}
	if len(o.Issuers) == 0 {
		v.errorf(joinPath(oauthPath, "issuers"), `no issuer is listed: name your identity provider's issuer URL, such as ["https://login.example.com"]`)
	}
	for i, iss := range o.Issuers {
		if !isServerURL(iss) {
			v.errorf(indexPath(joinPath(oauthPath, "issuers"), i), "%q is not an http(s) URL with a host; write the issuer exactly as the provider's metadata names it, such as \"https://login.example.com\"", iss)
		}
	}
	for i, sc := range o.Scopes {
		if !isScope(sc) {
			v.errorf(indexPath(joinPath(oauthPath, "scopes"), i), "%q is not a scope: a scope is printable ASCII without spaces, quotes or backslashes (RFC 6749 §3.3), such as \"tools:read\"", sc)
		}
	}
	if o.Introspection != nil {
		v.introspection(o.Introspection, len(o.Issuers))
	}
	v.oauthRules(o.Rules)
}

// isScope reports whether sc is an OAuth scope token: printable ASCII
// without spaces, quotes or backslashes.
func isScope(sc string) bool {
	return sc != "" && !strings.ContainsAny(sc, " \"\\") && strings.IndexFunc(sc, func(r rune) bool { return r < 0x21 || r > 0x7e }) < 0
}

// introspection checks the endpoint and credentials for opaque tokens;
// the endpoint may only be left out when one issuer is listed.
func (v *checker) introspection(in *IntrospectionConfig, issuers int) {
	p := joinPath(oauthPath, "introspection")
	if in.Endpoint == "" && issuers > 1 {
		v.errorf(joinPath(p, "endpoint"), "the endpoint is missing and %d issuers are listed, so toolfold cannot tell whose to use; set it", issuers)
	} else if in.Endpoint != "" && !isServerURL(in.Endpoint) {
		v.errorf(joinPath(p, "endpoint"), "%q is not an http(s) URL with a host", in.Endpoint)
	}
	if in.ClientID == "" || strings.TrimSpace(string(in.ClientSecret)) == "" {
		v.errorf(p, `introspection needs clientId and clientSecret (toolfold's own credentials at the provider), usually "${VARIABLES}"; check that they are set`)
	}
}

// oauthRules checks that there are rules, and that each matches on some
// claim and grants groups that exist or may be discovered.
func (v *checker) oauthRules(rules []OAuthRule) {
	if len(rules) == 0 {
		v.errorf(joinPath(oauthPath, "rules"), `no rule grants anything, so every token would be refused; add rules such as {"group": "engineering", "groups": ["code"]}`)
	}
	for i, r := range rules {
		p := indexPath(joinPath(oauthPath, "rules"), i)
		if r.Group == "" && r.Scope == "" && r.Sub == "" {
			v.errorf(p, "the rule matches nothing in particular: set group, scope or sub (all set ones must match)")
		}
		if len(r.Groups) == 0 {
			v.errorf(joinPath(p, "groups"), `the rule grants no group; list the groups it grants, or "*" for every group`)
		}
		known := v.cfg.staticGroups()
		for j, g := range r.Groups {
			if g != "*" && !known[g] && !v.cfg.MayDiscover(g) {
				v.errorf(indexPath(joinPath(p, "groups"), j), "%s", v.cfg.missingGroupRef(g))
			}
		}
	}
}

// isServerURL reports an absolute http(s) URL with a host and no fragment.
func isServerURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && u.Fragment == ""
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Glob is one pattern of the config together with where it is, so the caller can
// warn about globs that match nothing after discovery (docs/design.md#config) with
// Config.Problemf(SeverityWarning, g.Path, ...).
type Glob struct {
	// Path is the key path of the pattern, such as "groups.issues.tools[0]".
	Path string
	// Pattern is the glob (or, for groups.*.prefixes, the prefix followed by "*").
	Pattern string
	// Owner is the server key, command key or group name the pattern belongs to.
	Owner string
	// Over says what the pattern is matched against: "server tools" (a server's own
	// tool names), "command actions" or "namespaced tools" (groups.tools and
	// prefixes).
	Over string
}

// Globs lists every include, exclude, groups.tools and groups.prefixes pattern, in
// a stable order. Only the caller knows, after discovery, which match nothing.
func (c *Config) Globs() []Glob {
	var out []Glob
	add := func(base, owner, over string, patterns []string, suffix string) {
		for i, p := range patterns {
			out = append(out, Glob{Path: indexPath(base, i), Pattern: p + suffix, Owner: owner, Over: over})
		}
	}
	for _, k := range sortedKeys(c.MCPServers) {
		s := c.MCPServers[k]
		add(joinPath(joinPath("mcpServers", k), "include"), k, "server tools", s.Include, "")
		add(joinPath(joinPath("mcpServers", k), "exclude"), k, "server tools", s.Exclude, "")
	}
	for _, k := range sortedKeys(c.Commands) {
		cmd := c.Commands[k]
		add(joinPath(joinPath("commands", k), "include"), k, "command actions", cmd.Include, "")
		add(joinPath(joinPath("commands", k), "exclude"), k, "command actions", cmd.Exclude, "")
	}
	for _, k := range sortedKeys(c.Groups) {
		g := c.Groups[k]
		add(joinPath(joinPath("groups", k), "tools"), k, "namespaced tools", g.Tools, "")
		add(joinPath(joinPath("groups", k), "prefixes"), k, "namespaced tools", escapeGlob(g.Prefixes), "*")
	}
	return out
}

// escapeGlob makes literal prefixes safe to turn into globs.
func escapeGlob(prefixes []string) []string {
	out := make([]string, len(prefixes))
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`)
	for i, p := range prefixes {
		out[i] = r.Replace(p)
	}
	return out
}
