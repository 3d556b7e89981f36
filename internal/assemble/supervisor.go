package assemble

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// ErrSupervisorClosed says a reload came after the supervisor stopped:
// serving has ended, and nothing was applied.
var ErrSupervisorClosed = errors.New("the catalog supervisor has stopped: serving has ended")

// SupervisorOptions tune a Supervisor.
type SupervisorOptions struct {
	// StartWait bounds how long a pending start waits for the servers
	// with no cached tool list before it builds the full catalog; those
	// still starting after it join when they are ready.
	StartWait time.Duration
	// OnWarnings hears the warnings of the full catalog a pending start
	// builds, once.
	OnWarnings func([]string)
	// OnRefused hears why the full catalog a pending start built was
	// refused (a group the config names that it lacks): the caller should
	// stop serving, as a refused Build stops a start.
	OnRefused func(error)
}

// supState is where a Supervisor is in the catalog's life.
type supState int

const (
	// stateBuilding: Build or BuildPending is making the first catalog;
	// changes are counted, nothing is rebuilt.
	stateBuilding supState = iota
	// stateBuilt: the first catalog is served, Follow has not begun;
	// changes are counted, and Follow catches up with them.
	stateBuilt
	// statePending: the served catalog is BuildPending's stand-in; the
	// completion builds the full one, then follows.
	statePending
	// stateFollowing: every change rebuilds the catalog.
	stateFollowing
	// stateAdopting: a reload is reconciling the servers; changes are
	// counted, and the adopted plan's catalog catches up with them.
	stateAdopting
	// stateClosed: nothing is built any more.
	stateClosed
)

// Supervisor owns the lifecycle of the catalog a gateway serves: the
// generation of what the upstreams offer, the pending start and its
// background build, following the upstreams' changes (every catalog after
// the first is built here and handed to Gateway.Update), and the reload
// hand-over to another plan (Plan.Adopt). Every transition happens under
// one lock, so a change, a completion and a reload are ordered.
//
// Build and BuildPending create it (it must count the changes from before
// the first catalog's tools are read); Supervise starts it; whoever
// started it closes it, before the upstreams close: Close stops every
// goroutine it started.
type Supervisor struct {
	b    *Built
	opts SupervisorOptions

	// gen counts the changes of what the upstreams offer (their tools,
	// their failures, the pins). Read before the servers' tools, it dates
	// a catalog built from them: a change counted after it may or may not
	// be in that catalog, so it calls for a rebuild.
	gen atomic.Uint64

	// mu orders the transitions; the fields below are under it. A catalog
	// is built under it too, so that the one served is the newest.
	mu    sync.Mutex
	state supState
	// plan is the plan served now; served is the generation of the
	// catalog built from it that the gateway serves.
	plan   *Plan
	served uint64
	// told are the warnings told already: each is logged once, however
	// many rebuilds find it again.
	told map[string]bool

	// reloadMu orders reloads (Reload, Plan.Adopt), which wait outside
	// mu.
	reloadMu sync.Mutex
	// started is closed when the pending start has ended (at once when
	// there was none); startErr says why it was refused, if it was.
	started  chan struct{}
	startErr error
	// supervised is set by Supervise (under mu); cancel ends the start's
	// wait for servers.
	supervised bool
	cancel     context.CancelFunc
	wg         sync.WaitGroup
}

// newSupervisor makes the supervisor of a catalog about to be built from
// p, and has p's upstreams report their changes to it from now on.
func newSupervisor(p *Plan) *Supervisor {
	s := &Supervisor{plan: p, started: make(chan struct{}), cancel: func() {}, state: stateBuilding}
	if p.Upstreams != nil {
		p.Upstreams.attach(s)
	}
	return s
}

// built records the first catalog: b serves it, built at generation gen.
func (s *Supervisor) built(b *Built, gen uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b, s.served, s.state = b, gen, stateBuilt
	if b.pending {
		s.state = statePending
	}
}

// Supervise starts b's supervisor: the gateway serves the catalog of b's
// plan from now on and is kept current. A pending start (BuildPending)
// is completed in the background: its servers get StartWait, then the
// full catalog is built and served. Close the supervisor it returns; a
// second call returns it as it is.
func Supervise(ctx context.Context, b *Built, opts SupervisorOptions) *Supervisor {
	s := b.sup
	s.mu.Lock()
	if s.supervised { // started already: nothing more to start
		s.mu.Unlock()
		return s
	}
	ctx, cancel := context.WithCancel(ctx)
	s.opts, s.cancel, s.supervised = opts, cancel, true
	s.mu.Unlock()
	s.follow()
	if !b.pending {
		close(s.started)
		return s
	}
	s.wg.Add(1)
	go s.runStart(ctx)
	return s
}

