package sandbox

import (
	"os/exec"
	"path/filepath"
)

// grants are the paths a preset adds.
type grants struct{ read, write, exec []string }

// system is what any dynamically linked program needs: the loader and
// libraries, the system's configuration (certificates, resolver, users),
// and the harmless devices. /proc is readable: Landlock already keeps
// the server from ptrace-reading processes outside its sandbox, which
// guards their environ and memory; see docs/sandbox.md.
func system() grants {
	return grants{
		read:  []string{"/etc", "/proc", "/sys/devices/system/cpu", "/dev/urandom", "/dev/random", "/dev/zero"},
		write: []string{"/dev/null", "/dev/tty"},
		exec:  []string{"/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/libexec"},
	}
}

// presetGrants is what the named preset adds for a program at path.
// Writes go to the runtime's own caches, never the home directory as a
// whole.
func presetGrants(preset, program, home string) grants {
	g := grants{}
	add := func(o grants) {
		g.read = append(g.read, o.read...)
		g.write = append(g.write, o.write...)
		g.exec = append(g.exec, o.exec...)
	}
	inHome := func(rel ...string) []string {
		if home == "" {
			return nil
		}
		out := make([]string, len(rel))
		for i, r := range rel {
			out[i] = filepath.Join(home, r)
		}
		return out
	}
	switch preset {
	case "go":
		add(system())
	case "node":
		add(system())
		// npx runs node and sh; npm installs packages into its cache and
		// runs them from there.
		add(grants{
			exec:  append([]string{"/usr/bin", "/bin", "/usr/local/bin", "/usr/local/lib/node_modules", "/usr/share/nodejs", "/opt"}, inHome(".nvm", ".volta", ".local/share/fnm")...),
			write: inHome(".npm", ".cache/node", ".config/configstore"),
		})
		add(toolPrefix("node"))
	case "python":
		add(system())
		add(grants{
			exec:  append([]string{"/usr/bin", "/bin", "/usr/local/bin", "/usr/local/lib", "/opt"}, inHome(".local/bin", ".local/lib", ".pyenv")...),
			write: inHome(".cache/uv", ".local/share/uv", ".cache/pip"),
		})
		add(toolPrefix("python3"))
	}
	return g
}

// toolPrefix grants the install prefix of a runtime found on PATH (the
// directory above its bin), wherever the user installed it.
func toolPrefix(tool string) grants {
	path, err := exec.LookPath(tool)
	if err != nil {
		return grants{}
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	return grants{exec: []string{filepath.Dir(filepath.Dir(path))}}
}
