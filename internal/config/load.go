package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
)

// Options are the loader's inputs besides the file itself. The zero value is valid
// and sees no environment variables.
type Options struct {
	// LookupEnv resolves ${VAR} references; pass os.LookupEnv in production.
	LookupEnv LookupEnv
	// ReadFile reads a server's envFile; nil means os.ReadFile.
	ReadFile func(path string) ([]byte, error)
	// Self is the running toolfold's executable (os.Executable). When set, a
	// server that would run it on this same config is an error: each
	// toolfold would start another without end. Empty skips the check.
	Self string
	// Depth is how many toolfolds run above this one (see DepthEnvVar); at
	// MaxDepth every stdio server is an error.
	Depth int
}

// Load reads, expands and validates the config file at path. The returned config is
// nil exactly when the diagnostics hold an error; warnings may come with a config.
// A file that cannot be read is reported as a problem too, so the caller has one
// path for everything that went wrong.
func Load(path string, opts Options) (*Config, Diagnostics) {
	data, err := os.ReadFile(path)
	if err != nil {
		msg := fmt.Sprintf("cannot read the config file: %v; check the path given with --config or $TOOLFOLD_CONFIG", err)
		if os.IsNotExist(err) {
			msg = "the config file does not exist; check the path given with --config or $TOOLFOLD_CONFIG"
		}
		return nil, Diagnostics{{Severity: SeverityError, File: path, Message: msg}}
	}
	return Parse(path, data, opts)
}

// Parse is Load for bytes already read. filename names the file in problems, picks
// the format (.json/.jsonc → JSON with comments, .yaml/.yml → YAML, else sniffed)
// and anchors relative cwd paths.
func Parse(filename string, data []byte, opts Options) (*Config, Diagnostics) {
	var root *node
	var err error
	if isJSON(filename, data) {
		root, err = parseJSONC(data)
	} else {
		root, err = parseYAML(data)
	}
	if err != nil {
		line, msg := 0, err.Error()
		if se, ok := err.(*syntaxError); ok {
			line = se.line
		}
		return nil, Diagnostics{{Severity: SeverityError, File: filename, Line: line, Message: msg}}
	}

	cfg := newDefaultConfig()
	cfg.File = filename
	d := &decoder{file: filename, lookup: opts.LookupEnv, positions: map[string]int{}}
	switch root.kind {
	case kindNull: // an empty file is an empty config
	case kindObject:
		d.decode(root, "", reflect.ValueOf(cfg).Elem())
	default:
		d.errorf(root, "", `the config must be an object with an "mcpServers" key, got %s`, root.kind.describe())
	}
	cfg.positions = d.positions
	d.recordExpansions(cfg)
	d.downgradeUnsetInDisabled(cfg)
	resolveRelativeDirs(cfg, filename)
	d.readEnvFiles(cfg, opts.ReadFile)

	diags := append(d.diags, withoutFollowUps(cfg.Validate(), d.diags, d.leftOut)...)
	diags = append(diags, cfg.checkNesting(opts)...)
	if !diags.HasErrors() && len(cfg.MCPServers) == 0 && len(cfg.Commands) == 0 {
		diags = append(diags, cfg.Problemf(SeverityWarning, "", `the config defines no "mcpServers" and no "commands", so there are no tools to serve; add a server under "mcpServers"`))
	}
	diags.sortByLocation()
	if diags.HasErrors() {
		return nil, diags
	}
	return cfg, diags
}

// downgradeUnsetInDisabled turns "variable not set" errors inside disabled servers
// and commands into warnings: a disabled entry is kept for later, and its secrets
// are often deliberately absent until then. Inside a server marked optional the
// error is a warning too, and the server is left out (disabled); inside any other
// server the error says how to mark it optional.
func (d *decoder) downgradeUnsetInDisabled(cfg *Config) {
	var disabled []string
	for key, s := range cfg.MCPServers {
		if s.Disabled {
			disabled = append(disabled, joinPath("mcpServers", key))
		}
	}
	for key, c := range cfg.Commands {
		if c.Disabled {
			disabled = append(disabled, joinPath("commands", key))
		}
	}
	// An optional server is left out once, however many of its values
	// name unset variables: the same variable twice is one fact.
	told := map[string]map[string]bool{} // left-out server → messages told
	drop := map[int]bool{}
	for _, i := range d.unsetRefs {
		settled := false
		for _, prefix := range disabled {
			if within(d.diags[i].Path, prefix) {
				d.diags[i].Severity = SeverityWarning
				d.diags[i].Message += " (the entry is disabled, so this only matters once it is enabled)"
				settled = true
			}
		}
		if settled {
			continue
		}
		for key, s := range cfg.MCPServers {
			if !within(d.diags[i].Path, joinPath("mcpServers", key)) {
				continue
			}
			if !s.Optional {
				d.diags[i].Message += `; or mark the server "optional": true to serve the rest without it`
				continue
			}
			// Left out, as if disabled: the rest serves.
			d.diags[i].Severity = SeverityWarning
			seen, again := told[key]
			if !again {
				seen = map[string]bool{}
				told[key] = seen
			}
			if seen[d.diags[i].Message] {
				drop[i] = true
				continue
			}
			seen[d.diags[i].Message] = true
			if !again {
				d.diags[i].Message += fmt.Sprintf("; server %q is optional, so it is left out", key)
			}
			d.leftOut = append(d.leftOut, d.diags[i].Path)
			s.Disabled = true
			cfg.MCPServers[key] = s
		}
	}
	if len(drop) > 0 {
		kept := d.diags[:0]
		for i, p := range d.diags {
			if !drop[i] {
				kept = append(kept, p)
			}
		}
		d.diags = kept
		d.unsetRefs = nil // the indexes no longer hold
	}
	for key := range told {
		d.leftOut = append(d.leftOut, joinPath("mcpServers", key))
	}
}

