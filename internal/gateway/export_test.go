package gateway

import "github.com/modelcontextprotocol/go-sdk/mcp"

// CompleteResultForTest exposes completeResult to the external tests.
func CompleteResultForTest(res *mcp.CallToolResult) *mcp.CallToolResult { return completeResult(res) }
