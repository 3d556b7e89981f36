package sdkshim

import "github.com/modelcontextprotocol/go-sdk/mcp"

// CompleteByRoundTripForTest exposes the encoding Complete, which the
// tools/call one must agree with.
func CompleteByRoundTripForTest(res *mcp.CallToolResult) *mcp.CallToolResult {
	return completeByRoundTrip(res)
}
