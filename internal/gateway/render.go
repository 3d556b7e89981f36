package gateway

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/meta"
	"github.com/toolfold/toolfold/internal/view"
)

// A tool list is rendered from what it depends on alone: a catalog state
// (immutable once published), a view (a fresh one where no client keeps
// one) and a presentation. Every role that answers tools/list (the
// shared server of a static mode, a client's own server with its view, a
// request answered on its own) renders through listTools, so they cannot
// disagree about what a presentation shows.

// listTools is the tool list p shows of st through the view v, by wire
// name.
func listTools(st *state, v *view.View, p presentation) map[string]*mcp.Tool {
	if p.extension {
		// Every tool with its groups: the client filters them itself.
		return st.ext.extensionTools()
	}
	want := map[string]*mcp.Tool{}
	expo := st.expo[p.mode]
	snap := v.Snapshot()
	for _, w := range expo.Listed(snap) {
		want[w.Name] = w.Tool
	}
	n := st.look.names
	switch p.mode {
	case expose.Flat:
		if p.groupMeta {
			// Clients that search their own list learn each tool's groups
			// from its _meta (the grouping draft's key), and read the
			// search hints they honour (hints.go).
			for _, w := range expo.Listed(snap) {
				want[w.Name] = withSearchHints(withGroups(w.Tool, st.ext.memberships(w)), w)
			}
		}
	case expose.Groups:
		if p.stateless {
			want[n.Enable] = meta.StatelessEnableTool(n, v)
			want[n.Find] = meta.FindTool(n)
			want[n.Call] = meta.CallTool(n)
			break
		}
		shared := st.metaTools()
		want[n.Enable] = shared.enable
		if snap.Version != 0 || v.Space() != st.space {
			// Only a view in its initial state shares its description.
			want[n.Enable] = meta.EnableTool(n, v)
		}
		want[n.Disable] = shared.disable
		want[n.Find] = shared.find
		want[n.Call] = shared.call
		if st.look.resetTools {
			want[n.Reset] = shared.reset
		}
	case expose.Search:
		want[n.Find] = meta.FindTool(n)
		want[n.Describe] = meta.DescribeTool(n)
		want[n.Call] = meta.CallToolFor(n, expose.Search)
		want[n.Guidance] = meta.GuidanceTool(n)
	}
	return want
}

// renderRequest is the per-request render: the tool list a request
// without a view gets, a function of the catalog state and the
// presentation alone. It reads no session and no gateway, so two requests
// that present alike over the same state list the same bytes, whatever
// other clients did in between.
func renderRequest(st *state, p presentation) map[string]*mcp.Tool {
	// The list depends on the state and the presentation alone (a fresh
	// view is in the catalog's initial state), and a per-request session
	// only reads it: one list per presentation serves every request, where
	// each call of a 2026-07-28 client built it anew.
	if m, ok := st.requestLists.Load(p); ok {
		return m.(map[string]*mcp.Tool)
	}
	m, _ := st.requestLists.LoadOrStore(p, listTools(st, st.space.New(), p))
	return m.(map[string]*mcp.Tool)
}

// groupsMeta are the groups mode's meta-tool definitions for one catalog
// state. Every session of the mode lists them, and each definition is
// kilobytes (enable_tools' describes every group): made once per state
// and shared, they cost a session nothing. The SDK keeps the definitions
// it is given as they are (TestSDKAddToolKeepsTheDefinitionAsGiven).
type groupsMeta struct {
	// enable is enable_tools' definition for a view in its initial state;
	// a view that has changed describes itself.
	enable, disable, find, call *mcp.Tool
	// reset is nil unless Options.ResetTools.
	reset *mcp.Tool
}

// metaTools returns the groups mode's meta-tools for st, made on the first
// request for them: a value derived from st alone, kept with it.
func (st *state) metaTools() *groupsMeta {
	st.groupsMeta.once.Do(func() {
		n := st.look.names
		m := &groupsMeta{enable: meta.EnableTool(n, st.space.New()), disable: meta.DisableTool(n), find: meta.FindTool(n), call: meta.CallTool(n)}
		if st.look.resetTools {
			m.reset = meta.ResetTool(n, st.expo[expose.Groups].Catalog())
		}
		st.groupsMeta.m = m
	})
	return st.groupsMeta.m
}
