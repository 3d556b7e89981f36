package assemble

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/leaktest"
)

// silentFixtureEnv makes this test binary a server that never answers:
// it stays starting until it is stopped.
const silentFixtureEnv = "TOOLFOLD_SILENT_FIXTURE"

// supervisorFrame finds the goroutines a Supervisor started: Supervise
// starts each, and a goroutine's stack names who created it, whether it
// has begun to run or not (then its only frame is Supervise's gowrap).
const supervisorFrame = "toolfold/internal/assemble.Supervise"

// upstreamsFrame finds the servers' discovery, which runs on the
// upstreams' life (Upstreams.Close stops it), not the supervisor's; it
// shows a Supervisor frame where the compiler inlined the call that
// started it.
const upstreamsFrame = "(*Upstreams).startDiscovery"

// plansOver returns a maker of plans of one config (the groups fixture
// and extra at its top level) over one cache, where a first run put the
// fixture's tools: a start's plan and a reload's, as serve plans them.
func plansOver(t *testing.T, extra string) func() *Plan {
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
	return func() *Plan {
		p, err := FromConfig(context.Background(), load(t, src), Switches{}, Options{CacheDir: cache})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Upstreams.Close() })
		return p
	}
}

// silentPlan plans one server that never answers and has no cached list:
// a pending start of it waits for it until StartWait.
func silentPlan(t *testing.T) *Plan {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	quoted, _ := json.Marshal(self)
	src := `{"mcpServers": {"mute": {"command": ` + string(quoted) + `, "startTimeout": "1h", "env": {"` + silentFixtureEnv + `": "1"}}}}`
	p, err := FromConfig(context.Background(), load(t, src), Switches{}, Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Upstreams.Close() })
	return p
}

// libTool is a tool of the plan's own, to tell one catalog from another.
func libTool(name string) *catalog.Tool {
	return &catalog.Tool{ID: catalog.ToolID(name), Name: name, Source: "lib", Def: &mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}, Handler: catalogtest.Echo}
}

func serves(b *Built, id catalog.ToolID) bool {
	_, ok := b.Gateway.Catalog().Tool(id)
	return ok
}

// A change of what the upstreams offer is always counted, and rebuilds
// the catalog only while the supervisor follows: before Follow it is
// caught up with, during a pending start or a reload the catalog that
// comes next is built after it, and after Close nothing is built.
func TestSupervisorChangeInEachState(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	tests := []struct {
		state   supState
		name    string
		rebuild bool
	}{
		{stateBuilt, "built", false},
		{statePending, "pending", false},
		{stateFollowing, "following", true},
		{stateAdopting, "adopting", false},
		{stateClosed, "closed", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := cachedPlan(t)
			b, err := p.Build()
			if err != nil {
				t.Fatal(err)
			}
			var builds int
			countBuilds(p, &builds)
			s := b.sup
			s.mu.Lock()
			s.state = tt.state
			s.mu.Unlock()
			p.Upstreams.changed()
			if got := builds > 0; got != tt.rebuild {
				t.Errorf("a change in state %s built %d catalogs, want a rebuild: %v", tt.name, builds, tt.rebuild)
			}
			if g := s.generation(); g != 1 {
				t.Errorf("the change was counted as generation %d, want 1", g)
			}
		})
	}
}

// Changes that queue up while a rebuild runs are served by one rebuild
// begun after them, not one each: the supervisor builds under one lock
// and skips a change that a later build has served already.
func TestSupervisorServesQueuedChangesOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	p := cachedPlan(t)
	b, err := p.Build()
	if err != nil {
		t.Fatal(err)
	}
	p.Follow(b)
	s := b.sup
	var builds int
	countBuilds(p, &builds)
	s.mu.Lock() // a rebuild in progress, as far as the changes can tell
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(p.Upstreams.changed)
	}
	// Each is counted before it waits for the lock.
	for s.generation() != 3 {
		runtime.Gosched()
	}
	s.rebuildLocked(false)
	perBuild := builds
	s.mu.Unlock()
	wg.Wait()
	if builds != perBuild {
		t.Errorf("3 changes served by a rebuild begun after them built %d more catalogs, want none", builds-perBuild)
	}
}

