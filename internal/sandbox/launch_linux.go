//go:build linux

package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// landlockConfig is the newest ABI toolfold asks for: files (with
// truncate and device ioctls), TCP, and the scopes that keep the server
// from signalling, or connecting to abstract unix sockets of, processes
// outside its sandbox.
var landlockABI = 6

// Unenforceable names each part of p this kernel cannot enforce.
func Unenforceable(p *Policy) []string {
	var missing []string
	abi, err := ll.LandlockGetABIVersion()
	switch {
	case err != nil || abi < 1:
		return append(missing, "this kernel has no Landlock (Linux 5.13 or later with landlock among its LSMs), so no file or network rule can be enforced")
	case abi < 4 && !p.AllNetwork:
		missing = append(missing, fmt.Sprintf("Landlock ABI %d has no TCP rules (ABI 4, Linux 6.7, has), so network is not restricted", abi))
	case abi < landlockABI:
		missing = append(missing, fmt.Sprintf("Landlock ABI %d does not scope signals and abstract unix sockets (ABI 6 does)", abi))
	}
	if p.Processes > 0 && os.Geteuid() == 0 {
		if _, err := pidsCgroupBase(); err != nil {
			missing = append(missing, fmt.Sprintf("the process limit cannot bind a server run as root without a pids cgroup (%v)", err))
		}
	}
	return missing
}

// setup makes what the start needs outside the helper: the pids cgroup.
func setup(p *Policy, _ *exec.Cmd) (func(), error) {
	if p.Processes <= 0 {
		return func() {}, nil
	}
	base, err := pidsCgroupBase()
	if err != nil {
		if os.Geteuid() != 0 || p.BestEffort {
			return func() {}, nil // RLIMIT_NPROC binds a non-root server
		}
		return nil, fmt.Errorf("sandbox of %q: %w", p.Server, err)
	}
	dir, err := os.MkdirTemp(base, "toolfold-")
	if err != nil {
		return nil, fmt.Errorf("sandbox of %q: making its pids cgroup: %w", p.Server, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(fmt.Sprint(p.Processes)), 0); err != nil {
		_ = syscall.Rmdir(dir)
		return nil, fmt.Errorf("sandbox of %q: setting its process limit: %w", p.Server, err)
	}
	p.Cgroup = dir
	return func() { removeCgroup(dir) }, nil
}

// removeCgroup kills what is left in a cgroup and removes it. The
// kernel refuses to remove a cgroup until its last process has left,
// which a killed process does a moment later, so it tries a few times.
func removeCgroup(dir string) {
	for range 50 {
		if data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs")); err == nil {
			for _, f := range strings.Fields(string(data)) {
				var pid int
				if _, err := fmt.Sscan(f, &pid); err == nil && pid > 0 {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
		if err := syscall.Rmdir(dir); err == nil || errors.Is(err, syscall.ENOENT) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// pidsCgroupBase is a directory where toolfold may make a pids cgroup:
// below its own cgroup, in the v1 pids hierarchy or in v2 where the
// pids controller is enabled for children.
func pidsCgroupBase() (string, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("no cgroups: %w", err)
	}
	defer f.Close()
	var v2 string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "pids" {
				dir := filepath.Join("/sys/fs/cgroup/pids", parts[2])
				if writable(dir) {
					return dir, nil
				}
			}
		}
		if parts[0] == "0" && parts[1] == "" {
			v2 = parts[2]
		}
	}
	for _, mnt := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		dir := filepath.Join(mnt, v2)
		ctl, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
		if err == nil && strings.Contains(" "+string(ctl)+" ", " pids ") && writable(dir) {
			return dir, nil
		}
	}
	return "", errors.New("no writable pids cgroup: neither a v1 pids hierarchy nor a v2 cgroup with pids in cgroup.subtree_control")
}

func writable(dir string) bool { return syscall.Access(dir, 2 /* W_OK */) == nil }
