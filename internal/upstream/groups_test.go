package upstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/logtest"
	"github.com/toolfold/toolfold/internal/upstream/groupsfixture"
)

// fixtureDialer connects each new connection to the groups fixture in
// memory, through the fixture's own transport wrapper so it can notify.
func fixtureDialer(fx *groupsfixture.Server) dialer {
	return func(ctx context.Context, _ string, _ config.ServerConfig, _ *slog.Logger) (dialed, error) {
		clientT, serverT := mcp.NewInMemoryTransports()
		if _, err := fx.Connect(ctx, fx.Transport(serverT), nil); err != nil {
			return dialed{}, err
		}
		return dialed{transport: clientT}, nil
	}
}

// outline renders groups as "name "description" [tools]" lines, children
// indented, for comparisons that show the whole tree when they fail.
func outline(groups []*Group) string {
	var b strings.Builder
	var walk func(gs []*Group, indent string)
	walk = func(gs []*Group, indent string) {
		for _, g := range gs {
			fmt.Fprintf(&b, "%s%s %q [%s]", indent, g.Name, g.Description, strings.Join(g.Tools, " "))
			if g.Skill != "" {
				fmt.Fprintf(&b, " skill=%s", g.Skill)
			}
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

var allFixtureTools = []string{"add_label", "create_issue", "echo", "list_issues", "list_repos", "open_wiki", "read_page", "search"}

// The fixture's groups as each shape gives them.
const (
	fixtureOutline = `issues "Issue tracking" [create_issue list_issues search]
  labels "Issue labels" [add_label]
repos "Repositories" [list_repos search]
`
	skillsOutline = `issues "Issue tracking" [create_issue list_issues search] skill=skill://issues/SKILL.md instructions="Search before creating an issue."
labels "Issue labels" [add_label] skill=skill://team/labels/SKILL.md instructions="A label must exist before it is added."
repos "Repositories" [list_repos search] skill=skill://repos/SKILL.md instructions="Prefer the default branch."
writing "How to write issue text" [] skill=skill://writing/SKILL.md instructions="Write short titles. See references/style.md.\n\nThe skill's other files can be read as resources: skill://writing/references/style.md"
`
	// Both: a skill of a group's name is that group.
	bothOutline = `issues "Issue tracking" [create_issue list_issues search] skill=skill://issues/SKILL.md instructions="Search before creating an issue."
  labels "Issue labels" [add_label] skill=skill://team/labels/SKILL.md instructions="A label must exist before it is added."
repos "Repositories" [list_repos search] skill=skill://repos/SKILL.md instructions="Prefer the default branch."
writing "How to write issue text" [] skill=skill://writing/SKILL.md instructions="Write short titles. See references/style.md.\n\nThe skill's other files can be read as resources: skill://writing/references/style.md"
`
)

// TestGroupsAreReadFromBothShapes folds the fixture in each shape: the
// grouping draft (groups/list over pages, nesting from the groups' _meta,
// members from the tools' _meta), skills (skills/list over pages, members
// from the frontmatter, instructions from SKILL.md), and both at once. The
// tools are tools/list's, each once, and callable.
func TestGroupsAreReadFromBothShapes(t *testing.T) {
	for _, tc := range []struct {
		name string
		mode groupsfixture.Mode
		want string
	}{
		{"grouping", groupsfixture.Grouping, fixtureOutline},
		{"skills", groupsfixture.Skills, skillsOutline},
		{"both", groupsfixture.Grouping | groupsfixture.Skills, bothOutline},
	} {
		for _, proto := range []string{"2025-11-25", ""} {
			name := proto
			if name == "" {
				name = "newest"
			}
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				m := newTestManager(t, map[string]config.ServerConfig{"fx": {Command: "unused"}},
					&Options{dial: fixtureDialer(groupsfixture.NewWith(groupsfixture.Options{Mode: tc.mode})), ProtocolVersion: proto})
				tools, err := m.Tools(context.Background(), "fx")
				if err != nil {
					t.Fatal(err)
				}
				got := names(tools)
				slices.Sort(got)
				if !slices.Equal(got, allFixtureTools) {
					t.Errorf("tools = %v, want %v", got, allFixtureTools)
				}
				groups, ok := m.CachedGroups("fx")
				if !ok {
					t.Fatal("CachedGroups: nothing known after a start")
				}
				if o := outline(groups); o != tc.want {
					t.Errorf("groups:\n%s\nwant:\n%s", o, tc.want)
				}
				if got := mustCall(t, m, "fx", "add_label", map[string]any{"issue": 7, "label": "bug"}); got != `add_label {"issue":7,"label":"bug"}` {
					t.Errorf("calling a grouped tool = %q", got)
				}
			})
		}
	}
}

// TestGroupsAreCached checks that a second run knows the groups from the
// disk cache without starting the server.
func TestGroupsAreCached(t *testing.T) {
	dir := t.TempDir()
	cfg := map[string]config.ServerConfig{"fx": {Command: "unused", Lazy: true}}
	fx := groupsfixture.NewWith(groupsfixture.Options{Mode: groupsfixture.Grouping | groupsfixture.Skills})
	first := newTestManager(t, cfg, &Options{CacheDir: dir, dial: fixtureDialer(fx)})
	if _, err := first.Tools(context.Background(), "fx"); err != nil {
		t.Fatal(err)
	}
	first.Close()

	dials := 0
	second := newTestManager(t, cfg, &Options{CacheDir: dir, dial: func(context.Context, string, config.ServerConfig, *slog.Logger) (dialed, error) {
		dials++
		return dialed{}, fmt.Errorf("the cached start must not dial")
	}})
	for name, err := range second.DiscoverAll(context.Background()) {
		if err != nil {
			t.Errorf("Discover %s: %v", name, err)
		}
	}
	groups, ok := second.CachedGroups("fx")
	if !ok || outline(groups) != bothOutline {
		t.Errorf("cached groups (ok=%v):\n%s\nwant:\n%s", ok, outline(groups), bothOutline)
	}
	if dials != 0 {
		t.Errorf("the cached start dialed %d times", dials)
	}
}

// TestGroupsChangeRereads checks that a change of the groups makes the
// Manager read them again and report it: notifications/groups/list_changed
// (with tools/list_changed for the moved tool) from a server of the
// grouping draft, notifications/resources/list_changed from one that
// serves skills.
func TestGroupsChangeRereads(t *testing.T) {
	for _, tc := range []struct {
		name string
		mode groupsfixture.Mode
		want string
	}{
		{"grouping", groupsfixture.Grouping, fixtureOutline + `wiki "The project wiki" [read_page]` + "\n"},
		{"skills", groupsfixture.Skills, skillsOutline + `wiki "The project wiki" [read_page] skill=skill://wiki/SKILL.md instructions="Pages are case-sensitive."` + "\n"},
	} {
		for _, proto := range []string{"2025-11-25", ""} {
			name := proto
			if name == "" {
				name = "newest"
			}
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				changed := make(chan string, 10)
				m := newTestManager(t, map[string]config.ServerConfig{"fx": {Command: "unused"}}, &Options{
					dial: fixtureDialer(groupsfixture.NewWith(groupsfixture.Options{Mode: tc.mode})), ProtocolVersion: proto,
					OnToolsChanged: func(s string) { changed <- s },
				})
				if _, err := m.Tools(context.Background(), "fx"); err != nil {
					t.Fatal(err)
				}
				<-changed // the first discovery
				if got := mustCall(t, m, "fx", "open_wiki", nil); got != "wiki opened" {
					t.Fatalf("open_wiki = %q", got)
				}
				deadline := time.After(10 * time.Second)
				for {
					groups, _ := m.CachedGroups("fx")
					if outline(groups) == tc.want {
						return
					}
					select {
					case <-changed:
					case <-deadline:
						t.Fatalf("groups after the change:\n%s\nwant:\n%s", outline(groups), tc.want)
					}
				}
			})
		}
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
	want := `issues "Issue tracking" [create_issue list_issues]
  labels "Issue labels" []
repos "Repositories" [list_repos]
`
	if o := outline(groups); o != want {
		t.Errorf("groups:\n%s\nwant:\n%s", o, want)
	}
}

