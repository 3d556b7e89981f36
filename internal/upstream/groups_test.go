package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/logtest"
	"github.com/toolfold/toolfold/internal/upstream/groupsfixture"
)

// fixtureDialer connects each new connection to the groups fixture in
// memory, through the fixture's own transport wrapper so it can notify.
func fixtureDialer(fx *groupsfixture.Server) dialer {
	return func(ctx context.Context, _ string, _ config.ServerConfig) (dialed, error) {
		clientT, serverT := mcp.NewInMemoryTransports()
		if _, err := fx.Connect(ctx, fx.Transport(serverT), nil); err != nil {
			return dialed{}, err
		}
		return dialed{transport: clientT}, nil
	}
}

// outline renders groups as "name[tools](children)" lines, for comparisons
// that show the whole tree when they fail.
func outline(groups []*Group) string {
	var b strings.Builder
	var walk func(gs []*Group, indent string)
	walk = func(gs []*Group, indent string) {
		for _, g := range gs {
			fmt.Fprintf(&b, "%s%s %q [%s]", indent, g.Name, g.Description, strings.Join(g.Tools, " "))
			if g.Instructions != "" {
				fmt.Fprintf(&b, " instructions=%q", g.Instructions)
			}
			b.WriteString("\n")
			walk(g.Groups, indent+"  ")
		}
	}
	walk(groups, "")
	return b.String()
}

func names(tools []*mcp.Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}

const fixtureOutline = `issues "Issue tracking" [create_issue list_issues search] instructions="Search before creating an issue."
  labels "Issue labels" [add_label] instructions="A label must exist before it is added."
repos "Repositories" [list_repos search]
`

// TestGroupsAreReadThroughTheExtension folds the fixture, which hides its
// scoped tools from a client that declares the extension: the Manager must
// find them through groups/list (two pages) and groups/get (nested), hand
// them out as tools of the server, each once, and call them.
func TestGroupsAreReadThroughTheExtension(t *testing.T) {
	for _, proto := range []string{"2025-11-25", ""} {
		name := proto
		if name == "" {
			name = "newest"
		}
		t.Run(name, func(t *testing.T) {
			m := newTestManager(t, map[string]config.ServerConfig{"fx": {Command: "unused"}},
				&Options{dial: fixtureDialer(groupsfixture.New()), ProtocolVersion: proto})
			ctx := context.Background()
			tools, err := m.Tools(ctx, "fx")
			if err != nil {
				t.Fatal(err)
			}
			got := names(tools)
			slices.Sort(got)
			want := []string{"add_label", "create_issue", "echo", "list_issues", "list_repos", "open_wiki", "read_page", "search"}
			if !slices.Equal(got, want) {
				t.Errorf("tools = %v, want %v", got, want)
			}
			groups, ok := m.CachedGroups("fx")
			if !ok {
				t.Fatal("CachedGroups: nothing known after a start")
			}
			if o := outline(groups); o != fixtureOutline {
				t.Errorf("groups:\n%s\nwant:\n%s", o, fixtureOutline)
			}
			if got := mustCall(t, m, "fx", "add_label", map[string]any{"issue": 7, "label": "bug"}); got != `add_label {"issue":7,"label":"bug"}` {
				t.Errorf("calling a scoped tool = %q", got)
			}
		})
	}
}

