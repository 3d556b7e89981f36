// Package assemble turns what a user configured into what the gateway
// serves: it gathers the tools of every source (command-line programs,
// upstream MCP servers, Go library servers), the groups and their rules, the
// deployment switches and the presentation options into a Plan, and builds
// the catalog, the view space and the gateway from it.
//
// It is the one place where configuration meets the engine, so the engine
// packages never read config and the config package never builds anything.
package assemble
