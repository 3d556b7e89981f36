//go:build linux && (amd64 || arm64)

package cmdtool

import (
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

// waitPidGone waits until process pid has died. It is not our child, so
// wait(2) cannot see it; a pidfd can: it turns readable when the process
// exits, and the runtime's poller wakes the test then. The deadline only
// stops a test whose group was not killed from waiting out the child's
// 300 s sleep.
func waitPidGone(t *testing.T, pid int) {
	t.Helper()
	const sysPidfdOpen, pidfdNonblock = 434, syscall.O_NONBLOCK // same number on amd64 and arm64
	fd, _, errno := syscall.Syscall(sysPidfdOpen, uintptr(pid), pidfdNonblock, 0)
	if errno == syscall.ESRCH {
		return // already reaped
	}
	if errno != 0 {
		t.Fatalf("pidfd_open(%d): %v", pid, errno)
	}
	f := os.NewFile(fd, "pidfd")
	defer f.Close()
	if err := f.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	waited := false
	// The first call asks to wait for readability; the second comes when
	// the pidfd is readable, that is once the process has exited.
	err = rc.Read(func(uintptr) bool {
		done := waited
		waited = true
		return done
	})
	if errors.Is(err, os.ErrDeadlineExceeded) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("child process %d is still running: the process group was not killed", pid)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !processGone(pid) {
		t.Errorf("the pidfd of %d turned readable but the process runs", pid)
	}
}
