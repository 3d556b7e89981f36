package sandbox

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"

	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/sandbox/launch"
)

// Prepared is a start that Prepare made ready.
type Prepared struct {
	// Start starts the command inside its sandbox; call it instead of
	// cmd.Start.
	Start func() error
	// Release is called once the process has been waited for (or its
	// start failed): it removes the start's cgroup.
	Release func()
	// Policy is what the start is held to.
	Policy *Policy
}

// Prepare makes cmd (built, not started) start its program inside the
// sandbox sb. Where the kernel cannot enforce sb, a required sandbox
// fails naming why; else log (the server's logger) is warned of what is
// not enforced and the rest applies. log also gets the start's rules, at
// Info.
func Prepare(cmd *exec.Cmd, name string, sb *config.SandboxConfig, log *slog.Logger) (Prepared, error) {
	return prepare(cmd, name, sb, log, ProbeKernel())
}

// prepare is Prepare on the kernel k.
//
// Most starts are made from a thread of toolfold that restricts itself
// first (startInThread): no second program runs. Resource limits belong
// to a process, not a thread, so a block with limits other than a
// process count in a pids cgroup starts through the launcher instead:
// cmd is rewritten to run toolfold's own binary, whose package launch
// restricts that process and execve's the server.
func prepare(cmd *exec.Cmd, name string, sb *config.SandboxConfig, log *slog.Logger, k Kernel) (Prepared, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	home := lookup(cmd.Env, "HOME")
	p, err := Resolve(name, sb, cmd.Path, home)
	if err != nil {
		return Prepared{}, err
	}
	if missing := k.Missing(p); len(missing) > 0 {
		if sb.IsRequired() {
			return Prepared{}, fmt.Errorf("server %q has a required sandbox this machine cannot enforce: %s; run it on a kernel that can, or set \"required\": false in its sandbox block to start it with what can be enforced", name, strings.Join(missing, "; "))
		}
		log.Warn("sandbox not fully enforced: the server starts with what this kernel can enforce", "server", name, "not_enforced", strings.Join(missing, "; "))
		p.BestEffort = true
	}
	release, err := setup(p, k)
	if err != nil {
		return Prepared{}, err
	}
	prep := Prepared{Start: func() error { return startInThread(cmd, p) }, Release: release, Policy: p}
	how := "thread"
	if needsLauncher(p) {
		how = "launcher"
		self, err := os.Executable()
		if err != nil {
			release()
			return Prepared{}, fmt.Errorf("sandbox of %q: finding toolfold's own binary to launch the server through: %w", name, err)
		}
		data, err := json.Marshal(p)
		if err != nil {
			release()
			return Prepared{}, fmt.Errorf("sandbox of %q: %w", name, err)
		}
		cmd.Path = self
		if cmd.Env == nil {
			cmd.Env = os.Environ() // what a nil Env would have passed
		}
		cmd.Env = append(cmd.Env, launch.PolicyEnv+"="+string(data))
		prep.Start = cmd.Start
	}
	// The audit trail of a start names the rules it runs under.
	log.Info("starting the server in its sandbox", "server", name, "sandbox", Summary(p), "via", how)
	return prep, nil
}

func lookup(env []string, key string) string {
	if env == nil {
		return os.Getenv(key)
	}
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}