// within reports whether the key path p is prefix or inside it.
func within(p, prefix string) bool {
	return p == prefix || strings.HasPrefix(p, prefix+".") || strings.HasPrefix(p, prefix+"[")
}

// recordExpansions gives each server and command the variables its entry read, so
// their values can be masked in what is printed about it.
func (d *decoder) recordExpansions(cfg *Config) {
	for key, s := range cfg.MCPServers {
		prefix := joinPath("mcpServers", key)
		for _, e := range d.expansions {
			if !within(e.path, prefix) {
				continue
			}
			if s.Expanded == nil {
				s.Expanded = SecretMap{}
			}
			s.Expanded[e.name] = e.value
		}
		cfg.MCPServers[key] = s
	}
	for key, c := range cfg.Commands {
		prefix := joinPath("commands", key)
		for _, e := range d.expansions {
			if !within(e.path, prefix) {
				continue
			}
			if c.Expanded == nil {
				c.Expanded = SecretMap{}
			}
			c.Expanded[e.name] = e.value
		}
		cfg.Commands[key] = c
	}
}

// resolveRelativeDirs anchors relative cwd values at the config file's directory,
// so a config means the same thing whichever directory toolfold is started from.
func resolveRelativeDirs(cfg *Config, filename string) {
	if filename == "" {
		return
	}
	base := filepath.Dir(filename)
	anchor := func(dir string) string {
		if dir == "" || filepath.IsAbs(dir) || strings.HasPrefix(dir, "~") {
			return dir
		}
		return filepath.Join(base, dir)
	}
	for key, s := range cfg.MCPServers {
		s.Cwd = anchor(s.Cwd)
		s.EnvFile = anchor(s.EnvFile)
		cfg.MCPServers[key] = s
	}
	for key, c := range cfg.Commands {
		c.Cwd = anchor(c.Cwd)
		cfg.Commands[key] = c
	}
}

// withoutFollowUps drops validation problems at a key path the decoder already
// reported: a value that failed to decode (an unset variable, a wrong type) then
// looks empty to validation, and "the token is empty" would only repeat the cause.
func withoutFollowUps(checks, decoded Diagnostics, leftOut []string) Diagnostics {
	failed := map[string]bool{}
	for _, p := range decoded {
		if p.Severity == SeverityError {
			failed[p.Path] = true
		}
	}
	// An optional server left out for an unset variable has that value
	// blank: what follows from the blank (no "url" at all) is no news.
	for _, p := range leftOut {
		failed[p] = true
	}
	var out Diagnostics
	for _, p := range checks {
		if !failed[p.Path] {
			out = append(out, p)
		}
	}
	return out
}

// readEnvFiles merges each server's envFile into its env, values in env winning.
func (d *decoder) readEnvFiles(cfg *Config, readFile func(string) ([]byte, error)) {
	if readFile == nil {
		readFile = os.ReadFile
	}
	for _, key := range sortedKeys(cfg.MCPServers) {
		s := cfg.MCPServers[key]
		if s.EnvFile == "" {
			continue
		}
		p := joinPath(joinPath("mcpServers", key), "envFile")
		line := d.positions[p]
		data, err := readFile(s.EnvFile)
		if err != nil {
			if inner := errors.Unwrap(err); inner != nil {
				err = inner // the path is in the message already
			}
			d.problem(SeverityError, line, p, "cannot read %q: %v; fix the path (relative paths start at the config file's directory) or move the variables into \"env\"", s.EnvFile, err)
			continue
		}
		vars, bad := parseDotEnv(data)
		if bad > 0 {
			d.problem(SeverityError, line, p, "line %d of %q is not KEY=VALUE; fix it or comment it out with #", bad, s.EnvFile)
			continue
		}
		merged := SecretMap{}
		for k, v := range vars {
			merged[k] = v
		}
		for k, v := range s.Env {
			merged[k] = v
		}
		s.Env = merged
		cfg.MCPServers[key] = s
	}
}

// parseDotEnv reads KEY=VALUE lines: blank lines and # comments skipped, an
// optional "export " prefix, values optionally in matching quotes. It returns the
// 1-based number of the first bad line, or 0.
func parseDotEnv(data []byte) (map[string]string, int) {
	vars := map[string]string{}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || !envNamePattern.MatchString(k) {
			return nil, i + 1
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		vars[k] = v
	}
	return vars, 0
}
