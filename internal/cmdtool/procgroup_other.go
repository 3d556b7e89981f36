//go:build !unix

package cmdtool

import (
	"errors"
	"os"
	"os/exec"
)

// setProcessGroup does nothing where there are no Unix process groups
// (Windows): only the program itself can be stopped.
func setProcessGroup(*exec.Cmd) {}

// killProcessGroup kills the program; what it started may outlive it.
func killProcessGroup(p *os.Process) error {
	if p == nil {
		return nil
	}
	if err := p.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}
