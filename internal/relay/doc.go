// Package relay is what the byte path writes to a client: a source's
// tools/call answer, as bytes, made into the JSON-RPC response the typed
// path would have sent, or into a clear error when the answer cannot be
// one.
//
// It holds the two rules both paths share, so that they cannot drift:
//
//   - Complete: what a result needs to be complete (the content the
//     protocol requires, "resultType":"complete" for a 2026-07-28 request).
//     The typed path's sdkshim.Complete marks results through it; the byte
//     path completes a source's bytes with it.
//   - Answer: the one check a source's answer passes before it goes out
//     as bytes (valid JSON, an object), the completion, and the envelope.
//     A message the relay writes is valid JSON-RPC, or the call is
//     answered with a tool error that says the server's answer was bad.
//
// It also holds Intake, a source connection's reader drain as an event
// ("the source has nothing more in hand"), which closes a round of input
// requests for a 2026-07-28 client (see README.md).
//
// The package knows nothing of transports, sessions or sources: the
// gateway's stdio edge and HTTP fast path hand it bytes and write what it
// returns. It imports the SDK's types only to word its errors as the typed
// path words them.
package relay
