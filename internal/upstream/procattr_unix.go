//go:build unix

package upstream

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts a stdio server in a process group of its own, so that
// stopping it also stops what it spawned (npx runs node, uvx runs python), and a
// Ctrl-C meant for toolfold's terminal does not kill the servers under it before
// toolfold can close them in order.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killProcessGroup kills whatever is left of a server's process group after the
// server itself was stopped.
func killProcessGroup(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
