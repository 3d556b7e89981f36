package assemble

import (
	"context"
	"errors"
	"fmt"
	"sync"
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

// Supervisor owns the lifecycle of the catalog a gateway serves: the
// pending start and its background build, following the upstreams'
// changes, and the reload hand-over to another plan. Whoever creates it
// closes it, before the upstreams close: Close stops every goroutine it
// started.
type Supervisor struct {
	b    *Built
	opts SupervisorOptions

	// plan is the plan served now (under mu); reloadMu orders reloads.
	mu       sync.Mutex
	plan     *Plan
	closed   bool
	reloadMu sync.Mutex

	// started is closed when the pending start has ended (or there was
	// none); startErr says why it was refused, if it was.
	started  chan struct{}
	startErr error
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

// Supervise makes b's gateway serve p's catalog from now on, and keeps it
// current: a pending start (BuildPending) is completed in the background,
// and every upstream change rebuilds the catalog.
func Supervise(ctx context.Context, p *Plan, b *Built, opts SupervisorOptions) *Supervisor {
	ctx, cancel := context.WithCancel(ctx)
	s := &Supervisor{b: b, opts: opts, plan: p, started: make(chan struct{}), cancel: cancel}
	p.Follow(b)
	if !b.pending {
		close(s.started)
		return s
	}
	s.wg.Go(func() {
		defer close(s.started)
		s.startErr = s.complete(ctx)
		if s.startErr != nil && s.opts.OnRefused != nil {
			s.opts.OnRefused(s.startErr)
		}
	})
	return s
}

// complete brings the upstreams' tools to a pending start: the servers
// with no cached list get StartWait to start, then the catalog of what is
// known is built and served.
func (s *Supervisor) complete(ctx context.Context) error {
	p := s.Plan()
	if p.Upstreams != nil {
		p.Upstreams.Discover(ctx, s.opts.StartWait)
	}
	if ctx.Err() != nil {
		return nil // serving ended first
	}
	warnings, err := p.Complete(s.b)
	if err != nil {
		return err
	}
	if s.opts.OnWarnings != nil {
		s.opts.OnWarnings(warnings)
	}
	return nil
}

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
	rec, err := np.Adopt(s.Plan(), s.b)
	if err != nil {
		return rec, err
	}
	s.mu.Lock()
	s.plan = np
	s.mu.Unlock()
	return rec, nil
}

func (s *Supervisor) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Close stops the supervisor: a pending start still waiting for servers
// gives up, and Close returns once every goroutine it started has ended.
// The upstreams and the gateway stay open: their owner closes them after.
func (s *Supervisor) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
}
