package assemble

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/upstream"
)

// ErrNeedsRestart says a reloaded config changes something a running
// gateway cannot take: the caller keeps serving the old config.
var ErrNeedsRestart = errors.New("this change needs a restart")

// Reconciled is what Adopt changed.
type Reconciled struct {
	upstream.Change
	// NeedsRestart names the settings the new config changes that the
	// running gateway keeps as they were until a restart (see
	// restartNeeded); everything else was applied.
	NeedsRestart []string
}

// Adopt makes p, planned from a reloaded config, the plan that b's
// running gateway serves, in place of old, the plan it serves now. The
// running servers are reconciled with p's (see upstream.Manager.Reconfigure):
// a server whose config is unchanged keeps its process. Then the catalog
// of p's groups and tools is built and handed to the gateway, whose
// sessions stay open and hear list_changed only where their list changed,
// and from then on upstream changes rebuild p's catalog, not old's.
//
// p's own upstreams are dropped (nothing of them was started): p serves
// old's from now on. A config that adds the first MCP server to a gateway
// started without any cannot be adopted (the gateway was built without a
// way to reach servers): Adopt returns ErrNeedsRestart and changes nothing.
func (p *Plan) Adopt(old *Plan, b *Built) (Reconciled, error) {
	return b.sup.adopt(old, p)
}

// reloadStartWait bounds how long a reload waits for the servers it added
// to list their tools before it builds the catalog.
const reloadStartWait = 5 * time.Second

// awaitFresh waits, at most reloadStartWait, for the servers a reload
// added or changed that have no known list: a short wait for them saves
// building the catalog twice (once with their tools pending, once with
// them), which at 20,000 tools is seconds of CPU. One slower than the
// wait joins when it is ready.
func (u *Upstreams) awaitFresh(ch upstream.Change) {
	fresh := map[string]bool{}
	for _, n := range append(append([]string(nil), ch.Added...), ch.Changed...) {
		fresh[n] = true
	}
	if len(fresh) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), reloadStartWait)
	defer cancel()
	u.awaitPending(ctx, func(s string) bool { return fresh[s] })
}

// reconcile makes nu's servers (nil: none) the servers of u, which keeps
// serving: see upstream.Manager.Reconfigure.
func (u *Upstreams) reconcile(nu *Upstreams) upstream.Change {
	var configs map[string]config.ServerConfig
	var servers []upstreamServer
	var startWait = u.StartWait()
	if nu != nil {
		configs, servers, startWait = nu.configs, nu.servers, nu.startWait
	}
	u.noteGone(configs)
	ch := u.Manager.Reconfigure(configs)
	u.serversMu.Lock()
	u.servers, u.configs, u.startWait = servers, configs, startWait
	u.serversMu.Unlock()

	gone := append(append([]string(nil), ch.Removed...), ch.Changed...)
	var prompts, resources bool
	u.mu.Lock()
	for _, name := range gone {
		delete(u.failed, name)
		delete(u.results, name)
		if o, ok := u.offered[name]; ok {
			prompts = prompts || o.prompts
			resources = resources || o.resources
			delete(u.offered, name)
		}
	}
	discovering := u.settled != nil
	onPrompts, onResources := u.onPrompts, u.onResources
	u.mu.Unlock()
	for _, name := range gone {
		u.routes.forget(name, true, true)
	}
	if prompts && onPrompts != nil {
		onPrompts()
	}
	if resources && onResources != nil {
		onResources()
	}
	if discovering && len(ch.Added)+len(ch.Changed) > 0 {
		// Added servers start as they would have at start: those with
		// no known list, and those not lazy.
		go u.runDiscovery()
	}
	return ch
}

// restartNeeded lists the settings that differ between the running plan
// and the new one and that a running gateway cannot take: they shape the
// gateway itself, which is built once. The presentation (disclosure.mode,
// exposition, disclosure.metaTools, resetTools, the auto mode's client
// lists, byteForwarding, answerBytesInFlight) is applied by Adopt
// (gateway.UpdateWith).
func restartNeeded(old, p *Plan) []string {
	var out []string
	differ := func(name string, a, b any) {
		if !reflect.DeepEqual(a, b) {
			out = append(out, name)
		}
	}
	// Tokens, allowed origins, OAuth and the session cap are the HTTP
	// side's to apply (httpapi.API.SetTokens, SetOrigins, SetOAuth,
	// gateway.SetMaxSessions): the rest of the block shapes the listener
	// and the handlers.
	oh, nh := old.HTTP, p.HTTP
	differ("http.listen", oh.Listen, nh.Listen)
	differ("http.stateless", oh.Stateless, nh.Stateless)
	differ("http.sessionIdleTimeout", oh.SessionIdleTimeout, nh.SessionIdleTimeout)
	differ("http.allowUnauthenticated", oh.AllowUnauthenticated, nh.AllowUnauthenticated)
	differ("telemetry", old.Telemetry, p.Telemetry)
	if old.cfg != nil && p.cfg != nil {
		differ("trust", old.cfg.Trust, p.cfg.Trust)
	}
	return out
}

// noteGone records, before the servers missing from configs are removed,
// the catalog names of their tools: a client that calls one after its
// list changed is told the tool went with a config change, not only that
// no such tool exists. A server that comes back takes its notes away.
func (u *Upstreams) noteGone(configs map[string]config.ServerConfig) {
	notes := map[catalog.ToolID]goneTool{}
	for _, s := range u.serverList() {
		if _, kept := configs[s.key]; kept {
			continue
		}
		tools, _ := u.Manager.CachedTools(s.key)
		for _, t := range tools {
			id := s.toolID(t.Name)
			notes[id] = goneTool{server: s.key, note: fmt.Sprintf("tool %q was removed by a config change: its server %q is no longer in the config. List the tools again to see the current catalog", string(id), s.key)}
		}
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	for id, g := range u.gone {
		if _, back := configs[g.server]; !back {
			if _, again := notes[id]; !again {
				notes[id] = g
			}
		}
	}
	u.gone = notes
}

// goneTool is a tool a reload removed, with what a call to it is told.
type goneTool struct{ server, note string }

// withGoneNotes adds the notes of removed tools to held, a catalog's
// Spec.Held: every path that cannot route a name answers with its note.
func (u *Upstreams) withGoneNotes(held map[catalog.ToolID]string) map[catalog.ToolID]string {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.gone) == 0 {
		return held
	}
	out := make(map[catalog.ToolID]string, len(held)+len(u.gone))
	for id, g := range u.gone {
		out[id] = g.note
	}
	for id, n := range held { // a hold is the truer news
		out[id] = n
	}
	return out
}
