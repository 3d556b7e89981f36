package gateway

import (
	"context"
	"sync"
	"testing"
)

// outcomeOf is an error that classifies itself, as package upstream's do.
type outcomeOf string

func (o outcomeOf) Error() string   { return string(o) }
func (o outcomeOf) Outcome() string { return string(o) }

// TestTicketRecordIsWrittenOnce holds the promise that audit and metrics
// read one value: what a call's handlers write after its ticket took the
// record (a detached call still running, a source's late NoteFailure)
// changes nothing the ticket returns.
func TestTicketRecordIsWrittenOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		// during writes while the call runs; late after the ticket took
		// the record.
		during, late func(ctx context.Context)
		detached     *callRecord
		want         callRecord
	}{
		{
			name:   "answered in its request",
			during: func(ctx context.Context) { noteSource(ctx, "a") },
			late:   func(ctx context.Context) { NoteFailure(ctx, outcomeOf("crash")); noteSource(ctx, "b") },
			want:   callRecord{reached: true, source: "a"},
		},
		{
			name:   "through call_tool",
			during: func(ctx context.Context) { noteTool(ctx, "wire"); noteSource(ctx, "a") },
			late:   func(ctx context.Context) { noteTool(ctx, "other") },
			want:   callRecord{reached: true, source: "a", tool: "wire"},
		},
		{
			name:     "run detached",
			during:   func(ctx context.Context) { noteSource(ctx, "first request's") },
			late:     func(ctx context.Context) { noteSource(ctx, "late") },
			detached: &callRecord{reached: true, source: "asker"},
			want:     callRecord{reached: true, source: "asker"},
		},
		{
			name:   "source failed",
			during: func(ctx context.Context) { noteSource(ctx, "a"); NoteFailure(ctx, outcomeOf("timeout")) },
			late:   func(ctx context.Context) { NoteFailure(ctx, outcomeOf("crash")) },
			want:   callRecord{reached: true, source: "a", failed: "timeout"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ticket := &callTicket{}
			ctx := ticket.recording(context.Background())
			tc.during(ctx)
			got := ticket.record(tc.detached)
			tc.late(ctx)
			if got != tc.want {
				t.Errorf("record = %+v, want %+v", got, tc.want)
			}
			if again := ticket.record(nil); again != tc.want {
				t.Errorf("record after late writes = %+v, want %+v", again, tc.want)
			}
		})
	}
}

// TestCallRecordWritersRace runs a call's writers against its ticket
// taking the record, as a detached call's source does (-race judges).
func TestCallRecordWritersRace(t *testing.T) {
	ticket := &callTicket{}
	ctx := ticket.recording(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 100 {
			noteSource(ctx, "a")
			NoteFailure(ctx, outcomeOf("crash"))
			noteAnswer(ctx, nil, nil)
		}
	})
	rec := ticket.record(nil)
	wg.Wait()
	if again := ticket.record(nil); again != rec {
		t.Errorf("record changed after it was taken: %+v, then %+v", rec, again)
	}
}

// TestRecorderOutsideACall: the writers do nothing where no call runs (a
// source called outside a tools/call, as by a prompt).
func TestRecorderOutsideACall(t *testing.T) {
	ctx := context.Background()
	noteSource(ctx, "a")
	NoteFailure(ctx, outcomeOf("crash"))
	if r := recorderOf(ctx); r != nil {
		t.Fatalf("recorder outside a call = %v, want none", r)
	}
}
