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
	"github.com/toolfold/toolfold/internal/logtest"
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
		{config.ServerConfig{Command: "npx", Args: []string{"--token", "secret"}}, "command npx, sandbox: none"},
		{config.ServerConfig{Command: "npx", Sandbox: &config.SandboxConfig{Preset: "node", Write: []string{"/notes"}, Network: config.SandboxNetwork{Ports: []int{443}}}},
			"command npx, sandbox: preset node; write /notes; network TCP connect to port 443"},
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
	var logs logtest.Buffer
	logger := logs.Logger(slog.LevelInfo)
	m := newTestManager(t, map[string]config.ServerConfig{"chatty": fixture(t, "banner", nil)}, &Options{Logger: logger})
	res, err := m.CallTool(t.Context(), "chatty", &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 40, "b": 2}}, nil)
	if err != nil {
		t.Fatalf("a server that prints a banner does not work: %v", err)
	}
	if got := text(res); got != "42" {
		t.Errorf("add = %q", got)
	}
	out := logs.String()
	for _, want := range []string{"upstream=chatty", `line="Fixture MCP server v1.0 running on stdio"`, `line="* ready *"`,
		`line="[dotenv@17.2.1] injecting env (0) from .env"`, `line="[INFO] listening on stdio"`, `line="{'ok': 1}"`,
		`line="{\"level\":\"info\",\"msg\":\"started\"}"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %s:\n%s", want, out)
		}
	}
}

// jsonLines passes JSON-RPC lines of any size whole and skips the others,
// whatever the reads' sizes; a line that is held for judging is judged as
// a whole, one longer than the bound by its first byte.
func TestJSONLinesFilter(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":1,"result":{"text":"` + strings.Repeat("x", 10000) + `"}}`
	small := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	batch := `  [{"jsonrpc":"2.0","id":2,"result":{}}]`
	tests := []struct {
		name, in, want string
		maxJudged      int
		skipped        []string
	}{
		{
			name: "banners of every shape",
			in: "banner one\n" + big + "\n\n" + batch + "\n" +
				"[dotenv@17.2.1] injecting env (0) from .env\n[INFO] listening\n{'ok': 1}\n[1]\n[]\n" +
				`{"level":"info","msg":"started"}` + "\n" + `{"jsonrpc":"1.0"}` + "\n" +
				"not json " + strings.Repeat("y", 5000) + "\n" + small,
			want: big + "\n\n" + batch + "\n" + small,
			skipped: []string{"banner one", "[dotenv@17.2.1] injecting env (0) from .env", "[INFO] listening", "{'ok': 1}", "[1]", "[]",
				`{"level":"info","msg":"started"}`, `{"jsonrpc":"1.0"}`, "not json " + strings.Repeat("y", junkQuote-len("not json "))},
		},
		{
			name:      "a line over the bound streams by its first byte",
			in:        big + "\n{" + strings.Repeat("z", 100) + "\nlog: " + strings.Repeat("w", 100) + "\n",
			maxJudged: 64,
			want:      big + "\n{" + strings.Repeat("z", 100) + "\n",
			skipped:   []string{"log: " + strings.Repeat("w", 100)},
		},
		{
			name:    "a last line without a newline is judged",
			in:      small + "\n[INFO] bye",
			want:    small + "\n",
			skipped: []string{"[INFO] bye"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var skipped []string
			j := &jsonLines{r: bufio.NewReaderSize(strings.NewReader(tt.in), 16), skipped: func(l string) { skipped = append(skipped, l) }, lineStart: true, maxJudged: tt.maxJudged}
			var out strings.Builder
			buf := make([]byte, 7)
			for {
				n, err := j.Read(buf)
				out.Write(buf[:n])
				if err != nil {
					break
				}
			}
			if out.String() != tt.want {
				t.Errorf("passed on %d bytes, want %d:\n%.300q", out.Len(), len(tt.want), out.String())
			}
			if !slices.Equal(skipped, tt.skipped) {
				t.Errorf("skipped = %q\nwant      %q", skipped, tt.skipped)
			}
		})
	}
}

// FuzzJSONLines: whatever a server prints and however it is read, the
// filter passes exactly the lines that are JSON-RPC messages (or longer
// than the bound and starting like one), the blanks that start every line,
// and reports each other line once.
func FuzzJSONLines(f *testing.F) {
	f.Add("banner\n{\"jsonrpc\":\"2.0\"}\n\n  [1]\nmore\n{\"x\":1}", uint8(16), uint8(7), uint8(0))
	f.Add("{}", uint8(16), uint8(1), uint8(0))
	f.Add("no newline at all", uint8(17), uint8(3), uint8(0))
	f.Add("[dotenv@17.2.1] injecting env (0) from .env\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n", uint8(16), uint8(5), uint8(0))
	f.Add("[INFO] starting\n{'ok': 1}\n[{\"jsonrpc\":\"2.0\",\"method\":\"x\"}]\n", uint8(20), uint8(9), uint8(0))
	f.Add("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"long\":\"line over the bound\"}}\n[INFO] also long, also over\n", uint8(16), uint8(4), uint8(12))
	f.Fuzz(func(t *testing.T, in string, bufSize, readSize, maxJudged uint8) {
		limit := int(maxJudged)
		if limit == 0 {
			limit = maxJudgedLine
		}
		var want strings.Builder
		wantSkipped := 0
		for _, line := range strings.SplitAfter(in, "\n") {
			if line == "" {
				continue
			}
			first := strings.TrimLeft(line, " \t\r\n")
			want.WriteString(line[:len(line)-len(first)]) // leading blanks always pass
			switch {
			case first == "":
			case (first[0] == '{' || first[0] == '[') && (isJSONRPC([]byte(first)) || len(first) > limit):
				want.WriteString(first)
			default:
				wantSkipped++
			}
		}
		skipped := 0
		j := &jsonLines{r: bufio.NewReaderSize(strings.NewReader(in), int(bufSize)), skipped: func(string) { skipped++ }, lineStart: true, maxJudged: int(maxJudged)}
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

// isJSONRPC tells JSON-RPC messages from lines that only look like JSON.
func TestIsJSONRPC(t *testing.T) {
	tests := []struct {
		line string
		want bool
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, true},
		{` {"jsonrpc": "2.0", "method": "x"} ` + "\r\n", true},
		{`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","method":"y"}]`, true},
		{`[dotenv@17.2.1] injecting env (0) from .env`, false},
		{`[INFO] ready`, false},
		{`{'ok': 1}`, false},
		{`{"level":"info","msg":"listening"}`, false},
		{`{"jsonrpc":"1.0","id":1}`, false},
		{`{"jsonrpc":2}`, false},
		{`[1, 2]`, false},
		{`[]`, false},
		{`[{"jsonrpc":"2.0"}, 1]`, false},
		{`{"jsonrpc":"2.0"} trailing`, false},
	}
	for _, tt := range tests {
		if got := isJSONRPC([]byte(tt.line)); got != tt.want {
			t.Errorf("isJSONRPC(%q) = %v, want %v", tt.line, got, tt.want)
		}
	}
}
