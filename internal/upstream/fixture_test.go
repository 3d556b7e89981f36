package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/config"
)

// The fault tests run this test binary itself as an upstream MCP server: when
// TOOLFOLD_UPSTREAM_FIXTURE is set, TestMain serves the fixture over stdio
// instead of running tests. No separate build step, and the fixture is always
// in sync with the tests.
const fixtureEnv = "TOOLFOLD_UPSTREAM_FIXTURE"

func TestMain(m *testing.M) {
	if os.Getenv(probeEnv) != "" {
		os.Exit(runProbe())
	}
	if mode := os.Getenv(fixtureEnv); mode != "" {
		os.Exit(runFixture(mode))
	}
	os.Exit(m.Run())
}

// runFixture is the fixture server. Modes:
//
//	serve       serve the fixture tools
//	fail-start  print a reason on stderr (quoting FIXTURE_TOKEN if set) and
//	            exit 3 before answering anything; with FIXTURE_FAIL_IF
//	            set, only while that file exists (else serve)
//	slow-start  wait until the test opens the named pipe FIXTURE_RELEASE
//	            to write, then serve
//	banner      print lines that are not JSON on stdout, then serve
//	refuse-init answer the handshake with an error quoting FIXTURE_TOKEN
//	bulk        a hand-written server (no SDK, so it is fast even built
//	            with -race) of two tools: pid, and big, whose result is a
//	            text of n bytes written with "result" before "id", as
//	            the TypeScript SDK writes it; it speaks 2025-11-25;
//	            with FIXTURE_TOOLS=n it lists n more tools, unpaged, each
//	            described in FIXTURE_DESCRIPTION_BYTES bytes; its
//	            tool ask2 asks an elicitation and roots/list in one
//	            write, and answers once both are answered
//	mute        read stdin and never answer; log "read <line>" for the
//	            first line and "stdin closed" at its end, then exit 0
//
// FIXTURE_START_LOG, when set, gets one line per process start, so a test can
// tell whether the server was spawned. FIXTURE_EVENT_LOG gets "started <tool>"
// when sleep or hang begins, so a test can wait for a call to reach the
// server, and "cancelled <tool>" when the client cancels one.
func runFixture(mode string) int {
	if p := os.Getenv("FIXTURE_START_LOG"); p != "" {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			fmt.Fprintf(f, "start %d\n", os.Getpid())
			f.Close()
		}
	}
	fmt.Fprintln(os.Stderr, "fixture: starting in mode", mode)
	switch mode {
	case "fail-start":
		if p := os.Getenv("FIXTURE_FAIL_IF"); p != "" {
			if _, err := os.Stat(p); err != nil {
				break // the file is gone: serve
			}
		}
		if tok := os.Getenv("FIXTURE_TOKEN"); tok != "" {
			fmt.Fprintf(os.Stderr, "fatal: the API key %s was rejected\n", tok)
			return 3
		}
		fmt.Fprintln(os.Stderr, "fatal: the API key FIXTURE_TOKEN is not set")
		return 3
	case "mute":
		return runMute()
	case "bulk":
		return runBulk()
	case "slow-start":
		// Opening a named pipe to read waits for a writer: the test
		// decides when the start ends, not a guess at the machine's speed.
		if f, err := os.Open(os.Getenv("FIXTURE_RELEASE")); err == nil {
			f.Close()
		}
	case "banner":
		// What many servers print before they serve.
		fmt.Println("Fixture MCP server v1.0 running on stdio")
		fmt.Println()
		fmt.Println("  * ready *")
		// Lines that start like JSON and are not JSON-RPC: dotenv's,
		// a logger's, Python's repr of a dict, a JSON log line.
		fmt.Println("[dotenv@17.2.1] injecting env (0) from .env")
		fmt.Println("[INFO] listening on stdio")
		fmt.Println("{'ok': 1}")
		fmt.Println(`{"level":"info","msg":"started"}`)
	}
	srv := newFixtureServer()
	if mode == "refuse-init" {
		srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "initialize" || method == "server/discover" { // either handshake
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "the token " + os.Getenv("FIXTURE_TOKEN") + " is revoked"}
				}
				return next(ctx, method, req)
			}
		})
	}
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "fixture:", err)
		return 1
	}
	return 0
}

