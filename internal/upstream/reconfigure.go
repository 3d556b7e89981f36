package upstream

import (
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"sort"
	"sync"

	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/redact"
)

// Change is what Reconfigure did, each list sorted by server name.
type Change struct {
	// Added servers are new; they start as any server does (on first
	// need, or when discovered).
	Added []string
	// Removed servers are gone: new calls to them fail with ErrRemoved,
	// and their processes stop once the calls in flight are answered (at
	// most their call timeout).
	Removed []string
	// Changed servers run their new config: the old process stops as a
	// removed one does, and the new one starts after it, on first need.
	Changed []string
	// Unchanged servers, and their processes, were left alone.
	Unchanged []string
	// Retired is closed once every removed and changed server's old
	// process has stopped.
	Retired <-chan struct{}
}

// Empty reports whether no server was added, removed or changed.
func (c Change) Empty() bool { return len(c.Added)+len(c.Removed)+len(c.Changed) == 0 }

// Reconfigure makes servers the Manager's set, as a config reload asks:
// a server whose config is the same as before keeps running untouched
// (its process, its session, its known tools), a new one is added, a
// missing one removed, and one whose config differs is replaced. Only the
// settings that shape the process or the connection count as a change
// (see sameServer): a new prefix or group is the catalog's business.
func (m *Manager) Reconfigure(servers map[string]config.ServerConfig) Change {
	var ch Change
	var retiring []*server
	m.setMu.Lock()
	for name, cfg := range servers {
		if cfg.Name == "" {
			cfg.Name = name
		}
		old, ok := m.servers[name]
		switch {
		case !ok:
			ch.Added = append(ch.Added, name)
			m.servers[name] = m.newServerAfter(name, cfg, nil)
		case sameServer(old.cfg, cfg):
			ch.Unchanged = append(ch.Unchanged, name)
		default:
			ch.Changed = append(ch.Changed, name)
			old.removed.Store(true)
			done := make(chan struct{})
			old.retired = done
			retiring = append(retiring, old)
			m.servers[name] = m.newServerAfter(name, cfg, done)
		}
		delete(m.removed, name)
	}
	for name, old := range m.servers {
		if _, ok := servers[name]; ok {
			continue
		}
		ch.Removed = append(ch.Removed, name)
		old.removed.Store(true)
		old.retired = make(chan struct{})
		retiring = append(retiring, old)
		delete(m.servers, name)
		if m.removed == nil {
			m.removed = map[string]bool{}
		}
		m.removed[name] = true
	}
	m.names = slices.Sorted(maps.Keys(m.servers))
	m.setMu.Unlock()
	for _, l := range [][]string{ch.Added, ch.Removed, ch.Changed, ch.Unchanged} {
		sort.Strings(l)
	}
	retired := make(chan struct{})
	ch.Retired = retired
	var wg sync.WaitGroup
	for _, s := range retiring {
		wg.Add(1)
		if !m.goBackground(func() { defer wg.Done(); s.retire() }) {
			// Closing: Close stops every server it knows; this one it
			// no longer knows, so stop it here.
			s.close()
			close(s.retired)
			wg.Done()
		}
	}
	go func() { wg.Wait(); close(retired) }()
	return ch
}

// newServerAfter is newServer for a server added while the Manager serves:
// its log masks its own secrets (the Manager's log knows only those of the
// servers it was made with), and it starts only after after is closed.
func (m *Manager) newServerAfter(name string, cfg config.ServerConfig, after <-chan struct{}) *server {
	s := newServer(m, name, cfg)
	s.log = slog.New(redact.Handler(s.log.Handler(), secretsOf(cfg)))
	s.after = after
	return s
}

// sameServer reports whether a reload can keep a server running: every
// setting that reaches its process or connection is the same. The prefix,
// group and autoGroups only shape the catalog.
func sameServer(a, b config.ServerConfig) bool {
	for _, c := range []*config.ServerConfig{&a, &b} {
		c.Prefix, c.Group, c.AutoGroups = nil, nil, nil
	}
	return reflect.DeepEqual(a, b)
}

// retire stops a server a reload removed or replaced once the requests
// it is serving are answered, or after its call timeout, whichever is
// first; new requests were turned away (removed) already.
func (s *server) retire() {
	defer close(s.retired)
	s.mu.Lock()
	var wait chan struct{}
	if c := s.conn; c != nil && !c.isEnded() && c.active > 0 {
		wait = make(chan struct{})
		s.drained = wait
	}
	s.mu.Unlock()
	if wait != nil {
		// On the Manager's clock, as every timer of the supervisor.
		due := make(chan struct{})
		t := s.m.clock.AfterFunc(s.timeout, func() { close(due) })
		select {
		case <-wait:
		case <-due:
			s.log.Warn("stopping a server removed by a config change with calls still running: they took longer than its timeout", "timeout", s.timeout)
		case <-s.m.life.Done():
		}
		t.Stop()
	}
	s.close()
	s.log.Info("stopped: removed or changed by a config change")
}

// removedError is the error of a request to a server a reload removed.
func removedError(name string) error {
	return newError(ErrRemoved, nil, "upstream %q was removed by a config change while this request was on its way; list the tools again to see the current catalog", name)
}
