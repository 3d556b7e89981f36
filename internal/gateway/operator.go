package gateway

import (
	"sort"
	"sync"
	"time"

	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/groupsext"
	"github.com/toolfold/toolfold/internal/meta"
)

// SessionInfo describes one live client session, for the operator's
// dashboard.
type SessionInfo struct {
	// ID is the HTTP session id; empty over stdio.
	ID string
	// Client and ClientVersion are the client's clientInfo.
	Client, ClientVersion string
	// Protocol is the protocol version the session negotiated.
	Protocol string
	// Mode is the concrete mode the client is served.
	Mode string
	// Enabled lists the groups the client has enabled (groups mode), or
	// nil when its view never changes.
	Enabled []string
	// LastSeen is when an HTTP session's last request began or ended;
	// zero over stdio. Idle marks one with no request in flight (not even
	// an open event stream) for over IdleAfter: its client may have gone
	// without closing it, and the session timeout will close it.
	LastSeen time.Time
	Idle     bool
}

// IdleAfter is how long an HTTP session without a request in flight goes
// before Sessions marks it idle.
const IdleAfter = time.Minute

// Sessions lists the sessions connected now: every client of a static
// mode's shared server, and every groups-mode client with its view.
func (g *Gateway) Sessions() []SessionInfo {
	var out []SessionInfo
	g.mu.Lock()
	table := g.httpSessions
	g.mu.Unlock()
	now := time.Now()
	add := func(s *session, enabled []string) {
		for ss := range s.server.Sessions() {
			info := SessionInfo{ID: ss.ID(), Mode: string(s.mode), Enabled: enabled}
			if table != nil && info.ID != "" {
				if seen, busy, ok := table.activity(info.ID); ok {
					info.LastSeen, info.Idle = seen, !busy && now.Sub(seen) > IdleAfter
				}
			}
			if p := ss.InitializeParams(); p != nil {
				info.Protocol = p.ProtocolVersion
				if p.ClientInfo != nil {
					info.Client, info.ClientVersion = p.ClientInfo.Name, p.ClientInfo.Version
				}
				if s.mode == perRequestMode {
					// Served per request: what its first request got.
					info.Mode = g.Presentation(ClientInfo{Name: info.Client, ProtocolVersion: info.Protocol,
						Extension: groupsext.DeclaredIn(p.Capabilities)})
				}
			}
			out = append(out, info)
		}
	}
	add(g.perRequest, nil)
	for _, s := range g.sharedSessions() {
		add(s, nil)
	}
	for _, s := range g.liveSessions() {
		if s.mode == perRequestMode {
			add(s, nil) // a stdio client of the groups extension
			continue
		}
		_, v := s.current()
		groups := v.Space().Catalog().Groups()
		enabled := []string{}
		v.Snapshot().Enabled.Each(func(i int) { enabled = append(enabled, string(groups[i].ID)) })
		add(s, enabled)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Client != out[j].Client {
			return out[i].Client < out[j].Client
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Find ranks the catalog's tools for one or more phrasings of a need as
// find_tools does (their rankings fused), for an operator trying
// descriptions and groups: every tool that is not excluded, whatever the
// configured mode.
func (g *Gateway) Find(phrasings []string, limit int) (*meta.FindResult, error) {
	var args meta.FindArgs
	if len(phrasings) > 0 {
		args = meta.FindArgs{Query: phrasings[0], Queries: phrasings[1:], Limit: limit}
	}
	st := g.cur.Load()
	d := st.disc[expose.Search]
	if d == nil {
		d = st.disc[expose.Groups]
	}
	if d == nil {
		// A flat or grouped gateway has no index: build one for this
		// catalog, once.
		st.findOnce.Do(func() {
			e, err := expose.Build(st.space, &expose.Options{Mode: expose.Search, AnnotateDescriptions: g.look().annotate, Reserved: g.look().metaNamesFor(expose.Search)})
			if err != nil {
				st.findErr = err
				return
			}
			st.find = meta.NewDiscovery(g.Names(), e, g.opts.ToolsCost)
		})
		if st.findErr != nil {
			return nil, st.findErr
		}
		d = st.find
	}
	return d.Find(args, st.space.New().Snapshot())
}

// Observers hears with every observer in it, in order.
type Observers []Observer

// ToolCalled tells every observer.
func (obs Observers) ToolCalled(tool, via, source, outcome string, took time.Duration) {
	for _, o := range obs {
		o.ToolCalled(tool, via, source, outcome, took)
	}
}

// SessionStarted tells every observer.
func (obs Observers) SessionStarted(mode string) {
	for _, o := range obs {
		o.SessionStarted(mode)
	}
}

// CallFailed tells the observers that hear trace ids.
func (obs Observers) CallFailed(tool, outcome, traceID string) {
	for _, o := range obs {
		if t, ok := o.(TraceObserver); ok {
			t.CallFailed(tool, outcome, traceID)
		}
	}
}

// HandlerPanicked tells the observers that count panics.
func (obs Observers) HandlerPanicked(path string) {
	for _, o := range obs {
		if p, ok := o.(PanicObserver); ok {
			p.HandlerPanicked(path)
		}
	}
}

var _ Observer = Observers(nil)
var _ TraceObserver = Observers(nil)
var _ PanicObserver = Observers(nil)

// findIndex is the search index built on demand for Find when the gateway
// serves no mode that has one.
type findIndex struct {
	findOnce sync.Once
	find     *meta.Discovery
	findErr  error
}

// EndSessionsOf ends the HTTP sessions that caller opened (the
// auth.TokenInfo.UserID of their first request), on every endpoint made
// from the gateway, and returns how many: a config reload that revokes a
// token ends its sessions rather than letting them run on.
func (g *Gateway) EndSessionsOf(caller string) int {
	g.mu.Lock()
	table := g.httpSessions
	g.mu.Unlock()
	if table == nil || caller == "" {
		return 0
	}
	return table.endOwnedBy(caller)
}
