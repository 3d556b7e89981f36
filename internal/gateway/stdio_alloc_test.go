package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/racetest"
)

// TestStdioPingAllocations holds a typed-path message on stdio (a ping,
// from the line read to the answer written, the test's own reading
// included) to a few kilobytes: the screen builds the request itself
// (decodeRequest) and hands it to the SDK (sdkshim.DecodedConn). Each
// decode by the SDK's decoder allocates a 64 KB buffer: its own stdio
// transport decoded every line three times (167 KB a ping), and the
// screen's check once (68 KB). Allocations are counted, not timed, so
// this is exact under any load.
func TestStdioPingAllocations(t *testing.T) {
	if racetest.Enabled {
		t.Skip("the race detector changes allocation counts; scripts/test.sh runs this without it")
	}
	g := newGateway(t, gateway.Options{}, nil)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.ServeStdio(ctx, inR, outW) }()
	t.Cleanup(func() {
		inW.Close()
		cancel()
		<-done
		outW.Close()
	})
	lines := bufio.NewReaderSize(outR, 64<<10)
	// ask sends one line and reads until the answer with this id.
	ask := func(id int, line string) {
		t.Helper()
		if _, err := io.WriteString(inW, line); err != nil {
			t.Fatal(err)
		}
		want := fmt.Appendf(nil, `"id":%d`, id)
		for {
			got, err := lines.ReadSlice('\n')
			if err != nil {
				t.Fatalf("reading the answer to %d: %v", id, err)
			}
			if bytes.Contains(got, want) {
				return
			}
		}
	}
	ask(1, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"alloc","version":"1"}}}`+"\n")
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	pings := make([]string, 400)
	for i := range pings {
		pings[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", i+2)
	}
	for i := range 100 { // warm up
		ask(i+2, pings[i])
	}
	const counted = 300
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 100; i < 100+counted; i++ {
		ask(i+2, pings[i])
	}
	runtime.ReadMemStats(&after)
	perPing := (after.TotalAlloc - before.TotalAlloc) / counted
	t.Logf("a ping allocates %d bytes in %d allocations", perPing, (after.Mallocs-before.Mallocs)/counted)
	const most = 16 << 10
	if perPing > most {
		t.Errorf("a ping over stdio allocates %d bytes, want at most %d", perPing, most)
	}
}
