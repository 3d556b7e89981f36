package upstream

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/config"
)

func TestProgressIsRelayedWithCallersToken(t *testing.T) {
	m := newTestManager(t, map[string]config.ServerConfig{"fx": fixture(t, "serve", nil)}, nil)
	var mu sync.Mutex
	var got []*mcp.ProgressNotificationParams
	params := &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": 300, "steps": 3}}
	params.SetProgressToken("downstream-token-7")
	// The notifications must come with the caller's context: on streamable
	// HTTP that is what puts them on the caller's own response stream.
	type callerKey struct{}
	ctx := context.WithValue(context.Background(), callerKey{}, "caller")
	withCallerCtx := 0
	res, err := m.CallTool(ctx, "fx", params, &CallOptions{
		OnProgress: func(ctx context.Context, p *mcp.ProgressNotificationParams) {
			mu.Lock()
			got = append(got, p)
			if ctx.Value(callerKey{}) == "caller" {
				withCallerCtx++
			}
			mu.Unlock()
		},
	})
	if err != nil || text(res) != "slept" {
		t.Fatalf("call: %v %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 {
		t.Fatalf("got %d progress notifications, want 3", len(got))
	}
	if withCallerCtx != len(got) {
		t.Errorf("%d of %d notifications came with the caller's context", withCallerCtx, len(got))
	}
	for i, p := range got {
		if p.ProgressToken != "downstream-token-7" || p.Progress != float64(i+1) || p.Total != 3 || p.Message == "" {
			t.Errorf("notification %d: %+v", i, p)
		}
	}
	if params.GetProgressToken() != "downstream-token-7" {
		t.Errorf("the caller's params were changed: %v", params.Meta)
	}
}

func TestToolListChangedRefreshes(t *testing.T) {
	changed := make(chan string, 10)
	m := newTestManager(t, map[string]config.ServerConfig{"fx": fixture(t, "serve", nil)},
		&Options{OnToolsChanged: func(s string) { changed <- s }})
	mustCall(t, m, "fx", "pid", nil)
	<-changed // first discovery
	mustCall(t, m, "fx", "grow", nil)
	select {
	case s := <-changed:
		if s != "fx" {
			t.Errorf("OnToolsChanged(%q)", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("OnToolsChanged was not called after tools/list_changed")
	}
	tools, _ := m.CachedTools("fx")
	found := false
	for _, tl := range tools {
		found = found || tl.Name == "extra"
	}
	if !found {
		t.Errorf("the new tool is not in the list")
	}
	if got := mustCall(t, m, "fx", "extra", nil); got != "extra" {
		t.Errorf("extra = %q", got)
	}
}

// TestServerToClientRequests covers both routes of elicitation and roots: the
// multi-round-trip route (protocol 2026-07-28, where the request comes back in
// the call's result and is always attributed exactly) and the legacy route (a
// request on the connection, attributed to the single client with calls in
// flight).
func TestServerToClientRequests(t *testing.T) {
	for _, proto := range []string{"", "2025-11-25"} {
		name := "multi-round-trip"
		if proto != "" {
			name = "legacy " + proto
		}
		t.Run(name, func(t *testing.T) {
			events := newEventLog(t)
			m := newTestManager(t, map[string]config.ServerConfig{"fx": fixture(t, "serve", map[string]string{"FIXTURE_EVENT_LOG": events.path})},
				&Options{Forward: Forwarding{Elicitation: true, Roots: true}, ProtocolVersion: proto})
			alice := &fakeDownstream{name: "alice", roots: []string{"file:///alice", "file:///shared"}}
			res, err := m.CallTool(context.Background(), "fx", &mcp.CallToolParams{Name: "ask"}, &CallOptions{Downstream: alice})
			if err != nil || text(res) != "hello alice (accept)" {
				t.Fatalf("ask: %q, %v", textOrNil(res), err)
			}
			res, err = m.CallTool(context.Background(), "fx", &mcp.CallToolParams{Name: "roots"}, &CallOptions{Downstream: alice})
			if err != nil || text(res) != "file:///alice,file:///shared" {
				t.Fatalf("roots: %q, %v", textOrNil(res), err)
			}

			// No Downstream: the upstream is told the client cannot answer.
			res, err = m.CallTool(context.Background(), "fx", &mcp.CallToolParams{Name: "ask"}, nil)
			if err == nil && !res.IsError {
				t.Fatalf("ask without a downstream answered %q", text(res))
			}
			if msg := errorOf(err) + textOrNil(res); !strings.Contains(msg, "cannot answer") {
				t.Errorf("ask without a downstream: %q", msg)
			}

			// Two clients with calls in flight: on the legacy route the request
			// cannot be attributed and is refused; on the multi-round-trip
			// route it still reaches the right client.
			// Bob's call hangs until alice's ask is over.
			bob := &fakeDownstream{name: "bob"}
			bobCtx, endBob := context.WithCancel(context.Background())
			defer endBob()
			done := make(chan struct{})
			go func() {
				defer close(done)
				m.CallTool(bobCtx, "fx", &mcp.CallToolParams{Name: "hang"}, &CallOptions{Downstream: bob})
			}()
			events.wait(t, "started hang")
			res, err = m.CallTool(context.Background(), "fx", &mcp.CallToolParams{Name: "ask"}, &CallOptions{Downstream: alice})
			endBob()
			<-done
			if proto == "" {
				if err != nil || text(res) != "hello alice (accept)" {
					t.Errorf("ask beside another client's call: %q, %v", textOrNil(res), err)
				}
				return
			}
			msg := errorOf(err) + textOrNil(res)
			if !strings.Contains(msg, "requests from different clients are in flight") {
				t.Errorf("ask beside another client's call: %q", msg)
			}
		})
	}
}

func textOrNil(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	return text(res)
}

func TestAttribute(t *testing.T) {
	a, b := &fakeDownstream{name: "a"}, &fakeDownstream{name: "b"}
	parked := &waitingDownstream{fakeDownstream{name: "parked"}}
	tests := []struct {
		name     string
		inflight []Downstream
		fallback Downstream
		want     Downstream
		wantErr  string
	}{
		{"nothing in flight", nil, nil, nil, "no request that could ask is in flight"},
		{"nothing in flight, fallback", nil, b, b, ""},
		{"one call", []Downstream{a}, b, a, ""},
		{"two calls, one client", []Downstream{a, a}, nil, a, ""},
		{"two clients", []Downstream{a, b}, a, nil, "2 requests from different clients are in flight"},
		{"caller cannot answer", []Downstream{nil}, a, nil, "the client that made the request cannot answer it"},
		{"mixed", []Downstream{a, nil}, nil, nil, "from different clients"},
		{"beside a call waiting for its client", []Downstream{parked, a}, nil, a, ""},
		{"only a call waiting for its client", []Downstream{parked}, nil, nil, "no request that could ask is in flight"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cs calls
			for _, d := range tt.inflight {
				cs.add(&inflightCall{downstream: d}, "t")
			}
			got, _, err := cs.attribute("fx", "elicitation/create", tt.fallback)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), `elicitation/create from upstream "fx"`) {
					t.Errorf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// incomparable is a Downstream that cannot be compared with ==.
type incomparable struct {
	*fakeDownstream
	_ []int // a slice field makes the struct incomparable
}

func TestSameDownstreamDoesNotPanic(t *testing.T) {
	x, y := incomparable{}, incomparable{}
	if sameDownstream(x, y) {
		t.Error("incomparable values compared equal")
	}
}

func TestPassThroughNeedsCapability(t *testing.T) {
	m := newTestManager(t, map[string]config.ServerConfig{"fx": fixture(t, "serve", nil)}, nil)
	_, err := m.ListResources(context.Background(), "fx")
	if !errors.Is(err, ErrUnsupported) || errorOf(err) != `upstream "fx" does not offer resources` {
		t.Errorf("ListResources: %v", err)
	}
	if _, err := m.ListPrompts(context.Background(), "fx"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("ListPrompts: %v", err)
	}
	if err := m.SetLoggingLevel(context.Background(), "fx", "debug"); err != nil {
		t.Errorf("SetLoggingLevel on a server with logging: %v", err)
	}
}

// A settled call (its result is in) no longer claims requests, and a
// request is forwarded under the context of the call it belongs to.
func TestAttributeSkipsSettledCallsAndCarriesTheCallContext(t *testing.T) {
	type key struct{}
	a, b := &fakeDownstream{}, &fakeDownstream{}
	var cs calls
	old := cs.add(&inflightCall{downstream: a, ctx: context.WithValue(context.Background(), key{}, "a")}, "t")
	cs.add(&inflightCall{downstream: b, ctx: context.WithValue(context.Background(), key{}, "b")}, "t")
	if _, _, err := cs.attribute("fx", "elicitation/create", nil); err == nil {
		t.Fatal("two open calls from different clients must be ambiguous")
	}
	cs.settle(old)
	got, ctx, err := cs.attribute("fx", "elicitation/create", nil)
	if err != nil || got != Downstream(b) || ctx.Value(key{}) != "b" {
		t.Errorf("got %v, ctx value %v, err %v; want b's downstream and context", got, ctx.Value(key{}), err)
	}
	forward, done := underCall(context.Background(), ctx)
	defer done()
	if forward.Value(key{}) != "b" {
		t.Error("the forwarded request lost the call's context values")
	}
}

// TestMultiRoundAsksEveryRound: an upstream that asks twice gets both
// rounds answered, on the 2026-07-28 protocol (both rounds in results) and
// on a session protocol (the first as a request on the connection, the
// second in a plain result without resultType).
func TestMultiRoundAsksEveryRound(t *testing.T) {
	for _, proto := range []string{"", "2025-11-25"} {
		t.Run("protocol "+proto, func(t *testing.T) {
			m := newTestManager(t, map[string]config.ServerConfig{"fx": fixture(t, "serve", nil)},
				&Options{Forward: Forwarding{Elicitation: true}, ProtocolVersion: proto})
			res, err := m.CallTool(context.Background(), "fx", &mcp.CallToolParams{Name: "twostep"}, &CallOptions{Downstream: &fakeDownstream{name: "alice"}})
			if err != nil || text(res) != "alice likes alice" {
				t.Fatalf("twostep: %q, %v", textOrNil(res), err)
			}
		})
	}
}

// TestInputRequesterGetsTheUpstreamsRound: a Downstream that takes a round
// at once gets the upstream's requests with the upstream's own keys.
func TestInputRequesterGetsTheUpstreamsRound(t *testing.T) {
	m := newTestManager(t, map[string]config.ServerConfig{"fx": fixture(t, "serve", nil)},
		&Options{Forward: Forwarding{Elicitation: true}})
	d := &batchDownstream{fakeDownstream: fakeDownstream{name: "bob"}}
	res, err := m.CallTool(context.Background(), "fx", &mcp.CallToolParams{Name: "twostep"}, &CallOptions{Downstream: d})
	if err != nil || text(res) != "bob likes bob" {
		t.Fatalf("twostep: %q, %v", textOrNil(res), err)
	}
	if got := fmt.Sprint(d.rounds); got != "[[name] [colour]]" {
		t.Errorf("rounds = %s", got)
	}
}

// TestRootsDuringACallReachTheCaller: without Forwarding.Roots the roots
// capability is not advertised and a roots/list outside any call is
// refused, but one an upstream sends during a call goes to that call's
// client.
func TestRootsDuringACallReachTheCaller(t *testing.T) {
	m := newTestManager(t, map[string]config.ServerConfig{"fx": fixture(t, "serve", nil)},
		&Options{Forward: Forwarding{Elicitation: true}, ProtocolVersion: "2025-11-25"})
	alice := &fakeDownstream{name: "alice", roots: []string{"file:///alice"}}
	res, err := m.CallTool(context.Background(), "fx", &mcp.CallToolParams{Name: "roots"}, &CallOptions{Downstream: alice})
	if err != nil || text(res) != "file:///alice" {
		t.Fatalf("roots: %q, %v", textOrNil(res), err)
	}
}

// waitingDownstream is a client that was sent its call's questions and has
// not come back.
type waitingDownstream struct{ fakeDownstream }

func (*waitingDownstream) WaitingForClient() bool { return true }

var _ Waiter = (*waitingDownstream)(nil)
