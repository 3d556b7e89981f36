//go:build !(linux && (amd64 || arm64))

package cmdtool

import (
	"syscall"
	"testing"
	"time"
)

// waitPidGone waits until process pid has died. Without a pidfd, a
// process that is not our child sends no word when it dies, so this polls
// its state; once the group is killed the wait ends at the next poll
// whatever the load. The deadline only stops a test whose group was not
// killed from waiting out the child's 300 s sleep.
func waitPidGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("child process %d is still running: the process group was not killed", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
