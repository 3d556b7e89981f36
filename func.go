package toolfold

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Func adapts a plain function to a typed tool handler, for the common tool
// that needs neither the request nor a hand-built result:
//
//	toolfold.AddTool(g, &mcp.Tool{Name: "add"}, toolfold.Func(func(ctx context.Context, in AddIn) (AddOut, error) {
//		return AddOut{Sum: in.A + in.B}, nil
//	}))
//
// The output becomes structured content and the same JSON as text; an error
// becomes a tool error the agent can read. An output that is not a JSON
// object (a string, a number, a list) is sent as {"result": <output>}, since
// MCP requires object results (see AddTool).
func Func[In, Out any](f func(ctx context.Context, in In) (Out, error)) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		out, err := f(ctx, in)
		return nil, out, err
	}
}
