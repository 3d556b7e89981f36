package sdkshim

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The list_changed notifications of the three lists.
const (
	ToolsListChanged     = "notifications/tools/list_changed"
	PromptsListChanged   = "notifications/prompts/list_changed"
	ResourcesListChanged = "notifications/resources/list_changed"
)

// ListChangedTap sends one list's list_changed to one session, now, in
// place of the SDK's own. The SDK sends a list_changed only from a change
// of its registry, debounced on a timer with a background context: after
// the result of the call that made the change, to every session of the
// server, and under load twice. ServerSession has no method to send one
// (docs/sdk-workarounds.md, item 3, proposes
// ServerSession.NotifyListChanged and ServerOptions.ManualListChanged).
//
// So the tap is a sending middleware that drops the SDK's notification and
// keeps the next handler the SDK builds it with, through which Notify
// sends past the drop. That relies on AddSendingMiddleware building the
// chain before it returns (TestSDKBuildsTheSendingChainAtOnce), and on the
// SDK's own notification passing the middleware
// (TestSDKAnnouncesToolChangesThroughTheSendingMiddleware).
type ListChangedTap struct {
	method string
	next   mcp.MethodHandler
}

// TapListChanged adds the tap for method (one of the three *ListChanged
// constants) to s's sending middleware. Call it before s serves.
func TapListChanged(s *mcp.Server, method string) (*ListChangedTap, error) {
	if _, err := listChangedRequest(method, nil); err != nil {
		return nil, err
	}
	t := &ListChangedTap{method: method}
	s.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		t.next = next
		return func(ctx context.Context, m string, req mcp.Request) (mcp.Result, error) {
			if m == method {
				return nil, nil // dropped: the owner of the tap announces
			}
			return next(ctx, m, req)
		}
	})
	if t.next == nil {
		return nil, errors.New("the SDK did not hand the sending middleware its next handler when it was added; list changes cannot be sent past the tap (see TestSDKBuildsTheSendingChainAtOnce)")
	}
	return t, nil
}

// Notify sends the tap's list_changed to ss alone. Given the context of a
// request ss is handling, it travels on that request's response stream over
// streamable HTTP, and on every transport before the request's result.
func (t *ListChangedTap) Notify(ctx context.Context, ss *mcp.ServerSession) error {
	req, err := listChangedRequest(t.method, ss)
	if err != nil {
		return err
	}
	if _, err := t.next(ctx, t.method, req); err != nil {
		return fmt.Errorf("sending %s: %w", t.method, err)
	}
	return nil
}

// listChangedRequest is the notification the SDK sends for method.
func listChangedRequest(method string, ss *mcp.ServerSession) (mcp.Request, error) {
	switch method {
	case ToolsListChanged:
		return &mcp.ServerRequest[*mcp.ToolListChangedParams]{Session: ss, Params: &mcp.ToolListChangedParams{}}, nil
	case PromptsListChanged:
		return &mcp.ServerRequest[*mcp.PromptListChangedParams]{Session: ss, Params: &mcp.PromptListChangedParams{}}, nil
	case ResourcesListChanged:
		return &mcp.ServerRequest[*mcp.ResourceListChangedParams]{Session: ss, Params: &mcp.ResourceListChangedParams{}}, nil
	}
	return nil, fmt.Errorf("%q is not a list_changed notification; use %s, %s or %s", method, ToolsListChanged, PromptsListChanged, ResourcesListChanged)
}
