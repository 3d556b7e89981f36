package config

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// DepthEnvVar is set by toolfold in the environment of every stdio server it
// starts, to its own depth plus one, so that a toolfold can tell how many
// toolfolds run above it. Unset means zero: started by a person or a client.
const DepthEnvVar = "TOOLFOLD_DEPTH"

// MaxDepth is the depth at which a toolfold starts no stdio servers. A
// toolfold served by another (depth 1) works as usual; one more level down
// the chain is refused, since configs that list each other (A starts B,
// which starts A) would otherwise fork without end, and no config a person
// writes needs three toolfolds stacked.
const MaxDepth = 2

// ParseDepth reads the value of DepthEnvVar; "" is zero.
func ParseDepth(raw string) (int, error) {
	if raw == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("$%s is %q, which is not a count of toolfolds; toolfold sets it for the servers it starts, so unset it", DepthEnvVar, raw)
	}
	return n, nil
}

// checkNesting refuses stdio servers that would make toolfold start itself
// without end: an entry that runs this toolfold on this same config, and,
// at MaxDepth, every stdio server (the indirect loops, through other configs
// or wrapper scripts, that no look at one config can see).
func (c *Config) checkNesting(opts Options) Diagnostics {
	var diags Diagnostics
	for _, key := range sortedKeys(c.MCPServers) {
		s := c.MCPServers[key]
		if s.Disabled || s.Command == "" || s.Transport != TransportStdio {
			continue
		}
		p := joinPath("mcpServers", key)
		if opts.Depth >= MaxDepth {
			diags = append(diags, c.Problemf(SeverityError, p,
				"not started: this toolfold was started by a toolfold that was itself started by one ($%s=%d), and toolfold nests at most %d deep, since configs that list each other would fork without end; serve this server from the outermost toolfold's config instead",
				DepthEnvVar, opts.Depth, MaxDepth-1))
			continue
		}
		if opts.Self == "" || c.File == "" {
			continue
		}
		args, ok := toolfoldArgs(s, opts.Self)
		if !ok {
			continue
		}
		if target := childConfig(s, args); target != "" && sameFile(target, c.File) {
			diags = append(diags, c.Problemf(SeverityError, joinPath(p, "command"),
				"this server runs toolfold itself on this same config (%s), so every toolfold would start another without end; remove the entry, or give it a config of its own with --config that does not list it",
				c.File))
		}
	}
	return diags
}

// toolfoldArgs reports whether the entry runs the toolfold binary self
// (found as exec would find it, symlinks followed) or builds and runs
// toolfold with "go run", and if so toolfold's arguments.
func toolfoldArgs(s ServerConfig, self string) ([]string, bool) {
	if sameFile(commandPath(s.Command, s.Cwd), self) {
		return s.Args, true
	}
	base := strings.TrimSuffix(filepath.Base(s.Command), ".exe")
	if base != "go" || len(s.Args) == 0 || s.Args[0] != "run" {
		return nil, false
	}
	rest := s.Args[1:]
	for len(rest) > 0 && strings.HasPrefix(rest[0], "-") {
		flag := strings.TrimLeft(rest[0], "-")
		rest = rest[1:]
		if !strings.Contains(flag, "=") && goRunValueFlags[flag] && len(rest) > 0 {
			rest = rest[1:]
		}
	}
	if len(rest) > 0 && isToolfoldPackage(rest[0], s.Cwd) {
		return rest[1:], true
	}
	return nil, false
}

// goRunValueFlags are the flags of "go run" that take the next argument as
// their value, so that the package after them is found.
var goRunValueFlags = map[string]bool{
	"C": true, "asmflags": true, "buildmode": true, "compiler": true, "exec": true, "gccgoflags": true,
	"gcflags": true, "installsuffix": true, "ldflags": true, "mod": true, "modfile": true, "o": true,
	"overlay": true, "p": true, "pgo": true, "pkgdir": true, "tags": true, "toolexec": true,
}

// isToolfoldPackage recognizes toolfold's main package as "go run" names
// it: by import path (with or without a version) or by directory.
func isToolfoldPackage(pkg, dir string) bool {
	pkg, _, _ = strings.Cut(pkg, "@")
	if pkg == "github.com/toolfold/toolfold/cmd/toolfold" {
		return true
	}
	if !strings.HasPrefix(pkg, ".") && !filepath.IsAbs(pkg) {
		return false
	}
	if !filepath.IsAbs(pkg) && dir != "" {
		pkg = filepath.Join(dir, pkg)
	}
	abs, err := filepath.Abs(pkg)
	return err == nil && strings.HasSuffix(filepath.ToSlash(abs), "/cmd/toolfold")
}

// commandPath finds the file a server's command runs, as exec does: a name
// without a separator on PATH, a relative path against the server's cwd.
func commandPath(command, dir string) string {
	if !strings.ContainsAny(command, `/\`) {
		path, err := exec.LookPath(command)
		if err != nil {
			return ""
		}
		return path
	}
	if !filepath.IsAbs(command) && dir != "" {
		return filepath.Join(dir, command)
	}
	return command
}

// childConfig is the config file a toolfold run with args (in the entry's
// cwd, with the entry's env) would read, or "" when it would read none or
// not start servers at all.
func childConfig(s ServerConfig, args []string) string {
	if len(args) == 0 {
		return ""
	}
	switch args[0] {
	case "serve", "tools", "groups", "tokens", "call":
	default:
		return "" // version, help, check: nothing is started
	}
	explicit := ""
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "config" {
			continue
		}
		if !hasValue && i+1 < len(args) {
			value = args[i+1]
		}
		explicit = value
	}
	cwd := s.Cwd
	if cwd != "" {
		if abs, err := filepath.Abs(cwd); err == nil {
			cwd = abs
		}
	}
	path, found, err := Find(explicit, MapEnv(s.Env), cwd)
	if err != nil || !found {
		return ""
	}
	if !filepath.IsAbs(path) && cwd != "" {
		path = filepath.Join(cwd, path) // Find gives a named file as named
	}
	return path
}

// sameFile reports whether two paths name one file, symlinks and hard
// links included.
func sameFile(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	ia, err := os.Stat(a)
	if err != nil {
		return false
	}
	ib, err := os.Stat(b)
	return err == nil && os.SameFile(ia, ib)
}
