// Package upstream talks to the MCP servers toolfold folds, as their client, and
// keeps them healthy.
//
// A [Manager] owns a fixed set of named servers (the mcpServers block of the
// config). It starts each one on first need (lazy start), remembers every server's
// tool list on disk so a later run knows the tools without spawning anything,
// restarts a crashed server on the next call with capped exponential backoff, bounds
// every call with the server's timeout, forwards cancellation and progress, and
// routes the requests an upstream sends back to its client (sampling, elicitation,
// roots) to the downstream client whose call caused them.
//
// The package knows nothing about toolfold's groups, views or wire names: it hands
// out tool lists and forwards calls by a server's own tool names. Include and
// exclude globs from the config are the one exception, because a tool a server's
// config excludes must never be called, whoever asks. The groups a server itself
// declares, through the grouping draft (io.modelcontextprotocol/grouping) or as
// skills (io.modelcontextprotocol/skills), are read and handed out as the server
// said them ([Manager.CachedGroups]); making catalog groups of them is the
// caller's business.
//
// See README.md in this directory for the lifecycle, the cache format, supervision
// and the limits of routing server→client requests.
package upstream
