// Package meta defines the meta-tools through which an agent unfolds the
// catalog (enable_tools, disable_tools, reset_tools, call_tool, and the
// discovery tools), their wire definitions and what they do to a view.
//
// Handlers here are plain functions of a view and an exposure that return
// result values; the gateway turns them into MCP results and tells the
// client when its list changed. That keeps every rule testable without a
// connection.
package meta