// An upstream change while a pending start builds its full catalog is not
// lost: it was counted after the build read the tools, so the catalog is
// built again with it.
func TestSupervisorKeepsAChangeDuringThePendingBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	p := cachedPlan(t)
	b, err := p.BuildPending()
	if err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{})
	var once sync.Once
	p.buildHook = func(spec catalog.Spec) (*catalog.Result, error) {
		once.Do(func() {
			// What a server brings while the full catalog is built.
			p.Spec.Tools = append(p.Spec.Tools, libTool("late"))
			go func() {
				defer close(changed)
				p.Upstreams.changed()
			}()
		})
		return catalog.Build(spec)
	}
	s := Supervise(t.Context(), b, SupervisorOptions{OnRefused: func(err error) { t.Errorf("the start was refused: %v", err) }})
	defer s.Close()
	<-changed // returns once the catalog it calls for is served
	if !serves(b, "late") {
		t.Fatalf("the change during the pending build was lost: the gateway serves %d tools without it", len(b.Gateway.Catalog().Tools()))
	}
	if len(b.Gateway.Catalog().Pending()) != 0 {
		t.Errorf("the served catalog is not the full one: pending %v", b.Gateway.Catalog().Pending())
	}
}

// A reload asked for during a pending start waits for it and adopts after
// it, or, when the start is refused or the supervisor closed meanwhile,
// discards cleanly: the next plan is not even made.
func TestSupervisorReloadDuringPendingStart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	tests := []struct {
		name string
		// start returns the supervisor of a pending start, and lets the
		// start go on when called.
		start func(t *testing.T) (s *Supervisor, next func() *Plan, goOn func())
		// wantErr is nil when the reload adopts.
		wantErr func(error) bool
	}{
		{
			name: "adopts after the start",
			start: func(t *testing.T) (*Supervisor, func() *Plan, func()) {
				plans := plansOver(t, "")
				p := plans()
				b, err := p.BuildPending()
				if err != nil {
					t.Fatal(err)
				}
				release := make(chan struct{})
				var once sync.Once
				p.buildHook = func(spec catalog.Spec) (*catalog.Result, error) {
					once.Do(func() { <-release }) // the full build, held
					return catalog.Build(spec)
				}
				s := Supervise(t.Context(), b, SupervisorOptions{})
				return s, plans, func() { close(release) }
			},
		},
		{
			name: "discards when the start is refused",
			start: func(t *testing.T) (*Supervisor, func() *Plan, func()) {
				plans := plansOver(t, `, "disclosure": {"initialGroups": ["fx.nope"]}`)
				b, err := plans().BuildPending()
				if err != nil {
					t.Fatal(err)
				}
				refused := make(chan error, 1)
				s := Supervise(t.Context(), b, SupervisorOptions{OnRefused: func(err error) { refused <- err }})
				return s, plans, func() {}
			},
			wantErr: func(err error) bool {
				var cfgErr *config.Error
				return errors.As(err, &cfgErr) && strings.Contains(err.Error(), "the start was refused")
			},
		},
		{
			name: "discards when closed during the start",
			start: func(t *testing.T) (*Supervisor, func() *Plan, func()) {
				b, err := silentPlan(t).BuildPending()
				if err != nil {
					t.Fatal(err)
				}
				s := Supervise(t.Context(), b, SupervisorOptions{StartWait: time.Hour})
				return s, func() *Plan { return silentPlan(t) }, s.Close
			},
			wantErr: func(err error) bool { return errors.Is(err, ErrSupervisorClosed) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, plans, goOn := tt.start(t)
			defer s.Close()
			var np *Plan
			type result struct {
				rec Reconciled
				err error
			}
			done := make(chan result, 1)
			go func() {
				rec, err := s.Reload(t.Context(), func() (*Plan, error) {
					np = plans()
					np.Spec.Tools = append(np.Spec.Tools, libTool("reloaded"))
					return np, nil
				})
				done <- result{rec, err}
			}()
			goOn()
			r := <-done
			if tt.wantErr != nil {
				if !tt.wantErr(r.err) {
					t.Fatalf("Reload: %v, want it to discard the reload", r.err)
				}
				if np != nil {
					t.Error("the next plan was made though the reload was discarded")
				}
				return
			}
			if r.err != nil {
				t.Fatalf("Reload: %v", r.err)
			}
			if s.Plan() != np {
				t.Error("the reloaded plan is not the one served")
			}
			if !serves(s.Built(), "reloaded") {
				t.Error("the gateway does not serve the reloaded plan's catalog: the start's overwrote it")
			}
			s.mu.Lock()
			state := s.state
			s.mu.Unlock()
			if state != stateFollowing {
				t.Errorf("after the reload the supervisor is in state %d, want following", state)
			}
		})
	}
}

