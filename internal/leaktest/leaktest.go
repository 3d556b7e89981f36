// Package leaktest finds the goroutines a test left running: those whose
// stack shows code of a given package or type. It reads runtime.Stack, so
// it needs no dependency and works under the race detector.
package leaktest

import (
	"runtime"
	"strings"
)

// Running lists the stacks of the goroutines now running code that
// contains frame (such as "toolfold/internal/assemble.(*Supervisor)"),
// leaving out those that also contain any of except (such as the package's
// own tests).
func Running(frame string, except ...string) []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var found []string
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, frame) && !containsAny(g, except) {
			found = append(found, g)
		}
	}
	return found
}

// Left is Running after what was stopped has had the chance to return:
// a goroutine that was waited for may still be leaving its last frame, so
// the scheduler is given the turn a bounded number of times (no sleep).
func Left(frame string, except ...string) []string {
	var left []string
	for range 10000 {
		if left = Running(frame, except...); len(left) == 0 {
			return nil
		}
		runtime.Gosched()
	}
	return left
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
