package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolfold/toolfold/internal/logtest"
)

// requireJaeger returns the Jaeger binary scripts/jaeger.sh built (named by
// $TOOLFOLD_JAEGER), or skips (fails where TOOLFOLD_REQUIRE_JAEGER=1, as in
// CI).
func requireJaeger(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("TOOLFOLD_JAEGER")
	err := fmt.Errorf("TOOLFOLD_JAEGER names no Jaeger binary; build one with: export TOOLFOLD_JAEGER=$(scripts/jaeger.sh)")
	if bin != "" {
		if _, err = os.Stat(bin); err == nil {
			return bin
		}
	}
	if os.Getenv("TOOLFOLD_REQUIRE_JAEGER") == "1" {
		t.Fatalf("Jaeger is required here: %v", err)
	}
	t.Skipf("skipping: %v", err)
	return ""
}

// jaeger is a Jaeger all-in-one started for one test, keeping traces in
// memory: OTLP in, its query API out.
type jaeger struct {
	otlpHTTP, otlpGRPC string // host:port
	query              string // base URL of the query API
}

func startJaeger(t *testing.T) *jaeger {
	t.Helper()
	bin := requireJaeger(t)
	// Its five ports are picked free, then bound by Jaeger: a process that
	// takes one between the two makes it exit, and it starts again on
	// other ports.
	for try := 1; ; try++ {
		j, clash := launchJaeger(t, bin)
		if !clash {
			return j
		}
		if try == 4 {
			t.Fatalf("jaeger could not bind free loopback ports in %d tries", try)
		}
	}
}

// launchJaeger starts Jaeger on free ports and waits until it listens;
// clash reports that it exited because a port was taken.
func launchJaeger(t *testing.T, bin string) (j *jaeger, clash bool) {
	t.Helper()
	j = &jaeger{otlpHTTP: freeAddr(t), otlpGRPC: freeAddr(t)}
	queryAddr, health := freeAddr(t), freeAddr(t)
	j.query = "http://" + queryAddr
	cfg := fmt.Sprintf(`service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: mem
    http:
      endpoint: %s
    grpc:
      endpoint: %s
  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: 1000
  healthcheckv2:
    use_v2: true
    http:
      endpoint: %s
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: %s
      http:
        endpoint: %s
processors:
  batch:
    timeout: 50ms
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
`, queryAddr, freeAddr(t), health, j.otlpGRPC, j.otlpHTTP)
	path := filepath.Join(t.TempDir(), "jaeger.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--config", "file:"+path)
	stderr := &logtest.Buffer{} // written by the child's copier, read here
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cancel()
		<-exited
		if t.Failed() {
			t.Logf("jaeger output:\n%s", stderr.String())
		}
	})
	for _, addr := range []string{health, queryAddr, j.otlpHTTP} {
		if !listening(t, addr, exited) {
			if strings.Contains(strings.ToLower(stderr.String()), "address already in use") {
				return nil, true
			}
			t.Fatalf("jaeger exited before it listened on %s", addr)
		}
	}
	return j, false
}

