//go:build !linux

package sandbox

import "os/exec"

// Unenforceable: only Linux has the kernel features the sandbox uses.
func Unenforceable(*Policy) []string {
	return []string{"the sandbox is enforced on Linux only (Landlock); on this system nothing in the block is"}
}

func setup(*Policy, *exec.Cmd) (func(), error) { return func() {}, nil }