// TestServerWithoutTheExtensionHasNoGroups checks that nothing changes for
// a server that declares neither extension: no groups, no groups/list,
// no skills/list, even if it has skill:// resources.
func TestServerWithoutTheExtensionHasNoGroups(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "plain"}, nil)
	asked := make(chan string, 1)
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if strings.HasPrefix(method, "groups/") || strings.HasPrefix(method, "skills/") {
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

// rawResult lets a test server answer whatever JSON it likes.
type (
	rawListParams struct {
		mcp.ParamsBase
		Cursor string `json:"cursor,omitempty"`
	}
	rawResult struct {
		mcp.ResultBase
		Fields map[string]any
	}
)

// MarshalJSON flattens Fields into the result object.
func (r *rawResult) MarshalJSON() ([]byte, error) { return json.Marshal(r.Fields) }

// rawServer declares ext and answers method from pages (cursor "" for the
// first, then the index as a string); its tools are tools, with their
// _meta as given.
func rawServer(ext, method string, pages []map[string]any, tools ...*mcp.Tool) *mcp.Server {
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}
	caps.AddExtension(ext, map[string]any{})
	srv := mcp.NewServer(&mcp.Implementation{Name: "malformed"}, &mcp.ServerOptions{Capabilities: caps})
	for _, tl := range tools {
		srv.AddTool(tl, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return textResult(tl.Name), nil
		})
	}
	_ = mcp.AddReceivingCustomMethod(srv, method, func(_ context.Context, _ *mcp.ServerSession, p *rawListParams) (*rawResult, error) {
		i := 0
		if p != nil && p.Cursor != "" {
			fmt.Sscan(p.Cursor, &i)
		}
		return &rawResult{Fields: pages[i]}, nil
	})
	return srv
}

