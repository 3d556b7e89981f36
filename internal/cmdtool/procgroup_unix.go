//go:build unix

package cmdtool

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// setProcessGroup starts the program in a process group of its own.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killProcessGroup sends SIGKILL to every process in the group p leads.
func killProcessGroup(p *os.Process) error {
	if p == nil || p.Pid <= 0 {
		return nil
	}
	err := syscall.Kill(-p.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}