// Close during a pending start that waits for a server returns, and no
// goroutine of the supervisor is left.
func TestSupervisorCloseDuringStartLeavesNothingRunning(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	if left := leaktest.Running(supervisorFrame, upstreamsFrame); len(left) > 0 {
		t.Skipf("goroutines of a supervisor run before the test (another test's?):\n%s", strings.Join(left, "\n\n"))
	}
	b, err := silentPlan(t).BuildPending()
	if err != nil {
		t.Fatal(err)
	}
	s := Supervise(t.Context(), b, SupervisorOptions{StartWait: time.Hour})
	if len(leaktest.Running(supervisorFrame, upstreamsFrame)) == 0 {
		t.Fatal("no goroutine of the supervisor runs: the test checks nothing")
	}
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		s.Close()
	}()
	guard := time.NewTimer(time.Minute) // a guard: Close waits for nothing slow
	defer guard.Stop()
	select {
	case <-closed:
	case <-guard.C:
		t.Fatal("Close did not return: the start's wait for the server was not cancelled")
	}
	if left := leaktest.Left(supervisorFrame, upstreamsFrame); len(left) > 0 {
		t.Errorf("%d goroutines of the supervisor are left after Close:\n%s", len(left), strings.Join(left, "\n\n"))
	}
	select {
	case <-s.started:
	default:
		t.Error("the pending start did not end with Close")
	}
	if _, err := s.Reload(t.Context(), func() (*Plan, error) { return nil, errors.New("must not be called") }); !errors.Is(err, ErrSupervisorClosed) {
		t.Errorf("Reload after Close: %v, want ErrSupervisorClosed", err)
	}
}

// A pending start waits for a server that never answers only StartWait:
// then it serves the full catalog with that server's tools pending, and
// follows from there.
func TestSupervisorStartGivesUpWaitingAfterStartWait(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	b, err := silentPlan(t).BuildPending()
	if err != nil {
		t.Fatal(err)
	}
	s := Supervise(t.Context(), b, SupervisorOptions{StartWait: time.Millisecond, OnRefused: func(err error) { t.Errorf("the start was refused: %v", err) }})
	defer s.Close()
	<-s.started
	if s.startErr != nil {
		t.Fatal(s.startErr)
	}
	s.mu.Lock()
	state := s.state
	s.mu.Unlock()
	if state != stateFollowing {
		t.Errorf("after the start the supervisor is in state %d, want following", state)
	}
	if pending := b.Gateway.Catalog().Pending(); len(pending) != 1 || pending[0] != "mute" {
		t.Errorf("the served catalog has pending %v, want the silent server", pending)
	}
}

// A reload whose catalog cannot be built leaves the previous plan served
// and followed: the servers changed under its catalog, so it is built
// again at once, and later changes still rebuild it.
func TestSupervisorFailedAdoptKeepsFollowing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	plans := plansOver(t, "")
	p := plans()
	b, err := p.Build()
	if err != nil {
		t.Fatal(err)
	}
	p.Follow(b)
	var builds int
	countBuilds(p, &builds)
	np := plans()
	np.Spec.Tools = append(np.Spec.Tools, libTool("twice"), libTool("twice"))
	if _, err := np.Adopt(p, b); err == nil || !strings.Contains(err.Error(), "the previous one keeps serving") {
		t.Fatalf("Adopt of a plan with a tool named twice: %v, want its catalog refused", err)
	}
	s := b.sup
	if s.Plan() != p {
		t.Error("after a failed reload the supervisor serves the refused plan")
	}
	if builds == 0 {
		t.Error("the previous catalog was not built again after the servers were reconciled")
	}
	before := builds
	p.Upstreams.changed()
	if builds == before {
		t.Error("a change after a failed reload rebuilt nothing: the supervisor stopped following")
	}
}