func entry(name string, parents ...string) map[string]any {
	e := map[string]any{"name": name, "description": "the " + name + " group"}
	if len(parents) > 0 {
		e["_meta"] = map[string]any{"io.modelcontextprotocol/groups": parents}
	}
	return e
}

// member is a tool in the groups named.
func member(name string, groups ...string) *mcp.Tool {
	return &mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}, Meta: mcp.Meta{"io.modelcontextprotocol/groups": groups}}
}

// TestMalformedGroupsAreSkipped feeds the Manager every kind of bad answer
// at once: each is logged naming the server and costs only what it is
// about; the server starts and its good groups are kept.
func TestMalformedGroupsAreSkipped(t *testing.T) {
	long := strings.Repeat("a", 65)
	first := []any{entry("good"), entry("Bad_Name"), entry(long), map[string]any{"description": "no name"}, "not an object",
		entry("good"), entry("orphan", "ghost"), entry("cyc-a", "cyc-b"), entry("cyc-b", "cyc-a"), entry("self", "self"),
		entry("multi", "good", "orphan")}
	for i := range 12 { // a chain deeper than maxGroupDepth
		if i == 0 {
			first = append(first, entry("deep0"))
		} else {
			first = append(first, entry(fmt.Sprintf("deep%d", i), fmt.Sprintf("deep%d", i-1)))
		}
	}
	pages := []map[string]any{
		{"groups": first, "nextCursor": "1"},
		{"groups": []any{map[string]any{"name": "bare"}}, "nextCursor": "1"}, // a cursor loop
	}
	tools := []*mcp.Tool{member("t1", "good"), member("t2", "good", "nowhere"), member("d9", "deep9"), member("m1", "multi"),
		{Name: "plain", InputSchema: map[string]any{"type": "object"}, Meta: mcp.Meta{"io.modelcontextprotocol/groups": "not a list"}}}
	var logs logtest.Buffer
	m := newTestManager(t, map[string]config.ServerConfig{"bad": {Command: "unused"}},
		&Options{dial: inMemoryDialer(rawServer(GroupsExtension, "groups/list", pages, tools...)), Logger: logs.Logger(slog.LevelInfo)})
	got, err := m.Tools(context.Background(), "bad")
	if err != nil {
		t.Fatalf("the server must start despite its groups: %v", err)
	}
	if len(got) != len(tools) {
		t.Errorf("tools = %v: tools/list's, each once", names(got))
	}
	groups, _ := m.CachedGroups("bad")
	want := `good "the good group" [t1 t2]
  multi "the multi group" [m1]
orphan "the orphan group" []
cyc-b "the cyc-b group" []
  cyc-a "the cyc-a group" []
self "the self group" []
deep0 "the deep0 group" []
  deep1 "the deep1 group" []
    deep2 "the deep2 group" []
      deep3 "the deep3 group" []
        deep4 "the deep4 group" []
          deep5 "the deep5 group" []
            deep6 "the deep6 group" []
              deep7 "the deep7 group" []
                deep8 "the deep8 group" []
bare "" []
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
		`names a parent that groups/list does not list; that parent is ignored" upstream=bad group=orphan parent=ghost`,
		`parents make a cycle; that parent is ignored" upstream=bad group=cyc-b parent=cyc-a`,
		`parents make a cycle; that parent is ignored" upstream=bad group=self parent=self`,
		`several parents`,
		`a tool names a group that groups/list does not list; that membership is ignored" upstream=bad tool=t2 group=nowhere`,
		`returned a cursor it had returned before`,
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
	for i := range maxGroups + 50 {
		entries = append(entries, entry(fmt.Sprintf("g%d", i)))
	}
	var logs logtest.Buffer
	m := newTestManager(t, map[string]config.ServerConfig{"big": {Command: "unused"}},
		&Options{dial: inMemoryDialer(rawServer(GroupsExtension, "groups/list", []map[string]any{{"groups": entries}}, member("t", "g0"))), Logger: logs.Logger(slog.LevelInfo)})
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

// skillSpec is one skill a test server serves: its SKILL.md text, and the
// entry skills/list gives (built from the text unless the case spoils it).
type skillSpec struct {
	uri, text string
	entry     map[string]any
}

func skillMD(name, description, tools, body string) string {
	s := "---\nname: " + name + "\ndescription: " + description + "\n"
	if tools != "" {
		s += "metadata:\n  io.modelcontextprotocol/tools: \"" + tools + "\"\n"
	}
	return s + "---\n\n" + body + "\n"
}

func digestOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func goodEntry(uri, text string, front map[string]any) map[string]any {
	return map[string]any{"uri": uri, "frontmatter": front,
		"resources": []any{map[string]any{"uri": uri, "digest": digestOf(text), "size": len(text)}}}
}

// TestMalformedSkillsAreSkipped checks each way a skill can fail a host's
// checks (SEP-2640: the name is the path's last segment, the SKILL.md
// matches its digest, size and frontmatter) and the cases that pass: a
// "dynamic" skill, two skills of one name told apart by their paths, a
// tool name the server does not list left out.
func TestMalformedSkillsAreSkipped(t *testing.T) {
	fm := func(name, tools string) map[string]any {
		f := map[string]any{"name": name, "description": "the " + name + " skill"}
		if tools != "" {
			f["metadata"] = map[string]any{"io.modelcontextprotocol/tools": tools}
		}
		return f
	}
	var specs []skillSpec
	add := func(uri, name, tools, body string, spoil func(e map[string]any)) {
		text := skillMD(name, "the "+name+" skill", tools, body)
		e := goodEntry(uri, text, fm(name, tools))
		if spoil != nil {
			spoil(e)
		}
		specs = append(specs, skillSpec{uri, text, e})
	}
	add("skill://good/SKILL.md", "good", "t1 ghost t1", "Good body.", nil)
	add("skill://acme/refunds/SKILL.md", "refunds", "t1", "Acme refunds.", nil)
	add("skill://other/refunds/SKILL.md", "refunds", "t2", "Other refunds.", nil)
	add("skill://live/SKILL.md", "live", "t2", "Generated.", func(e map[string]any) { e["resources"] = "dynamic" })
	add("skill://wrongpath/SKILL.md", "misnamed", "", "x", nil)
	add("skill://digest/SKILL.md", "digest", "", "x", func(e map[string]any) {
		e["resources"] = []any{map[string]any{"uri": "skill://digest/SKILL.md", "digest": digestOf("other"), "size": 1}}
	})
	add("skill://front/SKILL.md", "front", "t1", "x", func(e map[string]any) { e["frontmatter"] = fm("front", "t2") })
	add("skill://nores/SKILL.md", "nores", "", "x", func(e map[string]any) { delete(e, "resources") })
	add("skill://Bad_Name/SKILL.md", "Bad_Name", "", "x", nil)
	specs = append(specs, skillSpec{"skill://nofront/SKILL.md", "no frontmatter", goodEntry("skill://nofront/SKILL.md", "no frontmatter", fm("nofront", ""))})

	var entries []any
	for _, s := range specs {
		entries = append(entries, s.entry)
	}
	srv := rawServer(SkillsExtension, "skills/list", []map[string]any{{"skills": entries}},
		&mcp.Tool{Name: "t1", InputSchema: map[string]any{"type": "object"}}, &mcp.Tool{Name: "t2", InputSchema: map[string]any{"type": "object"}})
	for _, s := range specs {
		srv.AddResource(&mcp.Resource{URI: s.uri, Name: "SKILL.md"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: s.uri, Text: s.text}}}, nil
		})
	}
	var logs logtest.Buffer
	m := newTestManager(t, map[string]config.ServerConfig{"sk": {Command: "unused"}},
		&Options{dial: inMemoryDialer(srv), Logger: logs.Logger(slog.LevelInfo)})
	if _, err := m.Tools(context.Background(), "sk"); err != nil {
		t.Fatal(err)
	}
	groups, _ := m.CachedGroups("sk")
	want := `good "the good skill" [t1] skill=skill://good/SKILL.md instructions="Good body."
refunds "the refunds skill" [t1] skill=skill://acme/refunds/SKILL.md instructions="Acme refunds."
other-refunds "the refunds skill" [t2] skill=skill://other/refunds/SKILL.md instructions="Other refunds."
live "the live skill" [t2] skill=skill://live/SKILL.md instructions="Generated."
`
	if o := outline(groups); o != want {
		t.Errorf("groups:\n%s\nwant:\n%s", o, want)
	}
	for _, w := range []string{
		`names a tool the server does not list; it is left out of the skill's group" upstream=sk skill=skill://good/SKILL.md tool=ghost`,
		`does not end in <name>/SKILL.md; the skill is skipped" upstream=sk where="skills/list entry #5"`,
		`is not what its entry describes; the skill is skipped" upstream=sk skill=skill://digest/SKILL.md`,
		`does not match its entry; the skill is skipped" upstream=sk skill=skill://front/SKILL.md`,
		`has no valid resources (a list, or \"dynamic\"); the skill is skipped" upstream=sk skill=skill://nores/SKILL.md`,
		`breaks the skills' naming rule`,
		`does not match its entry; the skill is skipped" upstream=sk skill=skill://nofront/SKILL.md error="it does not begin with YAML frontmatter"`,
	} {
		if !strings.Contains(logs.String(), w) {
			t.Errorf("the log lacks %q:\n%s", w, logs.String())
		}
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
			if !slices.Equal(got, allFixtureTools) {
				t.Errorf("tools = %v, want %v", got, allFixtureTools)
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
				t.Errorf("calling a grouped tool = %q", got)
			}
		})
	}
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
			Body: io.NopCloser(iotest.OneByteReader(strings.NewReader(stream + stream)))}, nil // every event split across reads
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
		{"with the extension", `{"io.modelcontextprotocol/grouping": {}}`, false},
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

