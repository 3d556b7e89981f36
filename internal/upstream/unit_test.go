package upstream

import (
	"bufio"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/config"
)

func TestTailBuffer(t *testing.T) {
	tests := []struct {
		name     string
		max      int
		writes   []string
		want     string
		lastLine string
	}{
		{"fits", 64, []string{"one\n", "two\n"}, "one\ntwo\n", "two"},
		{"keeps the end, from a line start", 10, []string{"first line\n", "ab\ncd\n"}, "ab\ncd\n", "cd"},
		{"one big write", 8, []string{"0123456789\nxyz\n"}, "xyz\n", "xyz"},
		{"no newline at the end", 64, []string{"a\nlast words"}, "a\nlast words", "last words"},
		{"trailing blank lines", 64, []string{"error: x\n\n  \n"}, "error: x\n\n  \n", "error: x"},
		{"empty", 8, nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newTailBuffer(tt.max)
			for _, w := range tt.writes {
				if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if got := b.String(); got != tt.want {
				t.Errorf("String = %q, want %q", got, tt.want)
			}
			if got := b.LastLine(); got != tt.lastLine {
				t.Errorf("LastLine = %q, want %q", got, tt.lastLine)
			}
		})
	}
	long := newTailBuffer(4096)
	long.Write([]byte(strings.Repeat("x", 1000) + "\n"))
	if got := long.LastLine(); len(got) > 310 || !strings.HasSuffix(got, "…") {
		t.Errorf("a long last line is not shortened: %d bytes", len(got))
	}
	var nilTail *tailBuffer
	if nilTail.String() != "" {
		t.Error("nil tail")
	}
}

func TestChildEnv(t *testing.T) {
	parent := map[string]string{
		"PATH": "/usr/bin", "HOME": "/home/u", "LANG": "C.UTF-8",
		"GITHUB_TOKEN": "toolfold's own secret", "AWS_SECRET_ACCESS_KEY": "x", "DEBUG": "1",
	}
	lookup := func(k string) (string, bool) { v, ok := parent[k]; return v, ok }
	got := childEnv(lookup, map[string]string{"DEBUG": "0", "GITHUB_PERSONAL_ACCESS_TOKEN": "for the server", "PATH": "/opt/bin"})
	want := []string{"DEBUG=0", "GITHUB_PERSONAL_ACCESS_TOKEN=for the server", "HOME=/home/u", "LANG=C.UTF-8", "PATH=/opt/bin"}
	if !slices.Equal(got, want) {
		t.Errorf("childEnv =\n%q\nwant\n%q", got, want)
	}
}

func TestHumanDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		60 * time.Second:        "60s",
		90 * time.Second:        "90s",
		1500 * time.Millisecond: "1.5s",
		700 * time.Millisecond:  "700ms",
	} {
		if got := humanDuration(d); got != want {
			t.Errorf("humanDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestDescribeTransportHidesSecrets(t *testing.T) {
	tests := []struct {
		cfg  config.ServerConfig
		want string
	}{
		{config.ServerConfig{Command: "npx", Args: []string{"--token", "secret"}}, "command npx"},
		{config.ServerConfig{URL: "https://user:pw@example.com/mcp?key=secret", Transport: config.TransportHTTP}, "http https://***@example.com/mcp?key=***"},
		{config.ServerConfig{URL: "http://localhost:3001/sse", Transport: config.TransportSSE}, "sse http://localhost:3001/sse"},
	}
	for _, tt := range tests {
		if got := describeTransport(tt.cfg); got != tt.want {
			t.Errorf("describeTransport = %q, want %q", got, tt.want)
		}
	}
}

func TestHeaderTransportSetsHeaders(t *testing.T) {
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.Header.Clone() }))
	defer srv.Close()
	c := &http.Client{Transport: &headerTransport{base: http.DefaultTransport, headers: map[string]string{"Authorization": "Bearer abc", "X-Team": "core"}}}
	req, _ := http.NewRequest("GET", srv.URL, nil)
	req.Header.Set("Authorization", "Bearer overridden")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got.Get("Authorization") != "Bearer abc" || got.Get("X-Team") != "core" {
		t.Errorf("headers sent: %v", got)
	}
	if req.Header.Get("Authorization") != "Bearer overridden" {
		t.Error("the caller's request was modified")
	}
}