// TestScopedToolsAreHiddenFromDeclaringClients checks the fixture itself,
// so the test above proves the Manager found the scoped tools through the
// groups and not in tools/list.
func TestScopedToolsAreHiddenFromDeclaringClients(t *testing.T) {
	fx := groupsfixture.New()
	for _, declare := range []bool{false, true} {
		caps := &mcp.ClientCapabilities{}
		if declare {
			caps.AddExtension(GroupsExtension, map[string]any{})
		}
		clientT, serverT := mcp.NewInMemoryTransports()
		ctx := context.Background()
		if _, err := fx.Connect(ctx, serverT, nil); err != nil {
			t.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, &mcp.ClientOptions{Capabilities: caps}).
			Connect(ctx, clientT, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		tools, err := listTools(ctx, cs, 0)
		cs.Close()
		if err != nil {
			t.Fatal(err)
		}
		got := names(tools)
		slices.Sort(got)
		want := []string{"add_label", "create_issue", "echo", "list_issues", "list_repos", "open_wiki", "read_page", "search"}
		if declare {
			want = []string{"echo", "open_wiki", "read_page"}
		}
		if !slices.Equal(got, want) {
			t.Errorf("declared=%v: tools/list = %v, want %v", declare, got, want)
		}
	}
}

// TestGroupsAreCached checks that a second run knows the groups and their
// scoped tools from the disk cache without starting the server.
func TestGroupsAreCached(t *testing.T) {
	dir := t.TempDir()
	cfg := map[string]config.ServerConfig{"fx": {Command: "unused", Lazy: true}}
	first := newTestManager(t, cfg, &Options{CacheDir: dir, dial: fixtureDialer(groupsfixture.New())})
	if _, err := first.Tools(context.Background(), "fx"); err != nil {
		t.Fatal(err)
	}
	first.Close()

	dials := 0
	second := newTestManager(t, cfg, &Options{CacheDir: dir, dial: func(context.Context, string, config.ServerConfig) (dialed, error) {
		dials++
		return dialed{}, fmt.Errorf("the cached start must not dial")
	}})
	for name, err := range second.DiscoverAll(context.Background()) {
		if err != nil {
			t.Errorf("Discover %s: %v", name, err)
		}
	}
	groups, ok := second.CachedGroups("fx")
	if !ok || outline(groups) != fixtureOutline {
		t.Errorf("cached groups (ok=%v):\n%s\nwant:\n%s", ok, outline(groups), fixtureOutline)
	}
	tools, _ := second.CachedTools("fx")
	if !slices.Contains(names(tools), "add_label") {
		t.Errorf("cached tools %v lack the scoped tool add_label", names(tools))
	}
	if dials != 0 {
		t.Errorf("the cached start dialed %d times", dials)
	}
}

// TestGroupsListChangedRereads checks that notifications/groups/list_changed
// makes the Manager read the groups again and report the change.
func TestGroupsListChangedRereads(t *testing.T) {
	for _, proto := range []string{"2025-11-25", ""} {
		name := proto
		if name == "" {
			name = "newest"
		}
		t.Run(name, func(t *testing.T) {
			changed := make(chan string, 10)
			m := newTestManager(t, map[string]config.ServerConfig{"fx": {Command: "unused"}}, &Options{
				dial: fixtureDialer(groupsfixture.New()), ProtocolVersion: proto,
				OnToolsChanged: func(s string) { changed <- s },
			})
			if _, err := m.Tools(context.Background(), "fx"); err != nil {
				t.Fatal(err)
			}
			<-changed // the first discovery
			if got := mustCall(t, m, "fx", "open_wiki", nil); got != "wiki opened" {
				t.Fatalf("open_wiki = %q", got)
			}
			select {
			case <-changed:
			case <-time.After(10 * time.Second):
				t.Fatal("no change was reported after notifications/groups/list_changed")
			}
			groups, _ := m.CachedGroups("fx")
			want := fixtureOutline + `wiki "The project wiki" [read_page]` + "\n"
			if o := outline(groups); o != want {
				t.Errorf("groups after the change:\n%s\nwant:\n%s", o, want)
			}
		})
	}
}

// TestGroupsFilteredByIncludeExclude checks that an excluded tool leaves the
// groups too: it must never be called, whoever asks.
func TestGroupsFilteredByIncludeExclude(t *testing.T) {
	m := newTestManager(t, map[string]config.ServerConfig{"fx": {Command: "unused", Exclude: []string{"search", "add_*"}}},
		&Options{dial: fixtureDialer(groupsfixture.New())})
	if _, err := m.Tools(context.Background(), "fx"); err != nil {
		t.Fatal(err)
	}
	groups, _ := m.CachedGroups("fx")
	want := `issues "Issue tracking" [create_issue list_issues] instructions="Search before creating an issue."
  labels "Issue labels" [] instructions="A label must exist before it is added."
repos "Repositories" [list_repos]
`
	if o := outline(groups); o != want {
		t.Errorf("groups:\n%s\nwant:\n%s", o, want)
	}
}

// TestServerWithoutTheExtensionHasNoGroups checks that nothing changes for
// a server that does not advertise the extension: no groups, no groups/list.
func TestServerWithoutTheExtensionHasNoGroups(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "plain"}, nil)
	asked := make(chan string, 1)
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if strings.HasPrefix(method, "groups/") {
				asked <- method
			}
			return next(ctx, method, req)
		}
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "one"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return textResult("one"), nil, nil
	})
	m := newTestManager(t, map[string]config.ServerConfig{"plain": {Command: "unused"}}, &Options{dial: inMemoryDialer(srv)})
	tools, err := m.Tools(context.Background(), "plain")
	if err != nil || len(tools) != 1 {
		t.Fatalf("Tools = %v, %v", names(tools), err)
	}
	groups, ok := m.CachedGroups("plain")
	if !ok || groups != nil {
		t.Errorf("CachedGroups = %v, %v; want nil, true", groups, ok)
	}
	select {
	case method := <-asked:
		t.Errorf("the Manager sent %s to a server that does not serve the extension", method)
	default:
	}
}

