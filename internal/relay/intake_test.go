package relay_test

import (
	"context"
	"testing"

	"github.com/toolfold/toolfold/internal/relay"
)

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// An intake is settled when its reader has drained and every request for
// input it counted was received; a waiter taken before is woken by the
// step that settles it, and by no step before.
func TestIntakeSettles(t *testing.T) {
	for _, tc := range []struct {
		name string
		// steps: r Reading, d Drained, a Arrived, 1 and 2 the Received of
		// the first and second Handoff, i Idle, e End
		steps string
		want  bool
	}{
		{"new", "", true},
		{"reading", "r", false},
		{"drained", "rd", true},
		{"a question in transit", "rad", false},
		{"received", "rad1", true},
		{"two written together, one received", "raad1", false},
		{"two written together, both received", "raad12", true},
		{"received twice counts once", "raad11", false},
		{"received, not drained", "raa12", false},
		{"received, then drained", "raa12d", true},
		{"idle forgets what was lost", "radi", true},
		{"idle does not drain the reader", "rai", false},
		{"ended", "raae", true},
		{"two readers, one drained", "rrd", false},
		{"two readers, both drained", "rrdd", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &relay.Intake{}
			var hs []*relay.Handoff
			waiter := in.Settled()
			for _, s := range tc.steps {
				switch s {
				case 'r':
					in.Reading()
				case 'd':
					in.Drained()
				case 'a':
					in.Arrived()
					hs = append(hs, in.Handoff())
				case '1':
					hs[0].Received()
				case '2':
					hs[1].Received()
				case 'i':
					in.Idle()
				case 'e':
					in.End()
				}
				if s == 'r' && closed(waiter) {
					waiter = in.Settled() // the first waiter saw the new intake
				}
			}
			if got := closed(in.Settled()); got != tc.want {
				t.Errorf("settled after %q = %v, want %v", tc.steps, got, tc.want)
			}
			if got := closed(waiter); got != tc.want {
				t.Errorf("a waiter from before was woken: %v, want %v", got, tc.want)
			}
		})
	}
}

// A nil intake (a source with no reader to watch) is always settled, and
// a Handoff travels in a context.
func TestHandoffInContext(t *testing.T) {
	if !closed((*relay.Intake)(nil).Settled()) {
		t.Error("a nil intake is not settled")
	}
	if h := relay.HandoffFrom(context.Background()); h != nil {
		t.Errorf("HandoffFrom a bare context = %v, want nil", h)
	}
	var nilHandoff *relay.Handoff
	nilHandoff.Received() // must not panic
	in := &relay.Intake{}
	in.Reading()
	in.Arrived()
	h := in.Handoff()
	in.Drained()
	got := relay.HandoffFrom(relay.WithHandoff(context.Background(), h))
	if got != h {
		t.Fatalf("HandoffFrom = %p, want %p", got, h)
	}
	if closed(got.Settled()) {
		t.Error("settled with a question in transit")
	}
	got.Received()
	if !closed(got.Settled()) {
		t.Error("not settled once the question was received")
	}
}