// A failure is explained by the stderr lines that say why, not by whatever
// came last (Node.js ends a crash with its version).
func TestStderrExplanation(t *testing.T) {
	tests := []struct{ name, stderr, want string }{
		{"node missing module", "node:internal/modules/cjs/loader:1210\n  throw err;\n  ^\n\nError: Cannot find module '/srv/index.js'\n" +
			"    at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)\n    at Module._load (node:internal/modules/cjs/loader:1038:27) {\n" +
			"  code: 'MODULE_NOT_FOUND',\n  requireStack: []\n}\n\nNode.js v20.20.2\n", "Error: Cannot find module '/srv/index.js'"},
		{"python", "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\nModuleNotFoundError: No module named 'mcp'\n", "ModuleNotFoundError: No module named 'mcp'"},
		{"a reason in plain words", "starting\nGITHUB_TOKEN is not set\n", "GITHUB_TOKEN is not set"},
		{"nothing reads like an error", "hello\nbye\n", "bye"},
		{"at most three, no repeats", "error: a\nerror: a\nerror: b\nerror: c\nerror: d\n", "error: a | error: b | error: c"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newTailBuffer(stderrTailSize)
			b.Write([]byte(tt.stderr))
			if got := b.Explanation(); got != tt.want {
				t.Errorf("Explanation = %q, want %q", got, tt.want)
			}
		})
	}
}

// A server that prints a banner on stdout before it serves works; each
// line that is not JSON-RPC is skipped with a warning naming the server
// and quoting the line.
func TestStdoutBannerIsSkipped(t *testing.T) {
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	m := newTestManager(t, map[string]config.ServerConfig{"chatty": fixture(t, "banner", nil)}, &Options{Logger: logger})
	res, err := m.CallTool(t.Context(), "chatty", &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 40, "b": 2}}, nil)
	if err != nil {
		t.Fatalf("a server that prints a banner does not work: %v", err)
	}
	if got := text(res); got != "42" {
		t.Errorf("add = %q", got)
	}
	out := logs.String()
	for _, want := range []string{"upstream=chatty", `line="Fixture MCP server v1.0 running on stdio"`, `line="* ready *"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %s:\n%s", want, out)
		}
	}
}

// jsonLines passes JSON lines of any size whole and skips the others,
// whatever the reads' sizes.
func TestJSONLinesFilter(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":1,"result":{"text":"` + strings.Repeat("x", 10000) + `"}}`
	in := "banner one\n" + big + "\n\n  [1]\nnot json " + strings.Repeat("y", 5000) + "\n{\"last\":true}"
	var skipped []string
	j := &jsonLines{r: bufio.NewReaderSize(strings.NewReader(in), 16), skipped: func(l string) { skipped = append(skipped, l) }, lineStart: true}
	var out strings.Builder
	buf := make([]byte, 7)
	for {
		n, err := j.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if want := big + "\n\n  [1]\n{\"last\":true}"; out.String() != want {
		t.Errorf("passed on %d bytes, want %d:\n%.200s", out.Len(), len(want), out.String())
	}
	if len(skipped) != 2 || skipped[0] != "banner one" || !strings.HasPrefix(skipped[1], "not json yyy") || len(skipped[1]) > junkQuote+5 {
		t.Errorf("skipped = %q", skipped)
	}
}

// FuzzJSONLines: whatever a server prints and however it is read, the
// filter passes exactly the lines that may be JSON-RPC (or are blank) and
// reports each other line once.
func FuzzJSONLines(f *testing.F) {
	f.Add("banner\n{\"jsonrpc\":\"2.0\"}\n\n  [1]\nmore\n{\"x\":1}", uint8(16), uint8(7))
	f.Add("{}", uint8(16), uint8(1))
	f.Add("no newline at all", uint8(17), uint8(3))
	f.Fuzz(func(t *testing.T, in string, bufSize, readSize uint8) {
		var want strings.Builder
		wantSkipped := 0
		for _, line := range strings.SplitAfter(in, "\n") {
			if line == "" {
				continue
			}
			first := strings.TrimLeft(line, " \t\r\n")
			if first == "" || first[0] == '{' || first[0] == '[' {
				want.WriteString(line)
			} else {
				wantSkipped++
			}
		}
		skipped := 0
		j := &jsonLines{r: bufio.NewReaderSize(strings.NewReader(in), int(bufSize)), skipped: func(string) { skipped++ }, lineStart: true}
		var got strings.Builder
		buf := make([]byte, int(readSize)%64+1)
		for {
			n, err := j.Read(buf)
			got.Write(buf[:n])
			if err != nil {
				break
			}
		}
		if got.String() != want.String() || skipped != wantSkipped {
			t.Errorf("passed %q (want %q), skipped %d lines (want %d)", got.String(), want.String(), skipped, wantSkipped)
		}
	})
}
