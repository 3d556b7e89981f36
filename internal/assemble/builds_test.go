package assemble

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/toolfold/toolfold/internal/catalog"
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
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	quoted, _ := json.Marshal(self)
	src := `{"mcpServers": {"fx": {"command": ` + string(quoted) + `, "env": {"` + groupsFixtureEnv + `": "1"}}}}`
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