// runBulk is the bulk fixture.
func runBulk() int {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	answer := func(id json.RawMessage, result string) {
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", id, result)
		out.Flush()
	}
	var asking json.RawMessage // the ask2 call waiting for its answers
	answers := 0
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string         `json:"name"`
				Arguments map[string]any `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil || req.ID == nil {
			continue // a notification
		}
		if req.Method == "" { // the client's answer to a question of ask2
			if answers++; asking != nil && answers == 2 {
				answer(asking, `{"content":[{"type":"text","text":"both answered"}]}`)
				asking = nil
			}
			continue
		}
		switch {
		case req.Method == "tools/call" && req.Params.Name == "ask2":
			// Two questions in one write, as a legacy server that asks
			// them concurrently may write them.
			asking, answers = req.ID, 0
			out.WriteString(`{"jsonrpc":"2.0","id":"q1","method":"elicitation/create","params":{"message":"Name?","requestedSchema":{"type":"object"}}}` + "\n" +
				`{"jsonrpc":"2.0","id":"q2","method":"roots/list"}` + "\n")
			out.Flush()
		case req.Method == "initialize":
			answer(req.ID, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bulk","version":"1"}}`)
		case req.Method == "tools/list":
			out.WriteString(`{"jsonrpc":"2.0","id":`)
			out.Write(req.ID)
			out.WriteString(`,"result":{"tools":[{"name":"pid","inputSchema":{"type":"object"}},{"name":"big","inputSchema":{"type":"object"}}`)
			n, _ := strconv.Atoi(os.Getenv("FIXTURE_TOOLS"))
			size, _ := strconv.Atoi(os.Getenv("FIXTURE_DESCRIPTION_BYTES"))
			desc := strings.Repeat("d", size)
			for i := range n {
				fmt.Fprintf(out, `,{"name":"tool_%05d","description":"%s","inputSchema":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}`, i, desc)
			}
			out.WriteString("]}}\n")
			out.Flush()
		case req.Method == "tools/call" && req.Params.Name == "pid":
			answer(req.ID, fmt.Sprintf(`{"content":[{"type":"text","text":"%d"}]}`, os.Getpid()))
		case req.Method == "tools/call" && strings.HasPrefix(req.Params.Name, "broken"):
			// Answers that are not valid JSON, as a buggy server writes
			// them: inside the result, cut short, and with the id after
			// the broken part.
			switch req.Params.Name {
			case "broken-inner":
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"content":[nope}]}}`+"\n", req.ID)
			case "broken-cut":
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"cut`+"\n", req.ID)
			case "broken-idlast":
				fmt.Fprintf(out, `{"jsonrpc":"2.0","result":{"content":[nope}]},"id":%s}`+"\n", req.ID)
			}
			out.Flush()
		case req.Method == "tools/call" && req.Params.Name == "big":
			n := int(num(req.Params.Arguments, "n"))
			out.WriteString(`{"result":{"content":[{"type":"text","text":"`)
			chunk := bytes.Repeat([]byte("x"), 1<<20)
			for ; n > 0; n -= len(chunk) {
				out.Write(chunk[:min(n, len(chunk))])
			}
			fmt.Fprintf(out, `"}]},"jsonrpc":"2.0","id":%s}`+"\n", req.ID)
			out.Flush()
		default:
			answer(req.ID, `{}`)
		}
	}
	return 0
}

// runMute is a server that never answers the handshake, and exits as a
// well-behaved server does when its stdin is closed.
func runMute() int {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	if in.Scan() {
		first := in.Text()
		if i := strings.Index(first, `"method":"`); i >= 0 {
			first = strings.SplitN(first[i+len(`"method":"`):], `"`, 2)[0]
		}
		logEvent("read " + first)
	}
	for in.Scan() {
	}
	logEvent("stdin closed")
	return 0
}

