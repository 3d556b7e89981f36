package gateway

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
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
		l := sdkLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tt.level})))
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
