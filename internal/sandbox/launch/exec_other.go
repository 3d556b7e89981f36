//go:build !linux

package launch

import "syscall"

// enforceAndExec: off Linux nothing can be enforced, and Prepare refuses
// a required sandbox before the launcher runs.
func enforceAndExec(p *Policy, argv, env []string) error {
	return syscall.Exec(p.Program, argv, env)
}