// rawList and rawGet let a test server answer whatever JSON it likes.
type (
	rawListParams struct {
		mcp.ParamsBase
		Cursor string `json:"cursor,omitempty"`
	}
	rawGetParams struct {
		mcp.ParamsBase
		Name string `json:"name"`
	}
	rawResult struct {
		mcp.ResultBase
		Fields map[string]any
	}
)

// MarshalJSON flattens Fields into the result object.
func (r *rawResult) MarshalJSON() ([]byte, error) { return json.Marshal(r.Fields) }

// malformedServer answers groups/list from pages (cursor "" for the first,
// then the index as a string) and groups/get from gets, by name; a missing
// name is -32002.
func malformedServer(pages []map[string]any, gets map[string]map[string]any) *mcp.Server {
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}
	caps.AddExtension(GroupsExtension, map[string]any{})
	srv := mcp.NewServer(&mcp.Implementation{Name: "malformed"}, &mcp.ServerOptions{Capabilities: caps})
	mcp.AddTool(srv, &mcp.Tool{Name: "listed"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return textResult("listed"), nil, nil
	})
	_ = mcp.AddReceivingCustomMethod(srv, "groups/list", func(_ context.Context, _ *mcp.ServerSession, p *rawListParams) (*rawResult, error) {
		i := 0
		if p != nil && p.Cursor != "" {
			fmt.Sscan(p.Cursor, &i)
		}
		return &rawResult{Fields: pages[i]}, nil
	})
	_ = mcp.AddReceivingCustomMethod(srv, "groups/get", func(_ context.Context, _ *mcp.ServerSession, p *rawGetParams) (*rawResult, error) {
		if g, ok := gets[p.Name]; ok {
			return &rawResult{Fields: g}, nil
		}
		return nil, &jsonrpc.Error{Code: -32002, Message: "no such group"}
	})
	return srv
}

func entry(name string) map[string]any {
	return map[string]any{"name": name, "description": "the " + name + " group"}
}

func tool(name string) map[string]any {
	return map[string]any{"name": name, "inputSchema": map[string]any{"type": "object"}}
}

func contents(tools []any, groups ...any) map[string]any {
	return map[string]any{"contents": map[string]any{"tools": tools, "groups": groups}}
}

