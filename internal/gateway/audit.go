package gateway

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// audit logs one tool call as a structured line: who called (the caller the
// HTTP side put in the request's TokenInfo: an OAuth sub, or a static
// token's place in the config), the tool it reached (and the meta-tool it
// went through, as via), the source that served it, the outcome and the
// duration. Arguments and results are never logged: they may hold secrets.
// Tool names are the metrics' labels, so a name a client made up shows as
// "(unknown)" and cannot write into the log.
func (s *session) audit(ctx context.Context, r *mcp.CallToolRequest, tool, via, source, outcome string, took time.Duration) {
	attrs := make([]any, 0, 12)
	if caller := callerOf(r); caller != "" {
		attrs = append(attrs, "caller", caller)
	}
	attrs = append(attrs, "tool", tool)
	if via != "" {
		attrs = append(attrs, "via", via)
	}
	attrs = append(attrs, "source", source, "outcome", outcome, "took", took)
	s.g.log.InfoContext(ctx, "tool call", attrs...)
}

// callerOf names the caller of a request, from its TokenInfo.
func callerOf(r *mcp.CallToolRequest) string {
	if r.Extra == nil || r.Extra.TokenInfo == nil {
		return ""
	}
	if c, ok := r.Extra.TokenInfo.Extra["caller"].(string); ok {
		return c
	}
	return r.Extra.TokenInfo.UserID
}
