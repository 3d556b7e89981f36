//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
				// Never toolfold: a v1 cgroup lists toolfold while the thread
				// that started the server into it is still ending.
				if _, err := fmt.Sscan(f, &pid); err == nil && pid > 0 && pid != os.Getpid() {
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
// pids controller is enabled for children. Where both hierarchies are
// mounted (a "hybrid" system) the pids controller is bound to one of
// them, and that one is found.
func pidsCgroupBase() (string, error) {
	cg, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("no cgroups: %w", err)
	}
	mounts, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return "", fmt.Errorf("reading the mounts to find the cgroups: %w", err)
	}
	return findPidsCgroup(string(cg), string(mounts), writable)
}

// cgroupBases lists the directories of toolfold's own cgroup that could
// hold a pids cgroup, v1's first, from the contents of /proc/self/cgroup
// and /proc/self/mounts.
func cgroupBases(procCgroup, mounts string) (v1, v2 []string) {
	var v1Path, v2Path string
	hasV2 := false
	for line := range strings.Lines(procCgroup) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			v2Path, hasV2 = parts[2], true
		}
		if slices.Contains(strings.Split(parts[1], ","), "pids") {
			v1Path = parts[2]
		}
	}
	for line := range strings.Lines(mounts) {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		switch {
		case f[2] == "cgroup" && v1Path != "" && slices.Contains(strings.Split(f[3], ","), "pids"):
			v1 = append(v1, filepath.Join(f[1], v1Path))
		case f[2] == "cgroup2" && hasV2:
			v2 = append(v2, filepath.Join(f[1], v2Path))
		}
	}
	return v1, v2
}

// findPidsCgroup picks the first base where toolfold may make a child
// with a process limit.
func findPidsCgroup(procCgroup, mounts string, canWrite func(string) bool) (string, error) {
	v1, v2 := cgroupBases(procCgroup, mounts)
	var why []string
	for _, dir := range v1 {
		if canWrite(dir) {
			return dir, nil
		}
		why = append(why, "the v1 pids cgroup "+dir+" is not writable")
	}
	for _, dir := range v2 {
		ctl, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
		switch {
		case err != nil:
			why = append(why, fmt.Sprintf("cgroup v2 at %s: %v", dir, err))
		case !slices.Contains(strings.Fields(string(ctl)), "pids"):
			why = append(why, "cgroup v2 at "+dir+" does not enable pids for its children (cgroup.subtree_control)")
		case !canWrite(dir):
			why = append(why, "cgroup v2 at "+dir+" is not writable")
		default:
			return dir, nil
		}
	}
	if len(why) == 0 {
		return "", errors.New("no pids cgroup is mounted")
	}
	return "", errors.New("no writable pids cgroup: " + strings.Join(why, "; "))
}

func writable(dir string) bool { return syscall.Access(dir, 2 /* W_OK */) == nil }
