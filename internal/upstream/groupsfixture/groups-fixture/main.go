// Command groups-fixture serves the groupsfixture MCP server over stdio, for
// end-to-end tests of upstreams that serve the groups extension.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/upstream/groupsfixture"
)

func main() {
	s := groupsfixture.NewInstructed(os.Getenv(groupsfixture.InstructionsEnv))
	if err := s.Run(context.Background(), s.Transport(&mcp.StdioTransport{})); err != nil {
		fmt.Fprintln(os.Stderr, "groups-fixture:", err)
		os.Exit(1)
	}
}
