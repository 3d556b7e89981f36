// Package sandbox runs a stdio server inside a kernel sandbox: Landlock
// rules for the files it may read, write and execute and the TCP ports it
// may connect to, Landlock scopes, no_new_privs, resource limits, and a
// pids cgroup for its process count.
//
// Landlock and no_new_privs are per thread and inherited, so most starts
// are made from an OS thread of toolfold that restricts itself and is
// then discarded: the server runs restricted from its first instruction
// and no second program is started. Resource limits belong to a process,
// so a block with limits starts through the launcher (package launch):
// Prepare rewrites the command to run toolfold's own binary, which
// restricts itself in launch's init and execve's the server. Either way
// everything the server starts inherits the restriction, which cannot be
// lifted.
package sandbox
