// Command baresdk is the smallest useful MCP server written with the
// official Go SDK alone: one typed tool over stdio. It is not a product; it
// is the yardstick for what the toolfold library adds to a server's binary
// and dependencies (README, "The Go library"):
//
//	go list -deps ./bench/baresdk | wc -l
//	go build -o /tmp/baresdk ./bench/baresdk && stat -c %s /tmp/baresdk
package main

import (
	"context"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type addOut struct {
	Sum int `json:"sum"`
}

func main() {
	srv := mcp.NewServer(&mcp.Implementation{Name: "baresdk", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "add", Description: "Add two integers."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
			return nil, addOut{Sum: in.A + in.B}, nil
		})
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
