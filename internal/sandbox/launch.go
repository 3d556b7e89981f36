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

// Prepare makes cmd (built, not started) start its program inside the
// sandbox sb. It returns release, to call once the process has been
// waited for (it removes the start's cgroup and private temp directory).
// Where the kernel cannot enforce sb, a required sandbox fails naming
// why; else log (the server's logger) is warned of what is not enforced
// and the rest applies. log also gets the start's rules, at Info.
func Prepare(cmd *exec.Cmd, name string, sb *config.SandboxConfig, log *slog.Logger) (release func(), err error) {
	return prepare(cmd, name, sb, log, ProbeKernel())
}

// prepare is Prepare on the kernel k.
func prepare(cmd *exec.Cmd, name string, sb *config.SandboxConfig, log *slog.Logger, k Kernel) (release func(), err error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	home := lookup(cmd.Env, "HOME")
	p, err := Resolve(name, sb, cmd.Path, home)
	if err != nil {
		return nil, err
	}
	if missing := k.Missing(p); len(missing) > 0 {
		if sb.IsRequired() {
			return nil, fmt.Errorf("server %q has a required sandbox this machine cannot enforce: %s; run it on a kernel that can, or set \"required\": false in its sandbox block to start it with what can be enforced", name, strings.Join(missing, "; "))
		}
		log.Warn("sandbox not fully enforced: the server starts with what this kernel can enforce", "server", name, "not_enforced", strings.Join(missing, "; "))
		p.BestEffort = true
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("sandbox of %q: finding toolfold's own binary to launch the server through: %w", name, err)
	}
	release, err = setup(p, k)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(p)
	if err != nil {
		release()
		return nil, fmt.Errorf("sandbox of %q: %w", name, err)
	}
	cmd.Path = self
	cmd.Env = append(cmd.Env, launch.PolicyEnv+"="+string(data))
	// The audit trail of a start names the rules it runs under.
	log.Info("starting the server in its sandbox", "server", name, "sandbox", Summary(p))
	return release, nil
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
