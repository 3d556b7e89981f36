package gateway

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/rawcall"
)

// The fast path of tools/call on streamable HTTP (package rawcall; see
// raw.go for stdio). It takes only requests of the 2026-07-28 protocol,
// which carry no session: what serves them is decided by the request
// alone (see present), so nothing the SDK remembers is skipped. A request is taken when
// every check the SDK's handler makes would pass (Host, Content-Type,
// Accept, the Mcp-Method and Mcp-Name headers, no argument bound to a
// header) and the call is one the stdio fast path would take; its answer is
// a plain JSON response, which the transport allows for any POST.
// Everything else, and every request the fast path cannot judge, goes to
// the SDK's handler as it came.

// serveFast answers a request on the fast path and reports true, or
// reports false, having written nothing, and the SDK's handler serves it.
// body is the request's, already read within the SDK's limit.
func (g *Gateway) serveFast(w http.ResponseWriter, r *http.Request, body []byte) bool {
	if !hostAllowed(r) || !jsonContent(r.Header.Get("Content-Type")) || !acceptsBoth(r.Header.Values("Accept")) ||
		r.Header.Get("Mcp-Method") != "tools/call" || hasParamHeaders(r.Header) {
		return false
	}
	req, ok := parseCall(body)
	if !ok {
		return false
	}
	name, ok := rawcall.String(req.name)
	if !ok || name != r.Header.Get("Mcp-Name") {
		return false
	}
	version, caps, info, ok := metaMembers(req.meta)
	if !ok {
		return false
	}
	ev, ok := statelessEra(version, caps, info)
	if !ok {
		return false
	}
	wire, pres, ok := g.statelessWire(name, info, caps)
	if !ok || wire.HeaderBound() {
		return false
	}
	var args json.RawMessage
	if req.args != nil && string(req.args) != "null" {
		args = req.args
	}
	id := req.id // body outlives the call
	type answer struct {
		msg     []byte
		outcome string
		status  int
	}
	answered := make(chan answer, 1)
	start := time.Now()
	call := &rawcall.Call{Arguments: args, Capabilities: ev.caps, Downstream: refusingDownstream{}}
	call.Done = func(res json.RawMessage, err error) {
		msg, outcome := fastAnswer(string(id), wire, ev, res, err)
		answered <- answer{msg, outcome, errorStatus(err)}
	}
	cancel, ok := wire.Target.Forward(call)
	if !ok {
		return false
	}
	if obs := g.opts.Observer; obs != nil {
		obs.SessionStarted(pres.String()) // as ServerFor counts a request without a session
	}
	select {
	case a := <-answered:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		_, _ = w.Write(a.msg)
		if obs := g.opts.Observer; obs != nil {
			obs.ToolCalled(wire.Name, "", wire.Target.Source, a.outcome, time.Since(start))
		}
	case <-r.Context().Done():
		cancel() // the client is gone: nobody can read the answer
	}
	return true
}

// errorStatus is the HTTP status of a response, as the SDK sets it for the
// 2026-07-28 protocol (SEP-2575): 404 for an unknown method, 400 for
// invalid params, an unsupported protocol version or a missing client
// capability, else 200.
func errorStatus(err error) int {
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

// hasParamHeaders reports arguments bound to headers (SEP-2243), which the
// SDK checks against the tool's schema.
func hasParamHeaders(h http.Header) bool {
	for k := range h {
		if len(k) >= len("Mcp-Param-") && strings.EqualFold(k[:len("Mcp-Param-")], "Mcp-Param-") {
			return true
		}
	}
	return false
}
