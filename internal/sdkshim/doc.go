// Package sdkshim holds every place toolfold works around the Go MCP SDK
// (github.com/modelcontextprotocol/go-sdk): the SDK-facing mechanics of
// each workaround as a small function or type, and beside it the pin test
// (TestSDK…) that runs the bare SDK and fails when it no longer behaves as
// the workaround assumes.
//
// One run, go test ./internal/sdkshim/, therefore tells whether a new SDK
// version still behaves as toolfold relies on. A failing pin names the
// workaround to revisit: either the SDK fixed what it works around (the
// workaround may go) or changed what it builds on (it must change).
//
// The policies stay with their owners: the gateway decides when a list
// changed, which error is "not found", which session is idle; this package
// only knows how to make the SDK do it. docs/sdk-workarounds.md lists each
// workaround with the SDK API that would remove it.
package sdkshim
