package gateway

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/view"
)

// role is what one kind of session answers differently from another; the
// session itself is what they share (the SDK server, the catalog state and
// view it serves, the way a call is answered). The roles:
//
//   - staticServer: the one server of a static mode, shared by every client
//     of the mode; its view never changes.
//   - viewServer: a client's own server with its own view (the groups
//     mode): its list follows the client's enable and disable calls.
//   - requestServer: the server of every client without a view; it
//     answers tools/list and tools/call per request (request.go), and its
//     registry holds only what the SDK checks headers against.
//   - transientRole: one request of such a client, rendered from the
//     catalog state and its presentation alone (renderRequest); no server.
type role interface {
	// tools is what the role lists of st through v: the client's tool
	// list, or for the requestServer what its SDK registry holds.
	tools(st *state, v *view.View) map[string]*mcp.Tool
	// reaches reports whether a call may reach w, which the exposure
	// routes: a view's roles reach what the view lists.
	reaches(expo *expose.Exposure, snap view.Snapshot, w *expose.Wire) bool
	// listChanged brings the session's list in line with st, the catalog
	// it has just moved to, and tells its clients if their lists changed;
	// quiet tells none (none was answered from the catalog it replaces).
	listChanged(s *session, st *state, quiet bool)
}

// staticServer is the shared server of a static mode.
type staticServer struct {
	mode expose.Mode
}

func (r staticServer) tools(st *state, v *view.View) map[string]*mcp.Tool {
	return listTools(st, v, serverPresentation(st, r.mode))
}

// serverPresentation is how a server presents its mode. In auto mode the
// flat list serves clients that search their own list, and tells them
// each tool's groups; it follows the mode the state was rendered with,
// which a reload may change.
func serverPresentation(st *state, m expose.Mode) presentation {
	return presentation{mode: m, groupMeta: m == expose.Flat && st.look.mode == expose.Auto}
}

func (staticServer) reaches(expo *expose.Exposure, snap view.Snapshot, w *expose.Wire) bool {
	return expo.Reachable(snap, w)
}

func (staticServer) listChanged(s *session, _ *state, quiet bool) { s.announceReconciled(quiet) }

// viewServer is a client's own server, with its own view.
type viewServer struct {
	mode expose.Mode
}

func (r viewServer) tools(st *state, v *view.View) map[string]*mcp.Tool {
	return listTools(st, v, serverPresentation(st, r.mode))
}

func (viewServer) reaches(expo *expose.Exposure, snap view.Snapshot, w *expose.Wire) bool {
	return expo.Reachable(snap, w)
}

func (viewServer) listChanged(s *session, _ *state, quiet bool) { s.announceReconciled(quiet) }

// announceReconciled reconciles a server's list and tells each of its
// clients if it changed.
func (s *session) announceReconciled(quiet bool) {
	s.announcing.Lock()
	defer s.announcing.Unlock()
	if s.reconcile() && s.toolsTap != nil && !quiet {
		for ss := range s.server.Sessions() {
			s.notifyToolsChanged(context.Background(), ss)
		}
	}
}

// requestServer is the per-request server.
type requestServer struct {
	// groupsChanged sends notifications/groups/list_changed to the one
	// client of a per-request server made for a stdio connection (see
	// ServeStdio); nil elsewhere.
	groupsChanged func()

	mu sync.Mutex
	// fingerprint identifies the lists the server answered last, so a
	// catalog update that changes none announces nothing; roots the
	// top-level groups its client was last told of.
	fingerprint, roots [32]byte
}

func newRequestServer(st *state, groupsChanged func()) *requestServer {
	return &requestServer{groupsChanged: groupsChanged, fingerprint: st.fingerprint(), roots: st.ext.fingerprint()}
}

func (*requestServer) tools(st *state, _ *view.View) map[string]*mcp.Tool { return registered(st) }

// reaches: no call reaches the server itself; each is answered by a
// transientRole of its request (perRequestMiddleware).
func (*requestServer) reaches(expo *expose.Exposure, snap view.Snapshot, w *expose.Wire) bool {
	return expo.Reachable(snap, w)
}

// listChanged keeps the registry in line (it holds the header-bound tools
// the SDK checks Mcp-Param headers against: a tool that came with this
// catalog must be checked too), and tells the clients that the lists
// changed with the catalog, if they did.
func (r *requestServer) listChanged(s *session, st *state, quiet bool) {
	s.reconcile()
	fp, roots := st.fingerprint(), st.ext.fingerprint()
	r.mu.Lock()
	same, sameRoots := fp == r.fingerprint, roots == r.roots
	r.fingerprint, r.roots = fp, roots
	r.mu.Unlock()
	if quiet {
		return
	}
	if !sameRoots && r.groupsChanged != nil {
		r.groupsChanged()
	}
	if same {
		return
	}
	// The SDK announces a change of its registry to 2025-11-25 sessions
	// and to 2026-07-28 listen streams, so a placeholder tool is added and
	// removed (as announce does for prompts).
	s.announce(toolList)
}

// transientRole is one request of a client without a view.
type transientRole struct {
	pres presentation
}

func (r transientRole) tools(st *state, _ *view.View) map[string]*mcp.Tool {
	return renderRequest(st, r.pres)
}

// reaches: without a view nothing is hidden: a client that knows a name
// (from groups/get or enable_tools) may call it.
func (r transientRole) reaches(expo *expose.Exposure, snap view.Snapshot, w *expose.Wire) bool {
	return r.pres.stateless || expo.Reachable(snap, w)
}

// listChanged: a transient session follows the catalog by itself (see
// session.current), and has no client to tell.
func (transientRole) listChanged(*session, *state, bool) {}

// stateless reports whether the session answers a request whose calls
// change no list (the groups mode's enable_tools then describes tools).
func (s *session) stateless() bool {
	t, ok := s.role.(transientRole)
	return ok && t.pres.stateless
}

// notifiesGroups reports whether the session can tell its client that the
// top-level groups changed.
func (s *session) notifiesGroups() bool {
	r, ok := s.role.(*requestServer)
	return ok && r.groupsChanged != nil
}