// TestMalformedGroupsAreSkipped feeds the Manager every kind of bad answer
// at once: each is logged naming the server and costs only what it is
// about; the server starts and its good groups are kept.
func TestMalformedGroupsAreSkipped(t *testing.T) {
	long := strings.Repeat("a", 65)
	pages := []map[string]any{
		{"groups": []any{entry("good"), entry("Bad_Name"), entry(long), map[string]any{"description": "no name"}, "not an object",
			entry("good"), entry("ghost"), entry("cyclic")}, "nextCursor": "1"},
		{"groups": []any{map[string]any{"name": "bare"}, entry("deep0")}, "nextCursor": "1"}, // a cursor loop
	}
	gets := map[string]map[string]any{
		"good":   contents([]any{tool("t1"), map[string]any{"description": "no name"}, 42, tool("listed")}),
		"cyclic": contents([]any{tool("c1")}, entry("cyclic"), entry("good"), entry("inner")),
		"inner":  contents([]any{tool("i1")}, entry("cyclic")),
		"bare":   {"instructions": 7}, // instructions of the wrong type
	}
	for i := range 12 { // a chain deeper than maxGroupDepth
		gets[fmt.Sprintf("deep%d", i)] = contents([]any{tool(fmt.Sprintf("d%d", i))}, entry(fmt.Sprintf("deep%d", i+1)))
	}
	var logs logtest.Buffer
	m := newTestManager(t, map[string]config.ServerConfig{"bad": {Command: "unused"}},
		&Options{dial: inMemoryDialer(malformedServer(pages, gets)), Logger: logs.Logger(slog.LevelInfo)})
	tools, err := m.Tools(context.Background(), "bad")
	if err != nil {
		t.Fatalf("the server must start despite its groups: %v", err)
	}
	got := names(tools)
	if got[0] != "listed" || slices.Index(got[1:], "listed") >= 0 {
		t.Errorf("tools = %v: the listed tool must come first, once", got)
	}
	groups, _ := m.CachedGroups("bad")
	want := `good "the good group" [t1 listed]
cyclic "the cyclic group" [c1]
  inner "the inner group" [i1]
deep0 "the deep0 group" [d0]
  deep1 "the deep1 group" [d1]
    deep2 "the deep2 group" [d2]
      deep3 "the deep3 group" [d3]
        deep4 "the deep4 group" [d4]
          deep5 "the deep5 group" [d5]
            deep6 "the deep6 group" [d6]
              deep7 "the deep7 group" [d7]
                deep8 "the deep8 group" [d8]
`
	if o := outline(groups); o != want {
		t.Errorf("groups:\n%s\nwant:\n%s", o, want)
	}
	for _, w := range []string{
		`upstream=bad`,
		`group=Bad_Name`,
		`group=` + long,
		`where="groups/list entry #4"`,
		`where="groups/list entry #5"`,
		`names a group twice`,
		`groups/get says a group the server listed does not exist; it is skipped" upstream=bad group=ghost`,
		`nested in more than one place, or in itself`,
		`a tool in groups/get is malformed`,
		`returned a cursor it had returned before`,
		`a group has no description" upstream=bad group=bare`,
		`groups/get failed; the group is skipped" upstream=bad group=bare`,
		`groups nest deeper than 8 levels`,
	} {
		if !strings.Contains(logs.String(), w) {
			t.Errorf("the log lacks %q:\n%s", w, logs.String())
		}
	}
}

// TestTooManyGroupsAreBounded checks the bound on how many groups one
// server may declare.
func TestTooManyGroupsAreBounded(t *testing.T) {
	var entries []any
	gets := map[string]map[string]any{}
	for i := range maxGroups + 50 {
		name := fmt.Sprintf("g%d", i)
		entries = append(entries, entry(name))
		gets[name] = contents([]any{tool("t" + name)})
	}
	var logs logtest.Buffer
	m := newTestManager(t, map[string]config.ServerConfig{"big": {Command: "unused"}},
		&Options{dial: inMemoryDialer(malformedServer([]map[string]any{{"groups": entries}}, gets)), Logger: logs.Logger(slog.LevelInfo)})
	if _, err := m.Tools(context.Background(), "big"); err != nil {
		t.Fatal(err)
	}
	groups, _ := m.CachedGroups("big")
	if len(groups) != maxGroups {
		t.Errorf("%d groups kept, want the bound %d", len(groups), maxGroups)
	}
	if n := strings.Count(logs.String(), "more than 256 groups"); n != 1 {
		t.Errorf("the bound was logged %d times, want once:\n%s", n, logs.String())
	}
}

