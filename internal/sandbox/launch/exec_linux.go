//go:build linux

package launch

import (
	"fmt"
	"os"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// enforceAndExec runs in the helper: join the cgroup, set the limits,
// restrict with Landlock (which also sets no_new_privs), execve.
func enforceAndExec(p *Policy, argv, env []string) error {
	if p.Cgroup != "" {
		if err := os.WriteFile(p.Cgroup+"/cgroup.procs", []byte("0"), 0); err != nil {
			return fmt.Errorf("joining the pids cgroup %s: %w", p.Cgroup, err)
		}
	}
	// RLIMIT_NPROC counts every process of the user, not the server's
	// tree, so it is the process limit only where no pids cgroup is.
	nproc := int64(p.Processes)
	if p.Cgroup != "" {
		nproc = 0
	}
	for _, l := range []struct {
		name     string
		resource int
		value    int64
	}{
		{"memory", syscall.RLIMIT_DATA, p.MemoryBytes},
		{"processes", 6 /* RLIMIT_NPROC */, nproc},
		{"openFiles", syscall.RLIMIT_NOFILE, int64(p.OpenFiles)},
		{"cpu", syscall.RLIMIT_CPU, p.CPUSeconds},
	} {
		if l.value <= 0 {
			continue
		}
		lim := &syscall.Rlimit{Cur: uint64(l.value), Max: uint64(l.value)}
		if err := syscall.Setrlimit(l.resource, lim); err != nil {
			return fmt.Errorf("setting the %s limit to %d: %w", l.name, l.value, err)
		}
	}
	cfg, rules, err := Ruleset(p)
	if err != nil {
		return err
	}
	if err := cfg.Restrict(rules...); err != nil {
		return fmt.Errorf("applying the Landlock rules: %w", err)
	}
	if err := syscall.Exec(p.Program, argv, env); err != nil {
		return fmt.Errorf("starting %s inside the sandbox: %w (is its directory granted in \"exec\"?)", p.Program, err)
	}
	return nil
}

// No path is granted device ioctls (AccessFSIoctlDev): a granted
// /dev/tty would otherwise let the server type into the user's shell
// (TIOCSTI). Descriptors the server inherits are not affected.
// Ruleset is the Landlock configuration and rules of p.
func Ruleset(p *Policy) (landlock.Config, []landlock.Rule, error) {
	cfg := landlock.V6
	if p.AllNetwork {
		cfg.HandledAccessNet = 0
	}
	if p.BestEffort {
		cfg = cfg.BestEffort()
	}
	rules, err := pathRules(p)
	if err != nil {
		return cfg, nil, err
	}
	if !p.AllNetwork {
		for _, port := range p.Ports {
			rules = append(rules, landlock.ConnectTCP(uint16(port)))
		}
	}
	return cfg, rules, nil
}

const (
	fileRights  = ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSExecute | ll.AccessFSTruncate
	readRights  = ll.AccessFSReadFile | ll.AccessFSReadDir
	execRights  = readRights | ll.AccessFSExecute
	writeRights = readRights | ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile |
		ll.AccessFSMakeChar | ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo |
		ll.AccessFSMakeSym | ll.AccessFSRefer
)

// pathRules grants each path its rights, those of a file alone where
// the path is not a directory (Landlock refuses directory rights there).
func pathRules(p *Policy) ([]landlock.Rule, error) {
	var rules []landlock.Rule
	for _, set := range []struct {
		paths  []string
		rights uint64
	}{{p.Read, readRights}, {p.Write, writeRights}, {p.Exec, execRights}} {
		for _, path := range set.paths {
			st, err := os.Stat(path)
			if err != nil {
				return nil, fmt.Errorf("granted path %s: %w", path, err)
			}
			rights := set.rights
			if !st.IsDir() {
				rights &= fileRights
			}
			rules = append(rules, landlock.PathAccess(landlock.AccessFSSet(rights), path))
		}
	}
	return rules, nil
}
