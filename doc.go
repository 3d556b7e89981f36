// Package toolfold writes MCP servers whose tools live in groups that an
// agent unfolds on demand, and is the core of the toolfold gateway.
//
// A server built with this package lists only what a client has enabled
// (or, for clients that never refresh their tool list, a few discovery
// tools), so a large tool surface no longer floods the model's context:
//
//	srv := toolfold.NewServer(&toolfold.Options{Name: "acme", Version: "1.0.0"})
//	issues := srv.Group("issues", &toolfold.GroupOptions{Description: "Issue tracking"})
//	toolfold.AddTool(issues, &mcp.Tool{Name: "create_issue", Description: "Open an issue"}, createIssue)
//	repos := srv.Group("repos", &toolfold.GroupOptions{Description: "Repositories"})
//	repos.Group("branches", &toolfold.GroupOptions{Description: "Branches"})
//	err := srv.Run(ctx, &mcp.StdioTransport{})
//
// Tools are ordinary MCP tools from the official Go SDK
// (github.com/modelcontextprotocol/go-sdk/mcp): typed handlers infer their
// input and output schemas from Go types exactly as mcp.AddTool does.
// Options choose the presentation (Mode), how a group's tools appear
// (Exposition: one tool each, or one tool with an "action" per tool), a cap
// on visible tools (MaxTools) and the groups every client starts with.
//
// Two rules follow from how tools are exposed. Tool names are unique across
// the whole server, whatever their group: in the flat exposition they are
// the names clients call. And in the grouped exposition the actions of a
// group share one input schema whose properties are the union of theirs,
// described by the first action that declares each one; give a parameter
// the same meaning in every tool of a group (each call is still checked
// against its own tool's schema).
package toolfold