// TestGroupsOverRemoteTransports reads the fixture's groups from a remote
// server over streamable HTTP, where the connection is not wrapped. Over
// SSE the SDK's server refuses every method it does not know with HTTP 400
// before the fixture sees it, which ends the SSE session: the Manager must
// then read the server as one without the extension (undeclared, it lists
// every tool) instead of losing it.
func TestGroupsOverRemoteTransports(t *testing.T) {
	for _, transport := range []config.Transport{config.TransportHTTP, config.TransportSSE} {
		t.Run(string(transport), func(t *testing.T) {
			var logs logtest.Buffer
			fx := groupsfixture.New()
			getServer := func(*http.Request) *mcp.Server { return fx.Server }
			var handler http.Handler = mcp.NewStreamableHTTPHandler(getServer, nil)
			if transport == config.TransportSSE {
				handler = mcp.NewSSEHandler(getServer, nil)
			}
			ts := httptest.NewServer(handler)
			t.Cleanup(ts.Close)
			m := newTestManager(t, map[string]config.ServerConfig{"remote": {URL: ts.URL, Transport: transport}},
				&Options{ProtocolVersion: "2025-11-25", Logger: logs.Logger(slog.LevelInfo)})
			tools, err := m.Tools(context.Background(), "remote")
			if err != nil {
				t.Fatal(err)
			}
			got := names(tools)
			slices.Sort(got)
			if want := []string{"add_label", "create_issue", "echo", "list_issues", "list_repos", "open_wiki", "read_page", "search"}; !slices.Equal(got, want) {
				t.Errorf("tools = %v, want %v", got, want)
			}
			groups, _ := m.CachedGroups("remote")
			want := fixtureOutline
			if transport == config.TransportSSE {
				want = ""
				if !strings.Contains(logs.String(), "read without the groups extension from now on") {
					t.Errorf("the log does not say why the groups are not read:\n%s", logs.String())
				}
			}
			if o := outline(groups); o != want {
				t.Errorf("groups:\n%s\nwant:\n%s", o, want)
			}
			if got := mustCall(t, m, "remote", "search", map[string]any{"query": "x"}); got != `search {"query":"x"}` {
				t.Errorf("calling a scoped tool = %q", got)
			}
		})
	}
}

// chunkReader hands out its data in reads of at most n bytes.
type chunkReader struct {
	data []byte
	n    int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	k := min(r.n, len(p), len(r.data))
	copy(p, r.data[:k])
	r.data = r.data[k:]
	return k, nil
}

func (*chunkReader) Close() error { return nil }

// FuzzMessageWatcher checks that the watcher passes the body through
// unchanged and sees every occurrence of the method, however the body is
// cut into reads.
func FuzzMessageWatcher(f *testing.F) {
	note := `data: {"jsonrpc":"2.0","method":"notifications/groups/list_changed"}` + "\n\n"
	f.Add([]byte(note), 1)
	f.Add([]byte(note+note), 7)
	f.Add([]byte(`{"method":"notifications/groups/list_changed"`), 1000)
	f.Add([]byte(`"notifications/groups/list_changed"notifications/groups/list_changed"`), 3)
	f.Add([]byte(`{"method":"notifications/tools/list_changed"}`), 5)
	f.Fuzz(func(t *testing.T, body []byte, chunk int) {
		if chunk <= 0 || chunk > 1<<16 {
			chunk = 1
		}
		needle := []byte(`"` + notificationGroupsChange + `"`)
		found := 0
		w := &messageWatcher{ReadCloser: &chunkReader{data: slices.Clone(body), n: chunk}, needle: needle, found: func() { found++ }}
		out, err := io.ReadAll(w)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, body) {
			t.Fatalf("the body changed on the way through")
		}
		if want := bytes.Count(body, needle); found != want {
			t.Errorf("found %d, want %d", found, want)
		}
	})
}

