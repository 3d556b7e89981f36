package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// requireChromium returns Debian's chromium, or skips (fails where the
// test setup installed it: scripts/test.sh sets TOOLFOLD_REQUIRE_CHROMIUM).
func requireChromium(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("TOOLFOLD_REQUIRE_CHROMIUM") == "1" {
			t.Fatalf("chromium is required here: %v", err)
		}
		t.Skipf("skipping: no chromium (apt-get install chromium): %v", err)
	}
	return bin
}

// chromium runs headless Chromium on url with a fresh profile and the
// flags that keep it off the network, and returns what it printed.
func chromium(t *testing.T, bin string, args ...string) string {
	t.Helper()
	// A guard against a hung browser, not a timing bet.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	flags := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(flags, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return stdout.String()
}

// TestDashboardInChromium loads the dashboard of `toolfold serve --http`
// in a real browser while an MCP client is connected and has called a tool
// through call_tool: the page lists the session, the call and the per-mode
// context, when the session was last seen, and the trace id of a call
// that failed (tracing on, its collector unreachable: spans are dropped,
// ids are still made), and its query box ranks tools for one or several
// phrasings. A screenshot is kept under e2e/artifacts for review.
func TestDashboardInChromium(t *testing.T) {
	bin := requireChromium(t)
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+freeAddr(t))
	base := startHTTP(t)
	ctx := context.Background()
	// A session to list: the stateful protocol's (a 2026-07-28 client has
	// none; each of its requests stands alone).
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "dashboard-e2e", Version: "9.9"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: statefulProtocol})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "calculate", "arguments": map[string]any{"expression": "6*7"}}})
	if err != nil || res.IsError {
		t.Fatalf("call_tool: %v %+v", err, res)
	}
	const traceID = "0af7651916cd43dd8448eb211c80319c"
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "calculate", "arguments": map[string]any{"expression": "6*"}},
		Meta: mcp.Meta{"traceparent": "00-" + traceID + "-b7ad6b7169203331-01"}})
	if err != nil || !res.IsError {
		t.Fatalf("a call that fails: %v %+v", err, res)
	}

	dom := chromium(t, bin, "--dump-dom", base+"/")
	for _, want := range []string{
		`<section id="sessions">`, "dashboard-e2e", "9.9", "search", "<th>last seen</th>", "s ago</td>",
		`<section id="failures">`, `<code class="trace">` + traceID + `</code>`,
		`<section id="activity">`, "<code>calculate</code>",
		`<section id="modes">`, "<td>grouped</td>",
		`<form class="query" method="get" action="/">`,
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page as Chromium built it lacks %q", want)
		}
	}

	// The query box: the form sends q back to the page, which ranks.
	dom = chromium(t, bin, "--dump-dom", base+"/?q=convert+between+units")
	_, ranking, ok := strings.Cut(dom, `<table id="ranking">`)
	ranking, _, _ = strings.Cut(ranking, "</table>")
	if !ok || !strings.Contains(ranking, "<code>convert_units</code>") {
		t.Fatalf("the query box shows no ranking for %q:\n%s", "convert between units", dom)
	}
	if first, other := strings.Index(ranking, "<code>convert_units</code>"), strings.Index(ranking, "<code>calculate</code>"); other >= 0 && other < first {
		t.Errorf("convert_units must rank above calculate for this query:\n%s", ranking)
	}

	// Several phrasings, one box each, ranked together: a tool only the
	// second phrasing finds is in the ranking, and both are shown back.
	dom = chromium(t, bin, "--dump-dom", base+"/?q=xyzzy+plugh&q=convert+between+units")
	_, ranking, ok = strings.Cut(dom, `<table id="ranking">`)
	ranking, _, _ = strings.Cut(ranking, "</table>")
	if !ok || !strings.Contains(ranking, "<code>convert_units</code>") {
		t.Errorf("the second phrasing's find is not ranked:\n%s", dom)
	}
	for _, want := range []string{`value="xyzzy plugh"`, `value="convert between units"`} {
		if !strings.Contains(dom, want) {
			t.Errorf("the query box does not show the phrasing back: lacks %s", want)
		}
	}

	dir, err := filepath.Abs("artifacts")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "dashboard.png")
	os.Remove(shot)
	chromium(t, bin, "--screenshot="+shot, "--window-size=1280,2000", "--hide-scrollbars", base+"/?q=convert+between+units&q=unit+conversion")
	png, err := os.ReadFile(shot)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("no screenshot at %s: %v", shot, err)
	}
	t.Logf("dashboard screenshot: %s", shot)
}
