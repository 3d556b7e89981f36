package gateway

import (
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CompleteResultForTest exposes completeResult to the external tests.
func CompleteResultForTest(res *mcp.CallToolResult) *mcp.CallToolResult { return completeResult(res) }

// OnPendingWait makes g call fn whenever a request starts waiting for
// pending sources. Set it before any client connects.
func OnPendingWait(g *Gateway, fn func()) { g.waitHook = fn }

// LiveViewsForTest counts the groups-mode views the gateway keeps.
func (g *Gateway) LiveViewsForTest() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, wp := range g.live {
		if wp.Value() != nil {
			n++
		}
	}
	return n
}

// SetMaxListWait replaces MaxListWait for g. Set it before any client
// connects.
func SetMaxListWait(g *Gateway, d time.Duration) { g.maxListWait = d }
