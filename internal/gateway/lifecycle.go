package gateway

import (
	"context"
)

// Session is what WaitOrCancel needs of a session: the SDK's
// *mcp.ServerSession and *mcp.ClientSession are ones.
type Session interface {
	Wait() error
	Close() error
}

// WaitOrCancel waits for session to end and returns what its Wait
// returned; if ctx ends first it closes the session, waits for it to end,
// and returns ctx.Err(), as the SDK's own Run does. A session's Wait alone
// never looks at ctx. Every Run and serve loop that holds a session ends
// through it, so they all keep the same contract.
func WaitOrCancel(ctx context.Context, session Session) error {
	done := make(chan error, 1)
	go func() { done <- session.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		_ = session.Close()
		<-done
		return ctx.Err()
	}
}
