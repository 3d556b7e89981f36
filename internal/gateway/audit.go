package gateway

import (
	"context"
	"errors"
	"log/slog"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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

// maxAuditedName bounds the prompt name or URI an audit line quotes.
const maxAuditedName = 512

// auditRead logs one prompts/get or resources/read as a tool call's line
// is logged: who asked, what (key names it: the prompt's name or the
// resource's URI, or "(unknown)" for one no source serves, so that a name
// a client made up cannot write into the log), the source that served it,
// the outcome (ok, refused, error, cancelled) and the duration. Arguments
// and contents are never logged. A round that asks the client for input is
// not a line: the request that gets the result is.
func (g *Gateway) auditRead(ctx context.Context, extra *mcp.RequestExtra, msg, key, what, source string, err error, start time.Time) {
	if !g.log.Enabled(ctx, slog.LevelInfo) {
		return
	}
	var info *auth.TokenInfo
	if extra != nil {
		info = extra.TokenInfo
	}
	outcome := "ok"
	var rpcErr *jsonrpc.Error
	switch {
	case err == nil:
	case ctx.Err() != nil:
		outcome = "cancelled"
	case errors.As(err, &rpcErr) && rpcErr.Code == jsonrpc.CodeInvalidParams:
		outcome = "refused"
	default:
		outcome = "error"
	}
	if len(what) > maxAuditedName {
		// A template's URI can be as long as a message: the line keeps
		// its head, cut on a character's boundary.
		cut := maxAuditedName
		for cut > 0 && !utf8.RuneStart(what[cut]) {
			cut--
		}
		what = what[:cut] + "…"
	}
	g.log.InfoContext(ctx, msg, "caller", callerOf(ctx, info).name, key, what, "source", source, "outcome", outcome, "took", time.Since(start))
}