// runStart is the goroutine of a pending start.
func (s *Supervisor) runStart(ctx context.Context) {
	defer s.wg.Done()
	defer close(s.started)
	s.startErr = s.completeStart(ctx)
	if s.startErr != nil && s.opts.OnRefused != nil {
		s.opts.OnRefused(s.startErr)
	}
}

// completeStart waits at most StartWait for the servers with no cached
// list, then builds and serves the full catalog.
func (s *Supervisor) completeStart(ctx context.Context) error {
	if u := s.Plan().Upstreams; u != nil {
		u.Discover(ctx, s.opts.StartWait)
	}
	if ctx.Err() != nil {
		return nil // serving ended first
	}
	warnings, err := s.complete()
	if err != nil {
		return err
	}
	if s.opts.OnWarnings != nil {
		s.opts.OnWarnings(warnings)
	}
	return nil
}

// follow wires the upstreams to the gateway and, for a catalog that is
// not pending, begins following: a change counted since the catalog was
// built is caught up with now (nobody heard of it). A pending start's
// servers are set starting, for requests to wait for them.
func (s *Supervisor) follow() {
	s.mu.Lock()
	p, b := s.plan, s.b
	s.mu.Unlock()
	u := p.Upstreams
	if u == nil {
		return
	}
	u.wire(b.Gateway)
	if b.pending {
		u.startDiscovery()
		return
	}
	u.readOffers()
	s.mu.Lock()
	if s.state == stateBuilt {
		s.state = stateFollowing
		s.told = toldOf(b.Warnings)
	}
	s.mu.Unlock()
	s.catchUp()
	// Pending servers must be on their way for requests to wait for them.
	u.startDiscovery()
}

// complete builds the catalog of the tools known now in place of a
// pending start's stand-in, hands it to the gateway, and follows from
// then on. It returns the warnings of the build, and the error Build
// would have returned: then the gateway keeps the stand-in.
func (s *Supervisor) complete() ([]string, error) {
	s.mu.Lock()
	if s.state != statePending {
		s.mu.Unlock()
		return nil, nil // done already, by a reload or an earlier call
	}
	p := s.plan
	space, gen, warnings, err := p.space(!p.WarnMissingGroups)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	if err := s.b.Gateway.Update(space); err != nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("%s cannot be presented: %w", p.origin(), err)
	}
	s.state, s.served, s.told = stateFollowing, gen, toldOf(warnings)
	s.mu.Unlock()
	p.Upstreams.readOffers()
	// A change counted while the catalog was built may have come after
	// its tools were read: it is not lost, the catalog is built again.
	s.catchUp()
	p.Upstreams.startDiscovery()
	return warnings, nil
}

// changed counts a change of what the upstreams offer and, when following,
// rebuilds the catalog before it returns, unless a rebuild begun after
// the change was counted has served it already.
func (s *Supervisor) changed() {
	mine := s.gen.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != stateFollowing || s.served >= mine {
		return
	}
	s.rebuildLocked(true)
}

// catchUp rebuilds the catalog when a change was counted after the one
// served was built.
func (s *Supervisor) catchUp() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == stateFollowing && s.served != s.gen.Load() {
		s.rebuildLocked(false)
	}
}

// rebuildLocked builds the served plan's catalog again and hands it to
// the gateway; on failure the gateway keeps serving the last good one.
// New warnings are logged when logWarnings (a catch-up's were told with
// the build it catches up with).
func (s *Supervisor) rebuildLocked(logWarnings bool) {
	p := s.plan
	space, gen, warnings, err := p.space(false)
	if err != nil {
		p.logf("the catalog could not be rebuilt after an upstream change; serving the previous one: %v", err)
		return
	}
	for _, w := range warnings {
		if logWarnings && !s.told[w] {
			s.told[w] = true
			p.logf("%s", w)
		}
	}
	if err := s.b.Gateway.Update(space); err != nil {
		p.logf("the gateway could not take the new catalog; serving the previous one: %v", err)
		return
	}
	s.served = gen
}

// generation is the number of changes counted so far.
func (s *Supervisor) generation() uint64 { return s.gen.Load() }

// Plan is the plan served now.
func (s *Supervisor) Plan() *Plan {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.plan
}

// Built is what the supervisor serves through.
func (s *Supervisor) Built() *Built { return s.b }

