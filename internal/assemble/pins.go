package assemble

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/toolfold/toolfold/internal/trust"
	"github.com/toolfold/toolfold/internal/watch"
)

// TrustState is what the trust gate knows after a build: the lock as
// judged (pins, and the items held now), and the scan's findings.
type TrustState struct {
	// LockFile is the lock's path; ReadOnly is trust.readOnly.
	LockFile string
	ReadOnly bool
	Lock     *trust.Lock
	Findings []trust.Finding
	// Unreadable is why the lock file could not be read, if it could not.
	Unreadable error
}

// Trust is the plan's trust state, or nil when the plan does not pin
// (a plan not made by the toolfold command, or one with no upstreams).
func (p *Plan) Trust() *TrustState {
	if p.trust == nil {
		return nil
	}
	g := p.trust
	g.mu.Lock()
	defer g.mu.Unlock()
	// Once on the gate's lock, not on every clone a report reads.
	_ = g.lock.LoadHeldDefinitions()
	findings := slices.Clone(g.findings)
	for _, key := range slices.Sorted(maps.Keys(g.listings)) {
		findings = append(findings, g.listings[key].findings...)
	}
	return &TrustState{LockFile: g.path, ReadOnly: g.readOnly, Lock: g.lock.Clone(), Findings: findings, Unreadable: g.loadErr}
}

// HeldCounts are the held definitions per upstream server now, for the
// metrics; nil when the plan does not pin.
func (p *Plan) HeldCounts() map[string]int {
	if p.trust == nil {
		return nil
	}
	return p.trust.HeldCounts()
}

// ErrLockReadOnly refuses an approval where trust.readOnly is set.
var ErrLockReadOnly = errors.New("the lock file is read-only here (trust.readOnly): approve where the lock is written, commit it and mount it again")

// ApprovePins pins the held items of server named by items (all when none)
// and saves the lock; who is named in the audit line. A running gateway's
// catalog is rebuilt with them, so clients hear list_changed.
func (p *Plan) ApprovePins(server string, items []string, who string) ([]trust.Approval, error) {
	if p.trust == nil {
		return nil, fmt.Errorf("nothing is pinned: the config folds no MCP servers")
	}
	g := p.trust
	g.mu.Lock()
	if g.readOnly {
		g.mu.Unlock()
		return nil, ErrLockReadOnly
	}
	if g.loadErr != nil {
		g.mu.Unlock()
		return nil, fmt.Errorf("the lock file %s cannot be read, so nothing can be approved in it: %w", g.path, g.loadErr)
	}
	next := g.lock.Clone()
	apps, err := next.Approve(server, items...)
	var text []byte
	if err == nil {
		text, err = next.SaveText(g.path)
	}
	if err != nil {
		g.mu.Unlock()
		return nil, err
	}
	g.lock, g.written = next, sha256.Sum256(text)
	g.onDisk = watch.Digest(g.written)
	g.gen++
	for _, a := range apps {
		g.log.Info("trust approve", "who", who, "server", a.Server, "item", a.Item, "old_digest", a.OldDigest, "new_digest", a.NewDigest)
	}
	g.mu.Unlock()
	p.rebuild()
	return apps, nil
}

// WatchLock picks up a changed lock file until ctx ends or the upstreams
// close: an operator's `toolfold pins approve`, a pull of the committed
// lock, a replica's mount updated. The catalog is rebuilt through the same
// path as an upstream's list change, so held items appear and clients hear
// list_changed once. internal/watch sees rename-saves and a ConfigMap's
// symlink swap, and tells only of a change of content.
func (p *Plan) WatchLock(ctx context.Context) error {
	if p.trust == nil {
		return nil
	}
	g := p.trust
	g.mu.Lock()
	known := map[string]string{g.path: g.onDisk}
	g.mu.Unlock()
	w, err := watch.NewFrom([]string{g.path}, known, g.log)
	if err != nil {
		return fmt.Errorf("watching the lock file: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	go w.Run(ctx) // ends with ctx, which the loop below cancels when it returns
	go func() {
		defer cancel()
		for {
			select {
			case <-ctx.Done():
				return
			case <-g.done: // the upstreams closed: serving has ended
				return
			case <-w.Changes():
				changed, err := g.Reload()
				if err != nil {
					g.log.Warn("trust: the changed lock file cannot be read; the pins before it stay", "lock_file", g.path, "error", err)
					continue
				}
				if changed {
					p.rebuild()
				}
			}
		}
	}()
	return nil
}

// rebuild asks for the catalog to be built again after the pins changed,
// through the path an upstream's list change takes. A plan of programs
// alone has no such path: its approved actions serve from the next start.
func (p *Plan) rebuild() {
	if p.Upstreams != nil {
		p.Upstreams.changed()
	}
}
