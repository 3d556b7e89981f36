package gateway

import (
	"context"
	"log/slog"
	"time"
)

// audit logs one tool call as a structured line: who called (see
// callerOf: an OAuth sub, a static token's name in the config, "stdio" or
// "anonymous"), the tool it reached (and the meta-tool it went through, as
// via), the source that served it, the outcome, the path it took (see
// gate.go) and the duration. Arguments and results are never logged: they may hold
// secrets. Tool names are the metrics' labels, so a name a client made up
// shows as "(unknown)" and cannot write into the log.
func (t *callTicket) audit(ctx context.Context, tool, via, source, outcome string, took time.Duration) {
	if !t.g.log.Enabled(ctx, slog.LevelInfo) {
		return // building the line costs allocations on the byte paths
	}
	attrs := make([]any, 0, 16)
	attrs = append(attrs, "caller", t.caller.name, "tool", tool)
	if via != "" {
		attrs = append(attrs, "via", via)
	}
	attrs = append(attrs, "source", source, "outcome", outcome, "path", t.path, "took", took)
	if t.spans != nil {
		attrs = append(attrs, "trace_id", t.spans.server.SpanContext().TraceID().String())
	}
	t.g.log.InfoContext(ctx, "tool call", attrs...)
}
