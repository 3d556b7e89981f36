// Package expose turns a catalog into what goes on the wire: wire names,
// flat tools, grouped "one tool, many actions" tools, the route from a wire
// name back to the tool that serves it, and the checks on a call's arguments.
//
// An Exposure is built once per catalog and mode and shared by every session
// in that mode. Rendering a session's list is a walk over its view's bitsets
// that picks prebuilt wire tools; nothing is marshalled per session.
package expose
