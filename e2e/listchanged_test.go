package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listClient is a client of the toolfold binary over stdio that records
// prompt and resource list_changed notifications.
type listClient struct {
	*mcp.ClientSession
	prompts, resources chan struct{}
	// listening is closed when the server acknowledges the client's
	// subscriptions/listen stream (2026-07-28): from then on no change is
	// missed.
	listening chan struct{}
}

// connectLists spawns `toolfold serve --mode flat --config path` and
// connects; protocol "" is the SDK's newest, on which the client subscribes
// to list changes through subscriptions/listen.
func connectLists(t *testing.T, path, protocol string) *listClient {
	t.Helper()
	l := &listClient{prompts: make(chan struct{}, 16), resources: make(chan struct{}, 16), listening: make(chan struct{})}
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e-lists", Version: "1.0.0"}, &mcp.ClientOptions{
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { l.prompts <- struct{}{} },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { l.resources <- struct{}{} },
	})
	var acked sync.Once
	c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/subscriptions/acknowledged" {
				acked.Do(func() { close(l.listening) })
			}
			return next(ctx, method, req)
		}
	})
	cmd := exec.Command(binary, "serve", "--mode", "flat", "--config", path)
	cmd.Env = append(cmd.Environ(), "TOOLFOLD_CACHE_DIR="+t.TempDir())
	var opts *mcp.ClientSessionOptions
	if protocol != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: protocol}
	}
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, opts)
	if err != nil {
		t.Fatalf("connecting to toolfold over stdio: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	l.ClientSession = cs
	caps := cs.InitializeResult().Capabilities
	if caps.Prompts == nil || !caps.Prompts.ListChanged || caps.Resources == nil || !caps.Resources.ListChanged {
		t.Fatalf("toolfold declares prompts %+v and resources %+v, want listChanged for both", caps.Prompts, caps.Resources)
	}
	return l
}

func waitNotified(t *testing.T, ch chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(15 * time.Second):
		t.Fatalf("no %s list_changed reached the client", what)
	}
}

// goFixture builds the Go SDK's conformance server (the go.mod version),
// whose test_trigger_prompt_change tool adds a prompt.
func goFixture(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "everything-server")
	build := exec.Command("go", "build", "-o", bin, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the go-sdk conformance server: %v\n%s", err, out)
	}
	return bin
}

func promptList(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListPrompts(context.Background(), nil)
	if err != nil {
		t.Fatalf("prompts/list: %v", err)
	}
	var out []string
	for _, p := range res.Prompts {
		out = append(out, p.Name)
	}
	return out
}

// TestUpstreamPromptChangeReachesTheClient: an upstream adds a prompt and
// announces it; the client of toolfold hears of it, on a session
// (2025-11-25) and on a subscriptions/listen stream (2026-07-28), and its
// next prompts/list has the new prompt.
func TestUpstreamPromptChangeReachesTheClient(t *testing.T) {
	// The prompt is new to a pinned server, which trust.onNew holds by
	// default (internal/trust); this test is about hearing the change.
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": goFixture(t), "prefix": ""},
	}, "trust": map[string]any{"onNew": "accept"}})
	for _, protocol := range []string{"2025-11-25", ""} {
		name := protocol
		if name == "" {
			name = "newest"
		}
		t.Run(name, func(t *testing.T) {
			l := connectLists(t, path, protocol)
			before := promptList(t, l.ClientSession)
			if protocol == "" {
				select {
				case <-l.listening:
				case <-time.After(15 * time.Second):
					t.Fatal("toolfold did not acknowledge the client's subscriptions/listen stream")
				}
			}
			res, err := l.CallTool(context.Background(), &mcp.CallToolParams{Name: "test_trigger_prompt_change", Arguments: map[string]any{}})
			if err != nil || res.IsError {
				t.Fatalf("test_trigger_prompt_change: %v %+v", err, res)
			}
			waitNotified(t, l.prompts, "prompts")
			after := promptList(t, l.ClientSession)
			if len(after) != len(before)+1 || !slices.Contains(after, "__transient_prompt_for_list_changed") {
				t.Errorf("prompts before %v, after %v: want the transient prompt added", before, after)
			}
		})
	}
}

// TestUpstreamResourceChangeReachesTheClient: server-everything registers
// a resource when gzip-file-as-resource runs, and announces it.
func TestUpstreamResourceChangeReachesTheClient(t *testing.T) {
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": nodeServer(t, "mcp-server-everything")},
	}})
	l := connectLists(t, path, "2025-11-25")
	ctx := context.Background()
	const uri = "demo://resource/session/listchanged.txt.gz"
	res, err := l.CallTool(ctx, &mcp.CallToolParams{Name: "everything__gzip-file-as-resource", Arguments: map[string]any{
		"name": "listchanged.txt.gz", "data": "data:text/plain;base64,aGVsbG8=", "outputType": "resourceLink",
	}})
	if err != nil || res.IsError {
		t.Fatalf("gzip-file-as-resource: %v %+v", err, res)
	}
	waitNotified(t, l.resources, "resources")
	list, err := l.ListResources(ctx, nil)
	if err != nil {
		t.Fatalf("resources/list: %v", err)
	}
	var uris []string
	for _, r := range list.Resources {
		uris = append(uris, r.URI)
	}
	if !slices.Contains(uris, uri) {
		t.Errorf("resources/list after the change lacks %s: %s", uri, strings.Join(uris, " "))
	}
	if read, err := l.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err != nil || len(read.Contents) == 0 {
		t.Errorf("resources/read %s: %v", uri, err)
	}
}

// TestLateUpstreamBringsItsPrompts: a server that finishes starting after
// toolfold began serving (here: later than the two seconds toolfold waits)
// brings prompts the list left out until then. Clients are told, as they
// are of its tools.
func TestLateUpstreamBringsItsPrompts(t *testing.T) {
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{
		"late": map[string]any{"command": "sh", "args": []string{"-c", "sleep 3; exec " + goFixture(t)}, "prefix": "late"},
	}})
	l := connectLists(t, path, "2025-11-25")
	if before := promptList(t, l.ClientSession); len(before) != 0 {
		t.Skipf("the server was ready before the first listing (%d prompts): the machine is too slow for this test", len(before))
	}
	waitNotified(t, l.prompts, "prompts")
	if after := promptList(t, l.ClientSession); !slices.Contains(after, "late__test_simple_prompt") {
		t.Errorf("prompts after the late start: %v", after)
	}
}
