// Command groups-fixture serves the groupsfixture MCP server over stdio, for
// end-to-end tests of upstreams that serve the grouping draft or skills
// (groupsfixture.ModeEnv picks which).
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/upstream/groupsfixture"
)

func main() {
	mode, err := groupsfixture.ParseMode(os.Getenv(groupsfixture.ModeEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "groups-fixture:", err)
		os.Exit(2)
	}
	s := groupsfixture.NewWith(groupsfixture.Options{Mode: mode, Instructions: os.Getenv(groupsfixture.InstructionsEnv)})
	if err := s.Run(context.Background(), s.Transport(&mcp.StdioTransport{})); err != nil {
		fmt.Fprintln(os.Stderr, "groups-fixture:", err)
		os.Exit(1)
	}
}