// jaegerSpan is a span as Jaeger's query API returns it.
type jaegerSpan struct {
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	References    []struct {
		RefType string `json:"refType"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	Tags []struct {
		Key   string `json:"key"`
		Value any    `json:"value"`
	} `json:"tags"`
	ProcessID string `json:"processID"`
}

func (s jaegerSpan) parent() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
	}
	return ""
}

func (s jaegerSpan) tag(key string) string {
	for _, tg := range s.Tags {
		if tg.Key == key {
			return fmt.Sprint(tg.Value)
		}
	}
	return ""
}

// trace reads a trace back once it holds spans that satisfy done (the
// gateway exports in batches, so they arrive in turn): the trace's ids
// and its spans. A minute without them fails the test: a bound, not a
// guess at how long an export takes.
func (j *jaeger) trace(t *testing.T, traceID string, done func([]jaegerSpan) bool) []jaegerSpan {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	var last string
	for {
		resp, err := http.Get(j.query + "/api/traces/" + traceID)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		last = string(raw)
		var body struct {
			Data []struct {
				TraceID string       `json:"traceID"`
				Spans   []jaegerSpan `json:"spans"`
			} `json:"data"`
		}
		if resp.StatusCode == http.StatusOK && json.Unmarshal(raw, &body) == nil && len(body.Data) > 0 {
			if len(body.Data) != 1 || body.Data[0].TraceID != traceID {
				t.Fatalf("trace %s read back as %d traces: %s", traceID, len(body.Data), raw)
			}
			if done(body.Data[0].Spans) {
				return body.Data[0].Spans
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("trace %s never held the spans wanted; last answer %d: %s", traceID, resp.StatusCode, last)
		}
		time.Sleep(100 * time.Millisecond) // polling a query API: nothing to wait on
	}
}

var (
	sawTraceparent = regexp.MustCompile(`traceparent=(00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2})`)
	sawHeader      = regexp.MustCompile(`header=(00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2})`)
)

// TestTracesReachTheCollector: calls that carry a client's trace context
// (in _meta, or in the HTTP headers) through toolfold reach a fixture
// upstream inside that trace, and the trace read back from a real
// collector (Jaeger) holds the client's parent, toolfold's server span
// under it and its client span under that, whose id is the parent the
// upstream was given. The calls take the typed path (a progress token
// needs it) and the byte paths (an HTTP session's, a 2026-07-28
// request's); with TOOLFOLD_BYTE_FORWARDING=off all typed. The audit line
// names each call's path.
func TestTracesReachTheCollector(t *testing.T) {
	node := requireNode(t)
	j := startJaeger(t)
	script, err := filepath.Abs("testdata/servers/trace-server.mjs")
	if err != nil {
		t.Fatal(err)
	}
	// A remote server, which should find the trace context in its
	// headers as well as in _meta.
	remoteServer := mcp.NewServer(&mcp.Implementation{Name: "remote-trace", Version: "1"}, nil)
	mcp.AddTool(remoteServer, &mcp.Tool{Name: "echo", Description: "Says which trace context the call brought."},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			tp, _ := req.Params.Meta["traceparent"].(string)
			var header string
			if req.Extra != nil {
				header = req.Extra.Header.Get("traceparent")
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "traceparent=" + tp + " header=" + header}}}, nil, nil
		})
	remote := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return remoteServer }, nil))
	t.Cleanup(remote.Close)
	for i, protocol := range []string{"http/protobuf", "grpc"} {
		t.Run(strings.ReplaceAll(protocol, "/", "-"), func(t *testing.T) {
			tracesThrough(t, j, protocol, byte('0'+i), node, script, remote.URL)
		})
	}
}

// tracesThrough is TestTracesReachTheCollector's calls, with spans
// exported over protocol; salt ends every trace id, so that each
// protocol's traces are its own in the one collector.
func tracesThrough(t *testing.T, j *jaeger, protocol string, salt byte, node, script, remoteURL string) {
	endpoint := "http://" + j.otlpHTTP
	if protocol == "grpc" {
		endpoint = "http://" + j.otlpGRPC
	}
	path := writeConfig(t, map[string]any{
		"mcpServers": map[string]any{
			"trace":  map[string]any{"command": node, "args": []string{script}},
			"remote": map[string]any{"url": remoteURL},
		},
		"telemetry": map[string]any{"tracing": true, "endpoint": endpoint, "protocol": protocol, "serviceName": "toolfold-e2e"},
	})
	t.Setenv("TOOLFOLD_CACHE_DIR", t.TempDir())
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50") // export within 50 ms, not 5 s
	base := startHTTP(t, "--config", path, "--mode", "flat")
	post := func(body string, header map[string]string) (int, string, http.Header) {
		t.Helper()
		return postMCP(t, base+"/mcp", body, header)
	}
	session := openRawSession(t, base+"/mcp", "e2e-trace", nil)
	modernMeta := `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"e2e-trace","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}`
	typed := func(path string) string {
		if os.Getenv("TOOLFOLD_BYTE_FORWARDING") == "off" {
			return "typed"
		}
		return path
	}
	calls := []struct {
		name, tool, path, traceID, parent string
		body                              func(traceparent string) string
		header                            func(traceparent string) map[string]string
	}{
		{"a call with a progress token (typed)", "trace__echo", "typed", "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331",
			func(tp string) string {
				return `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"trace__echo","arguments":{},"_meta":{"progressToken":"p1","traceparent":"` + tp + `"}}}`
			},
			func(string) map[string]string { return session }},
		{"an HTTP session's call (bytes)", "trace__echo", typed("http-session-bytes"), "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7",
			func(tp string) string {
				return `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"trace__echo","arguments":{},"_meta":{"traceparent":"` + tp + `"}}}`
			},
			func(string) map[string]string { return session }},
		{"a 2026-07-28 request with the context in its headers (bytes)", "trace__echo", typed("http-request-bytes"), "5c1d7b0e9f2a4c3b8d6e0f1a2b3c4d5e", "1a2b3c4d5e6f7081",
			func(string) string {
				return `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"trace__echo","arguments":{},"_meta":{` + modernMeta + `}}}`
			},
			func(tp string) map[string]string {
				return map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "trace__echo", "traceparent": tp}
			}},
		{"a remote server's call (typed: its _meta and its headers)", "remote__echo", "typed", "6e0c63257de34c926f9efcd03927272e", "2b3c4d5e6f708192",
			func(tp string) string {
				return `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"remote__echo","arguments":{},"_meta":{"traceparent":"` + tp + `"}}}`
			},
			func(string) map[string]string { return session }},
	}
	for _, c := range calls {
		c.traceID = c.traceID[:31] + string(salt)
		tp := "00-" + c.traceID + "-" + c.parent + "-01"
		code, body, _ := post(c.body(tp), c.header(tp))
		m := sawTraceparent.FindStringSubmatch(body)
		if code != http.StatusOK || m == nil {
			t.Errorf("%s: %d %s; want the upstream's answer naming the trace context it got", c.name, code, body)
			continue
		}
		upstreamParent := strings.Split(m[1], "-")[2]
		if c.tool == "remote__echo" {
			if h := sawHeader.FindStringSubmatch(body); h == nil || h[1] != m[1] {
				t.Errorf("%s: the remote server's traceparent header is not the one in its _meta (%s): %s", c.name, m[1], body)
			}
		}
		if got := strings.Split(m[1], "-")[1]; got != c.traceID {
			t.Errorf("%s: the upstream got trace %s, want the client's %s", c.name, got, c.traceID)
			continue
		}
		var server, client jaegerSpan
		j.trace(t, c.traceID, func(spans []jaegerSpan) bool {
			for _, s := range spans {
				switch {
				case s.tag("span.kind") == "server" && s.OperationName == "tools/call "+c.tool:
					server = s
				case s.tag("span.kind") == "client" && s.OperationName == "tools/call echo":
					client = s
				}
			}
			return server.SpanID != "" && client.SpanID != ""
		})
		if server.parent() != c.parent {
			t.Errorf("%s: toolfold's server span's parent is %q, want the client's %s", c.name, server.parent(), c.parent)
		}
		if client.parent() != server.SpanID {
			t.Errorf("%s: toolfold's client span's parent is %q, want its server span %s", c.name, client.parent(), server.SpanID)
		}
		if upstreamParent != client.SpanID {
			t.Errorf("%s: the upstream's parent span is %s, want toolfold's client span %s", c.name, upstreamParent, client.SpanID)
		}
		for key, want := range map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": c.tool, "toolfold.outcome": "ok", "toolfold.path": c.path} {
			if got := server.tag(key); got != want {
				t.Errorf("%s: server span's %s = %q, want %q", c.name, key, got, want)
			}
		}
	}
}
