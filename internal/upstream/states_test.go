package upstream

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/config"
)

// errorLog keeps the messages logged at error level.
type errorLog struct {
	mu   sync.Mutex
	msgs []string
}

func (h *errorLog) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelError }

func (h *errorLog) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs = append(h.msgs, r.Message)
	return nil
}

func (h *errorLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *errorLog) WithGroup(string) slog.Handler      { return h }

func (h *errorLog) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.msgs
	h.msgs = nil
	return m
}

// lifecycleServer is a server that is never started, with its errors
// logged to log.
func lifecycleServer(t *testing.T) (*server, *errorLog) {
	t.Helper()
	log := &errorLog{}
	m := newTestManager(t, map[string]config.ServerConfig{"fx": {Command: "unused"}}, &Options{Logger: slog.New(log)})
	return m.servers["fx"], log
}

var allPhases = []phase{phaseNew, phaseStarting, phaseRestarting, phaseReady, phaseFailed, phaseCrashed, phaseIdleStopped, phaseClosing, phaseClosed}

// Every transition the supervisor may make, written out here rather than
// read from the table, so that a change to the table shows up as a failing
// case: each listed one is taken, every other pair of phases is refused,
// logged as a bug, and leaves the server where it was.
func TestLifecycleTransitions(t *testing.T) {
	allowed := map[[2]phase]bool{
		{phaseNew, phaseStarting}:         true,
		{phaseIdleStopped, phaseStarting}: true,
		{phaseFailed, phaseRestarting}:    true,
		{phaseCrashed, phaseRestarting}:   true,
		{phaseStarting, phaseReady}:       true,
		{phaseRestarting, phaseReady}:     true,
		{phaseStarting, phaseFailed}:      true,
		{phaseRestarting, phaseFailed}:    true,
		{phaseStarting, phaseClosing}:     true,
		{phaseRestarting, phaseClosing}:   true,
		{phaseReady, phaseCrashed}:        true,
		{phaseReady, phaseIdleStopped}:    true,
		{phaseReady, phaseClosing}:        true,
		{phaseNew, phaseClosing}:          true,
		{phaseFailed, phaseClosing}:       true,
		{phaseCrashed, phaseClosing}:      true,
		{phaseIdleStopped, phaseClosing}:  true,
		{phaseClosing, phaseClosed}:       true,
	}
	s, log := lifecycleServer(t)
	for _, from := range allPhases {
		for _, to := range allPhases {
			want := allowed[[2]phase{from, to}]
			t.Run(from.String()+"→"+to.String(), func(t *testing.T) {
				s.mu.Lock()
				defer s.mu.Unlock()
				defer func() { s.phase, s.conn = phaseNew, nil }() // nothing for Close to stop
				// What ready needs, so that only the table decides here.
				s.phase, s.conn, s.known = from, &connection{s: s}, true
				gen, restarts := s.startGen, s.restarts
				got := s.transitionLocked(to, "test")
				errs := log.take()
				if got != want {
					t.Fatalf("transition allowed %v, want %v", got, want)
				}
				if !want {
					if s.phase != from {
						t.Errorf("a refused transition left the server %v, want %v", s.phase, from)
					}
					if len(errs) != 1 || !strings.HasPrefix(errs[0], "bug: ") {
						t.Errorf("a refused transition logged %q at error level, want one bug report", errs)
					}
					return
				}
				if s.phase != to || len(errs) != 0 {
					t.Errorf("server %v after the transition, errors %q; want %v, none", s.phase, errs, to)
				}
				// A start generation begins with each start, and only
				// restarts count as restarts.
				wantGen, wantRestarts := gen, restarts
				if to == phaseStarting || to == phaseRestarting {
					wantGen++
				}
				if to == phaseRestarting {
					wantRestarts++
				}
				if s.startGen != wantGen || s.restarts != wantRestarts {
					t.Errorf("start generation %d, restarts %d; want %d, %d", s.startGen, s.restarts, wantGen, wantRestarts)
				}
			})
		}
	}
}

// Ready is entered only with a connection and a tool list: a start
// that would publish the server ready without either is refused.
func TestReadyNeedsConnectionAndTools(t *testing.T) {
	for _, tc := range []struct {
		name        string
		conn, known bool
		want        bool
	}{
		{"connection and tools", true, true, true},
		{"no tool list", true, false, false},
		{"no connection", false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, log := lifecycleServer(t)
			s.mu.Lock()
			defer s.mu.Unlock()
			defer func() { s.phase, s.conn = phaseNew, nil }() // nothing for Close to stop
			s.phase, s.known = phaseStarting, tc.known
			if tc.conn {
				s.conn = &connection{s: s}
			}
			if got := s.transitionLocked(phaseReady, "test"); got != tc.want {
				t.Fatalf("ready allowed %v, want %v", got, tc.want)
			}
			if errs := log.take(); !tc.want && len(errs) != 1 {
				t.Errorf("refused without a bug report: %q", errs)
			}
		})
	}
}

// The phases are finer than the states Status reports; what /healthz
// says for each stays what it said before there were phases.
func TestPhasesReportTheSameStates(t *testing.T) {
	want := map[phase]State{
		phaseNew:         StateIdle,
		phaseStarting:    StateStarting,
		phaseRestarting:  StateRestarting,
		phaseReady:       StateReady,
		phaseFailed:      StateFailed,
		phaseCrashed:     StateRestarting,
		phaseIdleStopped: StateIdle,
		phaseClosing:     StateIdle,
		phaseClosed:      StateIdle,
	}
	for _, p := range allPhases {
		if got := p.public(); got != want[p] {
			t.Errorf("%v reports %q, want %q", p, got, want[p])
		}
	}
}

// A tool list read on the connection of an earlier start is dropped, even
// when its read began after the newer start's (a re-read after a
// list_changed that the old connection delivered late): the server has
// started again since, and only the new connection's list is current.
// Before start generations, the later read won (seen failing: recorded
// [stale]).
func TestListOfAnEarlierStartIsDropped(t *testing.T) {
	s, _ := lifecycleServer(t)
	tools := func(name string) []*mcp.Tool {
		return []*mcp.Tool{{Name: name, InputSchema: map[string]any{"type": "object"}}}
	}
	start := func() *connection {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.startGen++ // as transitionLocked does on each start
		return &connection{s: s, gen: s.startGen}
	}
	old := start()
	current := start()
	fresh := s.beginList() // the new start's read
	stale := s.beginList() // a late re-read on the old connection
	s.setTools(current, fresh, nil, tools("fresh"), nil)
	s.setTools(old, stale, nil, tools("stale"), nil)
	got, ok := s.knownTools()
	if !ok || len(got) != 1 || got[0].Name != "fresh" {
		names := []string{}
		for _, t := range got {
			names = append(names, t.Name)
		}
		t.Errorf("recorded %v (known %v); want the current start's list [fresh]", names, ok)
	}
}
