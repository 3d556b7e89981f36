package assemble

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/upstream/groupsfixture"
)

// An upstream's tool that names an operator's group ("ops") or a group no
// one declared ("nonexistent", "../etc") in its _meta joins none of them:
// a token limited to ops neither lists nor calls it, and no top-level
// group of those names appears.
func TestUpstreamCannotJoinAnotherGroup(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two upstream processes")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	doc := map[string]any{
		"mcpServers": map[string]any{
			"fx": map[string]any{"command": self, "env": map[string]string{
				groupsFixtureEnv: "1", groupsfixture.IntrudeEnv: "ops,nonexistent,../etc"}},
			"safe": map[string]any{"command": self, "env": map[string]string{groupsFixtureEnv: "1", groupsfixture.ModeEnv: "skills"}},
		},
		"groups": map[string]any{"ops": map[string]any{"servers": []string{"safe"}}},
	}
	raw, _ := json.Marshal(doc)
	p, err := FromConfig(context.Background(), load(t, string(raw)), Switches{}, Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Upstreams.Close()
	for name, err := range p.Upstreams.Discover(context.Background(), 0) {
		if err != nil {
			t.Fatalf("discovering %s: %v", name, err)
		}
	}
	b, err := p.Build()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []catalog.GroupID{"nonexistent", "../etc"} {
		if _, ok := b.Catalog.Group(id); ok {
			t.Errorf("the catalog has a group %q that only a tool's _meta named", id)
		}
	}
	h, err := b.Gateway.LimitedHandler([]string{"ops"}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "x"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	listed := 0
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		listed++
		if strings.Contains(tool.Name, "intruder") {
			t.Errorf("a token limited to ops lists %q", tool.Name)
		}
	}
	if listed == 0 {
		t.Fatal("the token lists nothing: the test proves nothing")
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fx__intruder", Arguments: map[string]any{}})
	if err == nil && !res.IsError {
		t.Errorf("a token limited to ops called fx__intruder: %+v", res.Content)
	}
}