// roundTripFunc is an http.RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestHeaderTransportSeesGroupsListChanged checks the streamable HTTP path,
// where the connection cannot be wrapped: the round tripper watches the
// response bodies for the notification and hands them on unchanged.
func TestHeaderTransportSeesGroupsListChanged(t *testing.T) {
	stream := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/groups/list_changed\"}\n\n"
	ht := &headerTransport{base: roundTripFunc(func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
			Body: &chunkReader{data: []byte(stream + stream), n: 10}}, nil
	})}
	seen := 0
	ht.watchGroupsChanged(func() { seen++ })
	resp, err := ht.RoundTrip(httptest.NewRequest("GET", "http://example.invalid/mcp", nil))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if string(body) != stream+stream {
		t.Errorf("the body changed on the way through: %q", body)
	}
	if seen != 2 {
		t.Errorf("saw the notification %d times, want 2", seen)
	}
}

// FuzzGroupEntry checks that whatever a server sends as a group entry, the
// reader never panics and keeps only names that follow the extension's rule.
func FuzzGroupEntry(f *testing.F) {
	for _, seed := range []string{
		`{"name":"issues","description":"Issue tracking"}`,
		`{"name":"Bad_Name"}`,
		`{"name":"a--b","description":"x"}`,
		`{"name":"-a"}`,
		`{"name":7}`,
		`"text"`,
		`{"name":"ok","_meta":{"io.modelcontextprotocol/groups":["x"]}}`,
		`{"name":"` + strings.Repeat("a", 65) + `"}`,
	} {
		f.Add([]byte(seed))
	}
	r := &groupReader{log: slog.New(slog.DiscardHandler)}
	f.Fuzz(func(t *testing.T, raw []byte) {
		e, ok := r.entry(raw, "fuzz")
		if !ok {
			return
		}
		if len(e.Name) == 0 || len(e.Name) > 64 || strings.Contains(e.Name, "--") || strings.HasPrefix(e.Name, "-") || strings.HasSuffix(e.Name, "-") {
			t.Errorf("accepted the name %q", e.Name)
		}
		for _, c := range e.Name {
			if !(c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z') {
				t.Errorf("accepted the name %q", e.Name)
			}
		}
	})
}

// TestFormatOneCacheFiles checks which cache files of the format before
// groups are still read: those of servers without the extension (they would
// be written the same today), not those of servers that serve it (read
// without declaring it, they hold no groups).
func TestFormatOneCacheFiles(t *testing.T) {
	for _, tc := range []struct {
		name       string
		extensions string
		used       bool
	}{
		{"without the extension", `{}`, true},
		{"with the extension", `{"io.modelcontextprotocol/groups": {}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			key := cacheKey(config.ServerConfig{Command: "unused"})
			file := `{"format": 1, "server": "old", "key": "` + key + `", "init": {"protocolVersion": "2025-11-25",
				"capabilities": {"tools": {}, "extensions": ` + tc.extensions + `}, "serverInfo": {"name": "old", "version": "1"}},
				"tools": [{"name": "kept", "inputSchema": {"type": "object"}}]}`
			if err := os.WriteFile(diskCache{dir: dir}.path("old", key), []byte(file), 0o600); err != nil {
				t.Fatal(err)
			}
			var logs logtest.Buffer
			m := newTestManager(t, map[string]config.ServerConfig{"old": {Command: "unused"}},
				&Options{CacheDir: dir, Logger: logs.Logger(slog.LevelInfo)})
			tools, ok := m.CachedTools("old")
			if ok != tc.used || ok && (len(tools) != 1 || tools[0].Name != "kept") {
				t.Errorf("CachedTools = %v, %v; want the file used: %v", names(tools), ok, tc.used)
			}
			if !tc.used && !strings.Contains(logs.String(), "from another version of toolfold") {
				t.Errorf("no warning about the old file:\n%s", logs.String())
			}
		})
	}
}
