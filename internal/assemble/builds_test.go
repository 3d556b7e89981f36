package assemble

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/config"
)

// countBuilds makes every catalog build of p count in *n.
func countBuilds(p *Plan, n *int) {
	p.buildHook = func(spec catalog.Spec) (*catalog.Result, error) {
		*n++
		return catalog.Build(spec)
	}
}

// cachedPlan plans a config with one upstream (the groups fixture) whose
// tool list a first run has put in the cache, so that its tools are known
// at start and it is never started.
func cachedPlan(t *testing.T) *Plan {
	t.Helper()
	return cachedPlanWith(t, "")
}

// cachedPlanWith is cachedPlan with more of the config's top level
// (`, "disclosure": {...}`).
func cachedPlanWith(t *testing.T, extra string) *Plan {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	quoted, _ := json.Marshal(self)
	src := `{"mcpServers": {"fx": {"command": ` + string(quoted) + `, "env": {"` + groupsFixtureEnv + `": "1"}}}` + extra + `}`
	cache := t.TempDir()
	first, err := FromConfig(context.Background(), load(t, src), Switches{}, Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	for name, err := range first.Upstreams.Discover(context.Background(), 0) {
		if err != nil {
			t.Fatalf("discovering %s: %v", name, err)
		}
	}
	first.Upstreams.Close()
	p, err := FromConfig(context.Background(), load(t, src), Switches{}, Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Upstreams.Close() })
	if p.Upstreams.pending() != nil {
		t.Fatalf("the fixture's tools are not cached: pending %v", p.Upstreams.pending())
	}
	return p
}

// A start whose servers' tools are all known builds the catalog once:
// following it (serve's next step) does not build it again.
func TestStartBuildsTheCatalogOnce(t *testing.T) {
	p := cachedPlan(t)
	var builds int
	countBuilds(p, &builds)
	b, err := p.Build()
	if err != nil {
		t.Fatal(err)
	}
	perBuild := builds // the declared catalog, then the derived one
	if perBuild == 0 {
		t.Fatal("the build hook was not used")
	}
	p.Follow(b)
	if builds != perBuild {
		t.Errorf("Build then Follow built %d catalogs, want %d: nothing changed in between", builds, perBuild)
	}
}

// A change between Build and Follow, which the callback Follow sets
// cannot hear of, still reaches the catalog: Follow builds it again.
func TestFollowCatchesUpWithAChangeBeforeIt(t *testing.T) {
	p := cachedPlan(t)
	var builds int
	countBuilds(p, &builds)
	b, err := p.Build()
	if err != nil {
		t.Fatal(err)
	}
	perBuild := builds
	p.Upstreams.changed() // as a server settling now would
	p.Follow(b)
	if builds != 2*perBuild {
		t.Errorf("with a change before Follow, %d catalogs were built, want %d", builds, 2*perBuild)
	}
}

// A pending start (serve's) answers before the upstreams' tools are read:
// its catalog holds none of them and names every server pending, so a
// request that needs them waits; Complete brings them, building the full
// catalog once, and a client connected before it lists them.
func TestPendingStartBringsTheToolsOnComplete(t *testing.T) {
	p := cachedPlan(t)
	var builds int
	countBuilds(p, &builds)
	b, err := p.BuildPending()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(b.Catalog.Tools()); n != 0 || !slices.Contains(b.Catalog.Pending(), "fx") {
		t.Fatalf("the pending catalog has %d tools and pending %v, want none and fx", n, b.Catalog.Pending())
	}
	p.Follow(b)
	pendingBuilds := builds
	srv := httptest.NewServer(mustHandler(t, b))
	defer srv.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "early"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
	if err != nil {
		t.Fatalf("a client could not initialize before the catalog was complete: %v", err)
	}
	defer cs.Close()

	if _, err := p.Complete(b); err != nil {
		t.Fatal(err)
	}
	full := builds - pendingBuilds
	if full == 0 || full > 2 { // the declared catalog, then the derived one
		t.Errorf("Complete built %d catalogs, want the full one once", full)
	}
	if cat := b.Gateway.Catalog(); len(cat.Tools()) == 0 || len(cat.Pending()) != 0 {
		t.Fatalf("after Complete the gateway serves %d tools, pending %v", len(cat.Tools()), cat.Pending())
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "find_tools", Arguments: map[string]any{"query": "an issue"}})
	if err != nil || res.IsError {
		t.Fatalf("find_tools after Complete: %v %v", err, res)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "fx") {
		t.Errorf("the early client's find_tools does not find the upstream's tools:\n%s", text)
	}
}

// A group the config names that the full catalog lacks stops a pending
// start when Complete finds it, as it stops Build: the pending catalog
// cannot tell, since the starting server might bring it.
func TestPendingStartRefusesAMisnamedGroupOnComplete(t *testing.T) {
	p := cachedPlanWith(t, `, "disclosure": {"initialGroups": ["fx.nope"]}`)
	b, err := p.BuildPending()
	if err != nil {
		t.Fatalf("the pending start refused what a starting server may bring: %v", err)
	}
	p.Follow(b)
	_, err = p.Complete(b)
	var cfgErr *config.Error
	if !errors.As(err, &cfgErr) || !strings.Contains(err.Error(), `"fx.nope" does not exist`) {
		t.Fatalf("Complete: %v, want the config error naming the group", err)
	}
}

func mustHandler(t *testing.T, b *Built) http.Handler {
	t.Helper()
	h, err := b.Gateway.HTTPHandler(nil)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
