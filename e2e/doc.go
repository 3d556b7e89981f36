// Package e2e holds toolfold's end-to-end tests: the built binary driven by
// real MCP clients (the official Go SDK client over stdio and streamable
// HTTP, the official TypeScript SDK client), and golden snapshots of every
// exposed tool list.
package e2e
