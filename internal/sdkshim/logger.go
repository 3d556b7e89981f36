package sdkshim

import (
	"context"
	"log/slog"
)

// Logger is l for the SDK's servers and handlers. The SDK logs every
// session's start and end at INFO ("server session connected"
// session_id=""; TestSDKLogsSessionsAtInfo), which says nothing an
// operator needs beside toolfold's own "client connected" line: its INFO
// and DEBUG records are kept at DEBUG, its warnings and errors pass as
// they are.
func Logger(l *slog.Logger) *slog.Logger {
	return slog.New(demoted{l.Handler()})
}

type demoted struct{ next slog.Handler }

func (d demoted) Enabled(ctx context.Context, level slog.Level) bool {
	if level < slog.LevelWarn {
		level = slog.LevelDebug
	}
	return d.next.Enabled(ctx, level)
}

func (d demoted) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		r.Level = slog.LevelDebug
	}
	return d.next.Handle(ctx, r)
}

func (d demoted) WithAttrs(attrs []slog.Attr) slog.Handler { return demoted{d.next.WithAttrs(attrs)} }
func (d demoted) WithGroup(name string) slog.Handler       { return demoted{d.next.WithGroup(name)} }
