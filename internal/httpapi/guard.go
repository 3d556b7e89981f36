package httpapi

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// isLoopbackHost reports whether a host, with or without a port, names the
// local machine: "localhost", a name under ".localhost" (RFC 6761 reserves
// it for loopback, and browsers resolve it so), or a loopback IP.
func isLoopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// checkHost refuses, on a loopback listener, a Host that is not a loopback
// name. That is what a DNS-rebinding page looks like: the browser believes
// it talks to evil.example, which now resolves to 127.0.0.1. A browser
// sends no Origin with a same-origin GET, so without this check such a page
// could read /api/tools and the dashboard.
func (a *API) checkHost(w http.ResponseWriter, r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil || !isLoopbackHost(local.String()) || isLoopbackHost(r.Host) {
		return true
	}
	a.log.Warn("refused a request whose Host is not a loopback name on a loopback listener (DNS-rebinding protection)", "host", r.Host, "path", r.URL.Path, "remote", r.RemoteAddr)
	writeError(w, http.StatusForbidden, fmt.Sprintf("Host %q is not a loopback name, and toolfold listens on a loopback address: connect through localhost or 127.0.0.1 (this protects against DNS rebinding)", r.Host))
	return false
}

// originPolicy decides which browser origins may talk to toolfold.
type originPolicy struct {
	any     bool
	allowed map[string]bool
}

func newOriginPolicy(allowed []string) originPolicy {
	p := originPolicy{allowed: map[string]bool{}}
	for _, o := range allowed {
		if o == "*" {
			p.any = true
			continue
		}
		if n, ok := normalizeOrigin(o); ok {
			p.allowed[n] = true
		}
	}
	return p
}

// normalizeOrigin lowers scheme and host, drops a trailing slash and a
// default port, so "HTTPS://App.example.com:443/" matches the
// "https://app.example.com" a browser sends.
func normalizeOrigin(o string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(o))
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Host)
	if h, port, err := net.SplitHostPort(host); err == nil {
		if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
			host = h
			if strings.Contains(h, ":") {
				host = "[" + h + "]"
			}
		}
	}
	return scheme + "://" + host, true
}

// allows reports whether a browser on origin may use the API. Loopback
// origins are always allowed: a page served from this machine is no
// rebinding attack. "null" (sandboxed frames, file: pages) and every other
// origin must be listed.
func (p originPolicy) allows(origin string) bool {
	if p.any {
		return true
	}
	n, ok := normalizeOrigin(origin)
	if !ok {
		return false
	}
	if p.allowed[n] {
		return true
	}
	u, _ := url.Parse(n)
	return (u.Scheme == "http" || u.Scheme == "https") && isLoopbackHost(u.Host)
}

// checkOrigin refuses a request whose Origin is not allowed, and marks an
// allowed cross-origin response readable by the browser (CORS). A request
// without Origin does not come from a browser's script (or is a
// same-origin GET, which checkHost covers) and passes.
func (a *API) checkOrigin(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	if !a.origins.Load().allows(origin) {
		a.log.Warn("refused a request from an origin that is not allowed (DNS-rebinding protection)", "origin", origin, "path", r.URL.Path, "remote", r.RemoteAddr)
		writeError(w, http.StatusForbidden, fmt.Sprintf("requests from the origin %q are not allowed: only loopback origins are accepted unless the origin is listed in http.allowedOrigins of the toolfold config", origin))
		return false
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate")
	return true
}

// isPreflight reports a CORS preflight: the browser asks before it sends a
// request with an Authorization or Mcp-Session-Id header. It carries no
// credentials, so it is answered before authentication.
func isPreflight(r *http.Request) bool {
	return r.Method == http.MethodOptions && r.Header.Get("Origin") != "" && r.Header.Get("Access-Control-Request-Method") != ""
}

func answerPreflight(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Access-Control-Allow-Methods", "GET, HEAD, POST, DELETE")
	h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID")
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
}
