// Package sandbox runs a stdio server inside a kernel sandbox: Landlock
// rules for the files it may read, write and execute and the TCP ports it
// may connect to, no_new_privs, resource limits, and a pids cgroup for
// its process count.
//
// Go cannot run code between fork and exec, so the rules are applied by a
// re-executed toolfold: Prepare rewrites an exec.Cmd to start toolfold's
// own binary with the policy in an environment variable; the launcher
// (package launch, whose init runs before toolfold's heavy packages are
// initialised) sees the variable, joins the cgroup, sets the limits,
// restricts itself with Landlock and execve's the server. The server so
// runs restricted from its first instruction, and everything it starts
// inherits the restriction: Landlock domains and rlimits survive fork
// and execve and cannot be lifted.
package sandbox
