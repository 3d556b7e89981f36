// Package view keeps one client's state: which groups it has enabled, and so
// which tools it can see.
//
// Every MCP session has its own View; nothing in one view can reach another.
// A View only holds indexes into an immutable catalog, so an idle session
// costs a few words per 64 groups, and the rules that govern enabling and
// disabling (parents first, cascading disable, the tool limit) live here
// rather than in the protocol layer.
package view
