//go:build unix

package main

import "syscall"

// fdLimit is the process's current limit on open files (Go raises the soft
// limit to the hard one at start); 0 if unknown.
func fdLimit() uint64 {
	var r syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r) != nil {
		return 0
	}
	return uint64(r.Cur)
}
