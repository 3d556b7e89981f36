package sdkshim_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/sdkshim"
)

// failingPrompt serves one prompt, "p", that fails with err.
func failingPrompt(err error) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "bare"}, nil)
	s.AddPrompt(&mcp.Prompt{Name: "p"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return nil, err
	})
	return s
}

// TestSDKSendsCodeZeroForPlainErrors pins the SDK behaviour WithErrorCodes
// works around: a handler's error that is not a *jsonrpc.Error reaches the
// client with code 0. If an SDK upgrade gives such errors a code, this
// fails, and the workaround can go.
func TestSDKSendsCodeZeroForPlainErrors(t *testing.T) {
	cs, _ := bareServer(t, failingPrompt(errors.New("plain")), nil)
	_, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "p"})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != 0 {
		t.Fatalf("a plain handler error reached the client as %#v; the SDK no longer sends code 0, so WithErrorCodes may go", err)
	}
}

var errMissing = errors.New("missing")

func TestWithErrorCodes(t *testing.T) {
	codeOf := func(err error) (int64, bool) {
		if errors.Is(err, errMissing) {
			return jsonrpc.CodeInvalidParams, true
		}
		return 0, false
	}
	for _, tt := range []struct {
		name     string
		err      error
		wantCode int64
		wantMsg  string
	}{
		{"plain", errors.New("the disk is full"), jsonrpc.CodeInternalError, "the disk is full"},
		{"known to the owner", fmt.Errorf("no prompt q: %w", errMissing), jsonrpc.CodeInvalidParams, "no prompt q"},
		{"cancelled", fmt.Errorf("asking upstream: %w", context.Canceled), jsonrpc.CodeInternalError, "the request was cancelled: asking upstream"},
		{"a JSON-RPC error keeps its code", fmt.Errorf("wrapped: %w", &jsonrpc.Error{Code: -32042, Message: "own"}), -32042, "own"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := failingPrompt(tt.err)
			s.AddReceivingMiddleware(sdkshim.WithErrorCodes(codeOf))
			cs, _ := bareServer(t, s, nil)
			_, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "p"})
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != tt.wantCode || !strings.Contains(rpcErr.Message, tt.wantMsg) {
				t.Fatalf("got %#v; want code %d and a message with %q", err, tt.wantCode, tt.wantMsg)
			}
		})
	}
}
