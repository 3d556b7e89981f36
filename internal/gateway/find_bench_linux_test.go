package gateway_test

import (
	"context"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/view"
)

// processCPU is the CPU time the whole test process has used: client,
// gateway and garbage collector together, what one round trip costs the
// machine.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFindToolsOverStdio times round trips over toolfold's stdio
// session at 20,000 tools in the search mode, with the Go SDK's client as
// the bench's scale run has it: a ping (framing and both SDKs), find_tools
// (the same plus ranking and a kilobytes-long answer) and describe_tools of
// one tool (a meta-tool call with a short answer). The differences between
// them say where a find_tools call's wall time goes beyond a round trip.
// cpu-µs/op is the whole process's CPU (both ends and the GC).
func BenchmarkFindToolsOverStdio(b *testing.B) {
	space, err := view.NewSpace(catalogtest.Build(b, catalogtest.Scaled(b, 20000)), nil)
	if err != nil {
		b.Fatal(err)
	}
	g, err := gateway.New(space, &gateway.Options{Mode: expose.Search})
	if err != nil {
		b.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.ServeStdio(ctx, inR, outW) }()
	b.Cleanup(func() {
		cancel()
		inW.Close()
		go io.Copy(io.Discard, outR)
		<-done
	})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	queries := []string{"list the open pull requests on github", "send a message to a slack channel", "create a calendar event", "search files in the drive", "query the database table"}
	ops := []struct {
		name string
		op   func(i int) error
	}{
		{"ping", func(int) error { return cs.Ping(ctx, nil) }},
		{"find", func(i int) error {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "find_tools", Arguments: map[string]any{"query": queries[i%len(queries)]}})
			if err == nil && res.IsError {
				b.Fatalf("find_tools: %v", res.Content)
			}
			return err
		}},
		{"describe", func(int) error {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "describe_tools", Arguments: map[string]any{"names": []string{"nonexistent_tool"}}})
			if err == nil && !res.IsError && len(res.Content) == 0 {
				b.Fatalf("describe_tools answered nothing")
			}
			return err
		}},
	}
	for _, o := range ops {
		b.Run("op="+o.name, func(b *testing.B) {
			b.ReportAllocs()
			start := processCPU(b)
			i := 0
			for b.Loop() {
				if err := o.op(i); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64((processCPU(b)-start).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}
