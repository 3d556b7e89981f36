//go:build linux

package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// ProbeKernel reads what the running kernel can enforce.
func ProbeKernel() Kernel {
	k := Kernel{Linux: true, Root: os.Geteuid() == 0}
	if abi, err := ll.LandlockGetABIVersion(); err == nil && abi > 0 {
		k.LandlockABI = abi
	}
	k.PidsCgroup, k.PidsCgroupErr = pidsCgroupBase()
	return k
}

// setup makes what the start needs outside the launcher: the pids
// cgroup, where the kernel has one (Missing has named its absence).
func setup(p *Policy, k Kernel) (func(), error) {
	if p.Processes <= 0 || k.PidsCgroup == "" {
		return func() {}, nil
	}
	dir, err := os.MkdirTemp(k.PidsCgroup, "toolfold-")
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
