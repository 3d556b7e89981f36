package sdkshim_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/sdkshim"
)

// TestChatterOfTheSDKIsDebug: at the default level (info) the SDK's session
// notes are hidden; its warnings still show; at debug everything shows.
func TestChatterOfTheSDKIsDebug(t *testing.T) {
	for _, tt := range []struct {
		level slog.Level
		want  []string
		not   []string
	}{
		{slog.LevelInfo, []string{"sdk trouble"}, []string{"server session connected"}},
		{slog.LevelDebug, []string{"sdk trouble", "server session connected"}, nil},
	} {
		var buf bytes.Buffer
		l := sdkshim.Logger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tt.level})))
		l.Info("server session connected", "session_id", "")
		l.Warn("sdk trouble")
		for _, w := range tt.want {
			if !strings.Contains(buf.String(), w) {
				t.Errorf("level %v: %q is missing:\n%s", tt.level, w, buf.String())
			}
		}
		for _, w := range tt.not {
			if strings.Contains(buf.String(), w) {
				t.Errorf("level %v: %q shows:\n%s", tt.level, w, buf.String())
			}
		}
	}
}

// TestSDKLogsSessionsAtInfo: a bare SDK server logs a session's start at
// INFO, which is why Logger demotes its INFO records. When this fails, the
// SDK logs sessions at DEBUG and Logger may go.
func TestSDKLogsSessionsAtInfo(t *testing.T) {
	var buf lockedBuffer
	s := mcp.NewServer(&mcp.Implementation{Name: "bare"}, &mcp.ServerOptions{
		Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})),
	})
	bareServer(t, s, nil)
	if !strings.Contains(buf.String(), "level=INFO") {
		t.Fatalf("a session's start logged nothing at INFO:\n%s", buf.String())
	}
}
