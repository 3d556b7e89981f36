//go:build !linux

package sandbox

import "os/exec"

// ProbeKernel: only Linux has the kernel features the sandbox uses.
func ProbeKernel() Kernel { return Kernel{} }

func setup(*Policy, Kernel) (func(), error) { return func() {}, nil }

// needsLauncher: off Linux nothing is enforced, so nothing needs it.
func needsLauncher(*Policy) bool { return false }

func startInThread(cmd *exec.Cmd, _ *Policy) error { return cmd.Start() }