func logEvent(line string) {
	if p := os.Getenv("FIXTURE_EVENT_LOG"); p != "" {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			fmt.Fprintln(f, line)
			f.Close()
		}
	}
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func args(req *mcp.CallToolRequest) map[string]any {
	var a map[string]any
	_ = json.Unmarshal(req.Params.Arguments, &a)
	return a
}

func num(a map[string]any, k string) float64 {
	f, _ := a[k].(float64)
	return f
}

var objectSchema = json.RawMessage(`{"type":"object"}`)

// newFixtureServer builds the fixture's tools. It is also served in memory by
// the benchmark, so the two measurements share one server implementation.
func newFixtureServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "fixture", Version: "1"}, &mcp.ServerOptions{
		Instructions: "A test server.",
	})
	tool := func(name, desc string, h mcp.ToolHandler) {
		srv.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: objectSchema}, h)
	}
	tool("add", "Adds a and b", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := args(req)
		sum := num(a, "a") + num(a, "b")
		res := textResult(strconv.FormatFloat(sum, 'f', -1, 64))
		res.StructuredContent = map[string]any{"sum": sum}
		return res, nil
	})
	tool("reject", "Refuses the call with a JSON-RPC error quoting FIXTURE_TOKEN", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "the token " + os.Getenv("FIXTURE_TOKEN") + " may not call this"}
	})
	tool("pid", "Returns the process id", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return textResult(strconv.Itoa(os.Getpid())), nil
	})
	tool("env", "Returns an environment variable, or <unset>", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		v, ok := os.LookupEnv(fmt.Sprint(args(req)["name"]))
		if !ok {
			v = "<unset>"
		}
		return textResult(v), nil
	})
	tool("sleep", "Sleeps ms milliseconds in steps, reporting progress", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := args(req)
		ms, steps := num(a, "ms"), max(int(num(a, "steps")), 1)
		logEvent("started sleep")
		for i := 1; i <= steps; i++ {
			select {
			case <-time.After(time.Duration(ms/float64(steps)) * time.Millisecond):
			case <-ctx.Done():
				logEvent("cancelled sleep")
				return nil, ctx.Err()
			}
			if tok := req.Params.GetProgressToken(); tok != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: float64(steps), Message: fmt.Sprintf("step %d", i)})
			}
		}
		return textResult("slept"), nil
	})
	tool("hang", "Never answers", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		logEvent("started hang")
		<-ctx.Done()
		logEvent("cancelled hang")
		return nil, ctx.Err()
	})
	tool("gate", "Answers once the named pipe at path is opened to write and closed", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		logEvent("started gate")
		if _, err := os.ReadFile(fmt.Sprint(args(req)["path"])); err != nil {
			return nil, err
		}
		return textResult("released"), nil
	})
	tool("crash", "Exits the process with a message", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		fmt.Fprintln(os.Stderr, "panic: boom: out of cheese")
		os.Exit(1)
		return nil, nil
	})
	tool("grow", "Adds a tool named extra", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		srv.AddTool(&mcp.Tool{Name: "extra", Description: "Appeared later", InputSchema: objectSchema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return textResult("extra"), nil
		})
		return textResult("grown"), nil
	})
	// ask needs the client: written in the multi-round-trip style, which the SDK
	// turns into a plain elicitation/create request for clients on older
	// protocol versions, so it exercises both routes.
	tool("ask", "Asks the user for a name", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if r, ok := req.Params.InputResponses["name"].(*mcp.ElicitResult); ok {
			return textResult(fmt.Sprintf("hello %v (%s)", r.Content["name"], r.Action)), nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
			"name": &mcp.ElicitParams{Message: "What is your name?", RequestedSchema: map[string]any{
				"type":       "object",
				"properties": map[string]any{"name": map[string]any{"type": "string"}},
			}},
		}}, nil
	})
	// twostep asks twice: on a session protocol its SDK answers the first
	// round with a request on the connection and returns the second as a
	// plain result with inputRequests.
	tool("twostep", "Asks for a name, then for a colour", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		schema := map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}
		if r, ok := req.Params.InputResponses["colour"].(*mcp.ElicitResult); ok {
			return textResult(fmt.Sprintf("%s likes %v", req.Params.RequestState, r.Content["name"])), nil
		}
		if r, ok := req.Params.InputResponses["name"].(*mcp.ElicitResult); ok {
			return &mcp.CallToolResult{
				InputRequests: mcp.InputRequestMap{"colour": &mcp.ElicitParams{Message: "Your colour?", RequestedSchema: schema}},
				RequestState:  fmt.Sprint(r.Content["name"]),
			}, nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"name": &mcp.ElicitParams{Message: "Your name?", RequestedSchema: schema}}}, nil
	})
	tool("roots", "Lists the client's roots", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if r, ok := req.Params.InputResponses["roots"].(*mcp.ListRootsResult); ok {
			var uris []string
			for _, root := range r.Roots {
				uris = append(uris, root.URI)
			}
			return textResult(strings.Join(uris, ",")), nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"roots": &mcp.ListRootsParams{}}}, nil
	})
	return srv
}

