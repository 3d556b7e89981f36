package gateway

import "github.com/modelcontextprotocol/go-sdk/mcp"

// CompleteResultForTest exposes completeResult to the external tests.
func CompleteResultForTest(res *mcp.CallToolResult) *mcp.CallToolResult { return completeResult(res) }

// OnPendingWait makes g call fn whenever a request starts waiting for
// pending sources. Set it before any client connects.
func OnPendingWait(g *Gateway, fn func()) { g.waitHook = fn }
