package upstream

import (
	"context"
	"encoding/json"
	"os/exec"
	"runtime"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/racetest"
	"github.com/toolfold/toolfold/internal/rawcall"
)

// BenchmarkCallThroughManager measures what the Manager adds to a tools/call:
// each transport is measured twice against the same fixture server, once with
// the SDK client calling it directly and once through Manager.CallTool, so the
// difference of the two ns/op is the Manager's cost.
//
//	go test -run '^$' -bench CallThroughManager -benchmem ./internal/upstream/
func BenchmarkCallThroughManager(b *testing.B) {
	args := map[string]any{"a": 1, "b": 2}
	direct := func(b *testing.B, transport func() mcp.Transport, parallel bool) {
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		cs, err := client.Connect(context.Background(), transport(), nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		run(b, parallel, func() error {
			_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "add", Arguments: args})
			return err
		})
	}
	managed := func(b *testing.B, cfg config.ServerConfig, opts *Options, parallel bool) {
		opts.DisableCache = true
		m := New(map[string]config.ServerConfig{"fx": cfg}, opts)
		defer m.Close()
		if _, err := m.Tools(context.Background(), "fx"); err != nil { // start outside the timing
			b.Fatal(err)
		}
		run(b, parallel, func() error {
			_, err := m.CallTool(context.Background(), "fx", &mcp.CallToolParams{Name: "add", Arguments: args}, nil)
			return err
		})
	}
	stdio := fixture(b, "serve", nil)
	stdioTransport := func() mcp.Transport {
		cmd := exec.Command(stdio.Command)
		cmd.Env = childEnv(func(string) (string, bool) { return "", false }, stdio.Env)
		return &mcp.CommandTransport{Command: cmd}
	}
	memServer := newFixtureServer()
	memTransport := func() mcp.Transport {
		c, s := mcp.NewInMemoryTransports()
		if _, err := memServer.Connect(context.Background(), s, nil); err != nil {
			b.Fatal(err)
		}
		return c
	}
	b.Run("inmemory/direct", func(b *testing.B) { direct(b, memTransport, false) })
	b.Run("inmemory/manager", func(b *testing.B) {
		managed(b, config.ServerConfig{Command: "unused"}, &Options{dial: inMemoryDialer(memServer)}, false)
	})
	b.Run("stdio/direct", func(b *testing.B) { direct(b, stdioTransport, false) })
	b.Run("stdio/manager", func(b *testing.B) { managed(b, stdio, &Options{}, false) })
	b.Run("stdio-16-callers/direct", func(b *testing.B) { direct(b, stdioTransport, true) })
	b.Run("stdio-16-callers/manager", func(b *testing.B) { managed(b, stdio, &Options{}, true) })
}

// run calls f b.N times, from 16 goroutines when parallel.
func run(b *testing.B, parallel bool, f func() error) {
	b.ReportAllocs()
	b.ResetTimer()
	if !parallel {
		for b.Loop() {
			if err := f(); err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	b.SetParallelism(max(16/max(1, testingProcs()), 1))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := f(); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func testingProcs() int { return runtime.GOMAXPROCS(0) }

// TestForwardRawAllocations holds the upstream's share of a forwarded call
// to the allocations the bench README counts (4: the pending call, its id,
// the request bytes, the function that withdraws it), with room for one
// the runtime makes now and then: with the gateway's 5 it keeps issue 13's
// goal of 10 per forwarded call. Counted, not timed.
func TestForwardRawAllocations(t *testing.T) {
	if racetest.Enabled {
		t.Skip("the race detector changes allocation counts; scripts/test.sh runs this without it")
	}
	m := New(map[string]config.ServerConfig{"fx": fixture(t, "serve", nil)}, &Options{DisableCache: true})
	defer m.Close()
	if _, err := m.Tools(context.Background(), "fx"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	call := &rawcall.Call{Arguments: json.RawMessage(`{"a":1,"b":2}`)}
	call.Done = func(res json.RawMessage, err error) { done <- err }
	const most = 5
	allocs := testing.AllocsPerRun(200, func() {
		if _, ok := m.ForwardRaw("fx", "add", call); !ok {
			t.Fatal("ForwardRaw refused the call")
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
	if allocs > most {
		t.Errorf("a forwarded call allocates %.2f times on the upstream side, want at most %d", allocs, most)
	}
}

// BenchmarkForwardRaw is one fast-path tools/call (ForwardRaw) to the
// fixture over stdio, one at a time: the request written beside the SDK's
// messages, the answer taken off stdout and handed to Done. allocs/op
// counts this process only (the fixture is another); compare with
// BenchmarkCallThroughManager/stdio.
//
//	go test -run '^$' -bench ForwardRaw -benchmem ./internal/upstream/
func BenchmarkForwardRaw(b *testing.B) {
	m := New(map[string]config.ServerConfig{"fx": fixture(b, "serve", nil)}, &Options{DisableCache: true})
	defer m.Close()
	if _, err := m.Tools(context.Background(), "fx"); err != nil { // start outside the timing
		b.Fatal(err)
	}
	done := make(chan error, 1)
	call := &rawcall.Call{Arguments: json.RawMessage(`{"a":1,"b":2}`)}
	call.Done = func(res json.RawMessage, err error) { done <- err }
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := m.ForwardRaw("fx", "add", call); !ok {
			b.Fatal("ForwardRaw refused the call")
		}
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
}
