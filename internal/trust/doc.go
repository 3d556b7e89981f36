// Package trust decides whether toolfold may serve what an upstream server
// says about itself.
//
// Every definition an upstream gives the model (a tool's name, title,
// description, schemas and annotations; a prompt; a resource or template; the
// server's instructions; its groups and skills; a command's discovered help)
// is an [Item]. Its digest is SHA-256 over canonical JSON ([Canonical]), so a
// server that only reorders keys or whitespace keeps its digest. The first
// digest seen is pinned in a [Lock], a text file meant to be committed beside
// the config. [Decide] compares what a server says now with its pins and the
// [Policy] and answers, per item, serve or hold (with the reason and the
// fields that changed). [Scan] looks for poisoned text; [Sanitize] removes the
// invisible and bidirectional-control characters a model must never read.
//
// The package knows nothing of the MCP SDK's session types or of the
// gateway: callers turn their definitions into items and act on the verdict.
// See README.md in this directory.
package trust