// Reload makes the plan next returns the one served (see Plan.Adopt). A
// pending start is let finish first: adopting before it would be undone by
// its catalog. next is called only then, so it reads the config as it is
// when the reload applies.
func (s *Supervisor) Reload(ctx context.Context, next func() (*Plan, error)) (Reconciled, error) {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	select {
	case <-s.started:
	case <-ctx.Done():
		return Reconciled{}, ctx.Err()
	}
	if s.startErr != nil {
		return Reconciled{}, fmt.Errorf("the start was refused, so nothing can be reloaded: %w", s.startErr)
	}
	if s.isClosed() {
		return Reconciled{}, ErrSupervisorClosed
	}
	np, err := next()
	if err != nil {
		return Reconciled{}, err
	}
	return s.adoptLocked(s.Plan(), np)
}

// adopt makes p the plan served in place of old: see Plan.Adopt.
func (s *Supervisor) adopt(old, p *Plan) (Reconciled, error) {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	return s.adoptLocked(old, p)
}

// adoptLocked is adopt with reloadMu held.
func (s *Supervisor) adoptLocked(old, p *Plan) (Reconciled, error) {
	rec := Reconciled{NeedsRestart: restartNeeded(old, p)}
	// One trust gate for the life of the gateway: the lock's watcher and
	// the running upstreams judge with it (a changed trust block waits
	// for a restart, see restartNeeded).
	if old.trust != nil {
		if p.trust != nil && p.trust != old.trust {
			p.trust.close()
		}
		p.trust = old.trust
	}
	if old.Upstreams == nil && p.Upstreams != nil {
		p.Upstreams.Close()
		return rec, fmt.Errorf("%w: the running gateway was started with no MCP servers, and the new config adds some (restart toolfold to serve them)", ErrNeedsRestart)
	}
	s.mu.Lock()
	before := s.state
	if before == stateClosed {
		s.mu.Unlock()
		p.Upstreams.Close() // nothing of it was started
		return rec, ErrSupervisorClosed
	}
	// No rebuild of the old plan's catalog from here on: the servers
	// change under it, and the new plan's catalog is built below.
	s.state = stateAdopting
	s.mu.Unlock()
	if u := old.Upstreams; u != nil {
		rec.Change = u.reconcile(p.Upstreams)
		if p.Upstreams != nil {
			p.Upstreams.Close() // nothing of it was started
		}
		p.Upstreams = u
		p.Gateway.Extras = u
		u.awaitFresh(rec.Change)
	}
	s.mu.Lock()
	if s.state == stateClosed { // serving ended during the wait
		s.mu.Unlock()
		return rec, ErrSupervisorClosed
	}
	space, gen, warnings, err := p.space(false)
	if err != nil {
		// Reconciled already: the servers run the new config, the
		// catalog the old one until a rebuild succeeds. A config check
		// refuses such a config first, so this is a last line.
		s.resumeLocked(before)
		s.mu.Unlock()
		return rec, fmt.Errorf("the new catalog cannot be built; the previous one keeps serving: %w", err)
	}
	// The presentation (mode, exposition, meta-tool names, the auto
	// mode's client lists, byte forwarding) comes with the catalog, in
	// one swap.
	if err := s.b.Gateway.UpdateWith(space, &p.Gateway); err != nil {
		s.resumeLocked(before)
		s.mu.Unlock()
		return rec, fmt.Errorf("%s cannot be presented; the previous catalog keeps serving: %w", p.origin(), err)
	}
	s.state = stateFollowing
	s.plan, s.served, s.told = p, gen, toldOf(warnings)
	s.mu.Unlock()
	if p.Upstreams != nil {
		p.Upstreams.readOffers()
		s.catchUp()
		p.Upstreams.startDiscovery()
	}
	return rec, nil
}

// resumeLocked goes back to the state before a failed adopt; a catalog
// that was followed is rebuilt at once, since changes went unheard and
// the servers changed under it.
func (s *Supervisor) resumeLocked(before supState) {
	if s.state != stateAdopting {
		return // closed meanwhile
	}
	s.state = before
	if before == stateFollowing {
		s.rebuildLocked(false)
	}
}

func (s *Supervisor) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state == stateClosed
}

// Close stops the supervisor: a pending start still waiting for servers
// gives up, no change rebuilds the catalog any more, and Close returns
// once every goroutine it started has ended. The upstreams and the
// gateway stay open: their owner closes them after.
func (s *Supervisor) Close() {
	s.mu.Lock()
	s.state = stateClosed
	cancel := s.cancel
	s.mu.Unlock()
	cancel()
	s.wg.Wait()
}

// toldOf is the set of warnings told already.
func toldOf(warnings []string) map[string]bool {
	told := make(map[string]bool, len(warnings))
	for _, w := range warnings {
		told[w] = true
	}
	return told
}
