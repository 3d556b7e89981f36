package sandbox

import (
	"bytes"
	"errors"
	"log/slog"
	"os/exec"
	"strings"
	"testing"

	"github.com/toolfold/toolfold/internal/config"
)

// TestRequiredRefuses: where the kernel cannot enforce what a block
// asks, a required sandbox refuses to start the server and says why;
// with "required": false the server's logger is warned of what is not
// enforced and the start goes on. The kernel is injected, so every
// shortfall is tried on any machine.
func TestRequiredRefuses(t *testing.T) {
	full := Kernel{Linux: true, LandlockABI: 7, Root: true, PidsCgroup: "/nonexistent-never-used"}
	noPids := errors.New("no writable pids cgroup")
	optional := false
	tests := []struct {
		name   string
		kernel Kernel
		sb     config.SandboxConfig
		// want is in the refusal, or in the warning where the block is
		// not required; "" is a start with nothing to say.
		want string
	}{
		{"everything enforced", full, config.SandboxConfig{Network: config.SandboxNetwork{Ports: []int{443}}}, ""},
		{"not Linux", Kernel{}, config.SandboxConfig{}, "enforced on Linux only"},
		{"no Landlock", Kernel{Linux: true}, config.SandboxConfig{}, "has no Landlock"},
		{"ABI without TCP rules, ports limited", Kernel{Linux: true, LandlockABI: 3}, config.SandboxConfig{Network: config.SandboxNetwork{Ports: []int{443}}}, "ABI 3 has no TCP rules"},
		{"ABI without TCP rules, no network", Kernel{Linux: true, LandlockABI: 3}, config.SandboxConfig{}, "the network is not restricted"},
		{"ABI without scopes", Kernel{Linux: true, LandlockABI: 5}, config.SandboxConfig{Network: config.SandboxNetwork{All: true}}, "ABI 5 does not keep the server from signalling"},
		{"root, a process limit, no pids cgroup", Kernel{Linux: true, LandlockABI: 7, Root: true, PidsCgroupErr: noPids}, config.SandboxConfig{Limits: config.SandboxLimits{Processes: 8}}, "cannot bind a server run as root without a pids cgroup (no writable pids cgroup)"},
		{"not root: RLIMIT_NPROC binds", Kernel{Linux: true, LandlockABI: 7, PidsCgroupErr: noPids}, config.SandboxConfig{Limits: config.SandboxLimits{Processes: 8}}, ""},
	}
	for _, tt := range tests {
		for _, required := range []bool{true, false} {
			name := tt.name + "/required"
			sb := tt.sb
			if !required {
				name = tt.name + "/not required"
				sb.Required = &optional
			}
			t.Run(name, func(t *testing.T) {
				var logs bytes.Buffer
				log := slog.New(slog.NewTextHandler(&logs, nil))
				cmd := exec.Command("true")
				prep, err := prepare(cmd, "notes", &sb, log, tt.kernel)
				if tt.want != "" && required {
					if err == nil {
						prep.Release()
						t.Fatalf("started; want a refusal naming %q", tt.want)
					}
					for _, w := range []string{tt.want, `server "notes"`, `"required": false`} {
						if !strings.Contains(err.Error(), w) {
							t.Errorf("refusal %q does not say %q", err, w)
						}
					}
					if cmd.Path != "true" && !strings.HasSuffix(cmd.Path, "/true") {
						t.Errorf("a refused start rewrote the command to %s", cmd.Path)
					}
					return
				}
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				defer prep.Release()
				warned := strings.Contains(logs.String(), "sandbox not fully enforced")
				if tt.want == "" {
					if warned {
						t.Errorf("warned with nothing missing:\n%s", logs.String())
					}
				} else if !warned || !strings.Contains(logs.String(), tt.want) {
					t.Errorf("the server's logger was not warned of %q:\n%s", tt.want, logs.String())
				}
				// Best effort exactly where something is missing and the
				// block allows it; a required sandbox is enforced in full.
				if got, want := prep.Policy.BestEffort, !required; got != want {
					t.Errorf("best effort = %v, want %v", got, want)
				}
				if !strings.Contains(logs.String(), "starting the server in its sandbox") {
					t.Errorf("no log line naming the start's rules:\n%s", logs.String())
				}
			})
		}
	}
}