// fixture returns the config of a stdio server running the fixture.
func fixture(t testing.TB, mode string, env map[string]string) config.ServerConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e := config.SecretMap{fixtureEnv: mode}
	for k, v := range env {
		e[k] = v
	}
	return config.ServerConfig{
		Command:   exe,
		Env:       e,
		Transport: config.TransportStdio,
		Lazy:      true,
		Timeout:   config.Duration(20 * time.Second),
	}
}

// newTestManager builds a Manager with a private cache and fast backoff, closed
// at the end of the test.
func newTestManager(t testing.TB, servers map[string]config.ServerConfig, opts *Options) *Manager {
	t.Helper()
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.CacheDir == "" && !o.DisableCache {
		o.CacheDir = t.TempDir()
	}
	m := New(servers, &o)
	m.sup.backoffBase = 50 * time.Millisecond
	// Every refused lifecycle transition is a bug, whatever the test.
	m.transitionRefused = func(server string, from, to phase, event string) {
		t.Errorf("upstream %q: the lifecycle table refused %v → %v (%s)", server, from, to, event)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// text returns a result's text content, joined.
func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// fakeDownstream answers server→client requests in tests and records them.
type fakeDownstream struct {
	name  string
	roots []string
}

func (f *fakeDownstream) CreateMessage(_ context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	return &mcp.CreateMessageResult{Model: "fake-" + f.name, Role: "assistant", Content: &mcp.TextContent{Text: "sampled by " + f.name}}, nil
}

func (f *fakeDownstream) CreateMessageWithTools(_ context.Context, p *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	return &mcp.CreateMessageWithToolsResult{Model: "fake-" + f.name, Role: "assistant", Content: []mcp.Content{&mcp.TextContent{Text: "sampled by " + f.name}}}, nil
}

func (f *fakeDownstream) Elicit(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": f.name}}, nil
}

func (f *fakeDownstream) ListRoots(context.Context, *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	res := &mcp.ListRootsResult{Roots: []*mcp.Root{}}
	for _, r := range f.roots {
		res.Roots = append(res.Roots, &mcp.Root{URI: r})
	}
	return res, nil
}

var _ Downstream = (*fakeDownstream)(nil)

// batchDownstream takes a round of input requests at once and records the
// keys of each round.
type batchDownstream struct {
	fakeDownstream
	mu     sync.Mutex
	rounds [][]string
}

func (b *batchDownstream) RequestInput(ctx context.Context, reqs mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	var keys []string
	out := mcp.InputResponseMap{}
	for k, r := range reqs {
		keys = append(keys, k)
		p, ok := r.(*mcp.ElicitParams)
		if !ok {
			return nil, fmt.Errorf("unexpected request %T", r)
		}
		res, _ := b.Elicit(ctx, p)
		out[k] = res
	}
	slices.Sort(keys)
	b.mu.Lock()
	b.rounds = append(b.rounds, keys)
	b.mu.Unlock()
	return out, nil
}

var _ InputRequester = (*batchDownstream)(nil)
