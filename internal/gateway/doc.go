// Package gateway serves a catalog to MCP clients: it owns the sessions, a
// view per client, the meta-tools' effects, calls into sources and the
// notifications that tell a client its list changed.
//
// # One server per view
//
// The Go SDK keeps one tool list per *mcp.Server and sends
// notifications/tools/list_changed to every session of that server. A
// client whose list depends on its own view therefore gets a server of its
// own, reconciled from the view after each change: the SDK then paginates,
// debounces and delivers list_changed (including to 2026-07-28 clients
// subscribed through subscriptions/listen) exactly as it would for a hand-
// written server, and nobody else hears it. Rewriting tools/list in a
// middleware on a shared server was the alternative; it cannot send a
// notification to one session, because the SDK exposes no such call.
//
// Clients whose list never changes (flat, grouped and search modes) share
// one server per mode, so a thousand search-mode sessions cost a thousand
// SDK sessions and nothing more.
//
// A session is the part these share (the SDK server, the catalog state and
// view it serves, how a call is answered); what one kind answers its own
// way is its role (roles.go): the list it shows, which tools a call may
// reach, and what it does when the catalog moves. The roles are the shared
// server of a static mode, a client's own server with its view, the
// per-request server, and one request of a client without a view.
//
// A view's server announces its own list changes: the SDK would send
// list_changed after a 10 ms debounce, after the call's result and
// sometimes twice, so a sending middleware drops the SDK's and the gateway
// sends one on the call's own context (its response stream over HTTP)
// before returning the result, only when the list changed. A lock keeps a
// change and its announcement together when calls overlap.
//
// # Clients without a view
//
// A 2026-07-28 client's list must not vary per connection or with its
// calls, on stdio too; a client of the groups extension unfolds groups
// itself. Both are served by one per-request server (request.go), which
// answers tools/list and tools/call from each request alone: its protocol
// version, and on 2026-07-28 the clientInfo and clientCapabilities in the
// request's _meta, never remembered state. renderRequest (render.go)
// renders the list from the catalog state and the presentation alone;
// nothing keeps it. The same server answers
// groups/list and groups/get (ext.go) from the groups mode's exposure.
// present (gateway.go) is docs/protocol.md's table of who gets what.
//
// The mode of an auto client depends on its clientInfo, which arrives in its
// first message. The gateway reads that message before it picks the
// client's server (from stdin on stdio, from the request body on HTTP), so
// a server's tool list is complete before its session starts and no
// spurious list_changed is ever sent. Over HTTP it also picks the SDK
// handler: 2026-07-28 requests go to a stateless one, the only kind the
// SDK serves that protocol from.
//
// # Sources still starting
//
// A catalog names the sources whose tools are not known yet (Pending) and
// those that failed to start (Unavailable, with why). A request whose
// answer depends on pending tools waits, at most Options.StartWait, for
// the Update that brings them: a call until its tool routes, enable_tools
// until its groups are complete, find_tools and guidance for every pending
// source, and tools/list for a client not known to refresh on list_changed
// (matched on clientInfo like the auto mode). A client that refreshes gets
// its list at once and list_changed later. Each Update closes a channel
// the waiters watch, once every session serves the new catalog. See
// pending.go.
//
// # Prompts and resources
//
// Prompts, resources and completion are answered from Extras by a
// middleware, the same for every client, and never cached; except that
// Extras that list by source (SourceListing) let the groups extension
// scope a source's prompts and resources to the group that takes its tools
// whole, like scoped tools (scope.go). When the
// sources' lists change, PromptsChanged and ResourcesChanged tell every
// server (shared, per-view and group endpoints) after a short coalescing
// delay. The SDK has no call that sends list_changed on its own; it sends
// one when its registry changes, so each server adds and removes a
// placeholder prompt or resource that no client ever sees
// (sdkshim.RegistryAnnouncer, called from listchanged.go), and the SDK's
// delivery does the rest, listen streams included.
//
// # Input for clients that take no requests
//
// A 2026-07-28 client cannot be sent elicitation, sampling or roots
// requests; a server asks it through an InputRequiredResult and the
// client's retry. Sources still ask mid-request (upstreams are offered
// 2025-11-25), so the gateway runs such a client's tools/call, prompts/get
// or resources/read detached from its request, answers the request with
// the questions the source asked, and hands the answers of the retry to
// the source's waiting requests. See input.go. Extras get no request, so
// the Downstream to ask is in their context (DownstreamFrom), for every
// client.
//
// # The edges
//
// The SDK ends a stdio session on the first line it cannot decode, so
// ServeStdio reads stdin itself (frame.go): a malformed line is answered
// with -32700 or -32600 and logged, a request whose id is still in flight
// or that comes before initialize gets -32600, and only what the SDK can
// take reaches it. Over HTTP, a front before the SDK's handler (http.go)
// picks a new session's server, counts the open sessions of every endpoint
// against one cap (sessions.go), closes idle ones, and lets no request that
// opens no session cost a view or a count.
//
// # The fast path of tools/call
//
// A tools/call that needs nothing of the SDK is forwarded as bytes
// (package rawcall): the client's message is read only as far as routing
// needs (id, method, name, the per-hop _meta), the source sends the
// arguments as they came, and its result is written back with the id
// restored, from the source's reading goroutine. On stdio, rawEdge takes
// such lines from the screen before they reach the SDK (raw.go); on HTTP,
// serveFast takes 2026-07-28 requests that carry no session, and
// sessionFast the calls of an initialized 2025-11-25 session (httpfast.go).
// It applies to a flat tool the view reaches whose source checks its own
// arguments and is running, with no progress token, from a client that
// has initialized or (2026-07-28) declared neither sampling nor
// elicitation; on an HTTP session, from a client that declared neither.
// Anything else takes the typed path through the SDK, unchanged:
// meta-tools, grouped actions, progress, input asked through results, a
// source not started yet, an HTTP session's client that can be asked.
//
// # The gate
//
// Every request is judged in one place, whatever path then carries it
// (gate.go): who the caller is (callerOf), whether an HTTP session is this
// caller's and this endpoint's (the session table admits each request
// before any path sees it), reach (an endpoint's own catalog and, in the
// groups mode, the client's view), and one audit line per tools/call
// written by a callTicket before the answer leaves. What a typed call did
// (the source it reached, the tool call_tool reached for it, how the source
// failed) is one callRecord the ticket seals (callrecord.go): each
// execution of a call writes its own recorder, so a call that outlives its
// first request (input asked through results) never writes into a record
// another request reads. Only a ticket forwards
// bytes to a source (TestOnlyTheGateForwards). Byte forwarding can be
// turned off (Options.NoByteForwarding); every path then takes the typed
// one. How the edges work around the SDK lives in package sdkshim, each
// workaround beside the test that pins the SDK behaviour it relies on.
//
// # Traces
//
// With Options.Tracer (trace.go), the ticket is also the call's server
// span, the child of the client's trace context (its _meta, else its HTTP
// headers), and each request to a source gets a client span whose context
// goes in that request's _meta: on the typed path through the handler's
// request, on the byte paths as members spliced into the bytes
// (rawcall.Call.Meta), since nothing there is decoded. Without a tracer
// nothing is started; a client's own trace members are still passed on,
// and a byte-path call without them costs nothing more than before.
//
// # Locks
//
// The order, where two are held at once (a lock not named here is held
// alone, or is a leaf taken last):
//
//	Gateway.updating   before  every other lock Update takes (it is taken first)
//	Gateway.groups.mu  before  a part's Gateway.updating (updateGroups)
//	Gateway.groups.mu  before  a part's Gateway.mu (partHandler, updateGroups)
//	session.changing   before  session.mu (migrate, enable and disable)
//	session.announcing before  session.mu (reconcile under an announcement)
//
// session.changing and session.announcing are never held together.
// sessionTable.mu, sessionFast.mu, rawEdge.mu, Gateway.updMu and
// Gateway.mu are leaves: the table calls a session's closeIdle and ended
// hooks after releasing its lock.
package gateway