// TestGroupPagingStopsAtTheBounds checks that a server paging out groups
// without end is read no further than the bounds: by count (maxGroups) and
// by bytes (maxGroupBytes), not after every page is held.
func TestGroupPagingStopsAtTheBounds(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	tests := []struct {
		name     string
		perPage  int
		desc     string
		maxPages int64
	}{
		{"by count", 100, "a group", int64(maxGroups/100 + 1)},
		{"by bytes", 1, big, int64(maxGroupBytes/len(big) + 1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var served atomic.Int64
			caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}
			caps.AddExtension(GroupsExtension, map[string]any{})
			srv := mcp.NewServer(&mcp.Implementation{Name: "endless"}, &mcp.ServerOptions{Capabilities: caps})
			srv.AddTool(member("t", "p0-g0"), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return textResult("t"), nil
			})
			_ = mcp.AddReceivingCustomMethod(srv, "groups/list", func(_ context.Context, _ *mcp.ServerSession, p *rawListParams) (*rawResult, error) {
				page := served.Add(1) - 1
				var groups []any
				for j := range tc.perPage {
					groups = append(groups, map[string]any{"name": fmt.Sprintf("p%d-g%d", page, j), "description": tc.desc})
				}
				return &rawResult{Fields: map[string]any{"groups": groups, "nextCursor": fmt.Sprint(page + 1)}}, nil
			})
			var logs logtest.Buffer
			m := newTestManager(t, map[string]config.ServerConfig{"endless": {Command: "unused"}},
				&Options{dial: inMemoryDialer(srv), Logger: logs.Logger(slog.LevelInfo)})
			if _, err := m.Tools(context.Background(), "endless"); err != nil {
				t.Fatal(err)
			}
			if n := served.Load(); n > tc.maxPages {
				t.Errorf("%d pages read, want at most %d: paging must stop at the bound", n, tc.maxPages)
			}
			if !strings.Contains(logs.String(), "paging stops there") || !strings.Contains(logs.String(), "endless") {
				t.Errorf("no warning naming the server says paging stopped:\n%s", logs.String())
			}
		})
	}
}
