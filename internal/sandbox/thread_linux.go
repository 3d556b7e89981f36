//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/toolfold/toolfold/internal/sandbox/launch"
)

// needsLauncher says whether p asks for what only the server's own
// process can take before execve: resource limits are per process, so a
// thread of toolfold cannot set them for the server alone, and the
// process limit without a pids cgroup is one of them (RLIMIT_NPROC).
func needsLauncher(p *Policy) bool {
	return p.MemoryBytes > 0 || p.OpenFiles > 0 || p.CPUSeconds > 0 || (p.Processes > 0 && p.Cgroup == "")
}

// startInThread starts cmd from an OS thread of toolfold that has first
// restricted itself with p: Landlock and no_new_privs are per thread, and
// the child of a thread inherits them, from its first instruction, with
// no second program started. The thread stays locked to its goroutine
// and so ends with it: no other goroutine ever runs restricted, and the
// Go runtime starts no thread from a locked one (it asks its template
// thread), so the restriction reaches nothing else in toolfold. This is
// go-landlock's documented pattern (Config.NewRulesetFD).
func startInThread(cmd *exec.Cmd, p *Policy) error {
	cfg, rules, err := launch.Ruleset(p)
	if err != nil {
		return fmt.Errorf("sandbox of %q: %w", p.Server, err)
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("sandbox of %q: building its Landlock rules: %w", p.Server, err)
	}
	if fd >= 0 {
		defer unix.Close(fd)
	}
	v1 := false
	if p.Cgroup != "" {
		if _, err := os.Stat(p.Cgroup + "/tasks"); err == nil {
			v1 = true // a v1 cgroup takes a single thread, whose children follow it
		} else {
			// v2 moves whole processes: the child is made in the cgroup
			// (clone3 with CLONE_INTO_CGROUP).
			dir, err := os.Open(p.Cgroup)
			if err != nil {
				return fmt.Errorf("sandbox of %q: opening its pids cgroup: %w", p.Server, err)
			}
			defer dir.Close()
			if cmd.SysProcAttr == nil {
				cmd.SysProcAttr = &syscall.SysProcAttr{}
			}
			cmd.SysProcAttr.UseCgroupFD = true
			cmd.SysProcAttr.CgroupFD = int(dir.Fd())
		}
	}
	errc := make(chan error, 1)
	go func() {
		// Never unlocked: the runtime ends the restricted thread with
		// this goroutine instead of reusing it.
		runtime.LockOSThread()
		errc <- func() error {
			if v1 {
				if err := os.WriteFile(p.Cgroup+"/tasks", []byte(strconv.Itoa(unix.Gettid())), 0); err != nil {
					return fmt.Errorf("sandbox of %q: joining its pids cgroup %s: %w", p.Server, p.Cgroup, err)
				}
			}
			if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
				return fmt.Errorf("sandbox of %q: setting no_new_privs: %w", p.Server, err)
			}
			if fd >= 0 {
				if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
					return fmt.Errorf("sandbox of %q: applying its Landlock rules: %w", p.Server, err)
				}
			}
			if err := cmd.Start(); err != nil {
				return fmt.Errorf("starting %s inside the sandbox: %w (is its directory granted in \"exec\"?)", p.Program, err)
			}
			return nil
		}()
	}()
	return <-errc
}
