package sdkshim_test

import (
	"context"
	"encoding/json"
	"testing"
	"testing/synctest"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSDKReturnsAResultBeforeItsProgressIsHandled: a client hands a call's
// result to its caller while a progress notification the server sent
// before it is still being handled. The upstream package counts the
// notifications read and handled, and CallTool waits for the handler to
// catch up (upstream progressCount, route.go), so that a call's last
// progress reaches the gateway's client before its result. When this
// fails, the SDK orders them itself and the count may go.
func TestSDKReturnsAResultBeforeItsProgressIsHandled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := mcp.NewServer(&mcp.Implementation{Name: "bare"}, nil)
		s.AddTool(&mcp.Tool{Name: "slow", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: 1})
			return &mcp.CallToolResult{}, err
		})
		entered, release := make(chan struct{}), make(chan struct{})
		c := mcp.NewClient(&mcp.Implementation{Name: "pin", Version: "1"}, &mcp.ClientOptions{
			ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
				close(entered)
				<-release
			},
		})
		ct, st := mcp.NewInMemoryTransports()
		ss, err := s.Connect(t.Context(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := c.Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			params := &mcp.CallToolParams{Name: "slow"}
			params.SetProgressToken("p")
			_, err := cs.CallTool(t.Context(), params)
			done <- err
		}()
		<-entered
		synctest.Wait() // every goroutine is blocked: the call returned, or waits for the handler
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		default:
			close(release)
			<-done
			t.Fatal("the call's result waited for its progress handler; the SDK orders them now, so upstream's progressCount may go")
		}
		close(release)
		cs.Close()
		ss.Wait()
	})
}
