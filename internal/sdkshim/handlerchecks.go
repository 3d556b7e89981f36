package sdkshim

import (
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A byte path that answers a streamable HTTP POST without the SDK's
// handler must pass the checks that handler makes first, and answer with
// the status it would. None of them is callable alone
// (docs/sdk-workarounds.md, item 13, proposes StreamableHTTPHandler.Check),
// so they are mirrored here, and TestSDKHandlerChecksAsMirrored and
// TestSDKErrorStatusAsMirrored compare the mirror with the handler.

// HandlerWouldServe reports whether the SDK's streamable handler would get
// past its request checks for r, a POST: the Host of a request that reached
// a loopback address names a loopback host (DNS-rebinding protection), the
// Content-Type is JSON, and Accept takes both JSON and event streams. A
// byte path hands a request that fails any of them to the handler, which
// answers it as it does.
func HandlerWouldServe(r *http.Request) bool {
	return hostAllowed(r) && jsonContent(r.Header.Get("Content-Type")) && acceptsBoth(r.Header.Values("Accept"))
}

// hostAllowed mirrors the SDK's DNS-rebinding check: a request that reached
// a loopback address must name a loopback host.
func hostAllowed(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return !ok || local == nil || !isLoopbackAddr(local.String()) || isLoopbackAddr(r.Host)
}

func isLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

func jsonContent(ct string) bool {
	base, _, _ := strings.Cut(ct, ";")
	return strings.EqualFold(strings.TrimSpace(base), "application/json")
}

// acceptsBoth mirrors the SDK: a POST must accept JSON and event streams.
func acceptsBoth(values []string) bool {
	var jsonOK, streamOK bool
	for _, value := range values {
		for raw := range strings.SplitSeq(value, ",") {
			base, _, _ := strings.Cut(strings.TrimSpace(raw), ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK && streamOK
}

// ErrorStatus is the HTTP status of a response, as the SDK sets it for the
// 2026-07-28 protocol (SEP-2575): 404 for an unknown method, 400 for
// invalid params, an unsupported protocol version or a missing client
// capability, else 200.
func ErrorStatus(err error) int {
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) {
		return http.StatusOK
	}
	switch rpcErr.Code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeInvalidParams, mcp.CodeUnsupportedProtocolVersion, mcp.CodeMissingRequiredClientCapabilities:
		return http.StatusBadRequest
	}
	return http.StatusOK
}
