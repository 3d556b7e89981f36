package leaktest_test

import (
	"strings"
	"testing"

	"github.com/toolfold/toolfold/internal/leaktest"
)

// parked blocks until stop is closed: a goroutine for Running to find.
func parked(running chan<- struct{}, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	close(running)
	<-stop
}

// Running finds a goroutine by a frame of its stack, leaves it out when an
// exception matches, and Left no longer finds it once it has returned.
func TestRunningAndLeft(t *testing.T) {
	const frame = "internal/leaktest_test.parked"
	running, stop, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go parked(running, stop, done)
	<-running
	if got := leaktest.Running(frame); len(got) != 1 || !strings.Contains(got[0], frame) {
		t.Fatalf("Running(%q) = %d stacks, want the parked goroutine's", frame, len(got))
	}
	if got := leaktest.Running(frame, "leaktest_test.parked"); len(got) != 0 {
		t.Errorf("Running with an exception that matches found %d stacks, want none", len(got))
	}
	close(stop)
	<-done
	if left := leaktest.Left(frame); len(left) != 0 {
		t.Errorf("Left found the returned goroutine:\n%s", strings.Join(left, "\n\n"))
	}
}
