package demo

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/libspec"
)

// fixedNow is the clock of every test: Wednesday 1 May 2024, 12:00 UTC.
var fixedNow = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// client is an MCP client connected in memory to a fresh demo server in
// the flat mode, where every tool is listed and callable by its own name.
type client struct {
	t       *testing.T
	session *mcp.ClientSession
	sandbox string
}

func newClient(t *testing.T) *client {
	t.Helper()
	sandbox := t.TempDir()
	srv := New(&Options{
		Server:     toolfold.Options{Mode: toolfold.ModeFlat},
		SandboxDir: sandbox,
		Clock:      func() time.Time { return fixedNow },
	})
	ctx := t.Context()
	clientT, serverT := mcp.NewInMemoryTransports()
	serverSession, err := srv.Connect(ctx, serverT, "test")
	if err != nil {
		t.Fatalf("connecting the server: %v", err)
	}
	session, err := mcp.NewClient(&mcp.Implementation{Name: "demo-test", Version: "0"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		t.Fatalf("connecting the client: %v", err)
	}
	t.Cleanup(func() {
		session.Close()
		serverSession.Wait()
	})
	return &client{t: t, session: session, sandbox: sandbox}
}

func (c *client) call(name string, args any) *mcp.CallToolResult {
	c.t.Helper()
	res, err := c.session.CallTool(c.t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.t.Fatalf("%s: protocol error: %v", name, err)
	}
	return res
}

func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// callOK calls a tool that must succeed and decodes its structured result,
// checking that the text content carries the same JSON.
func callOK[T any](c *client, name string, args any) T {
	c.t.Helper()
	res := c.call(name, args)
	if res.IsError {
		c.t.Fatalf("%s(%v) failed: %s", name, args, resultText(res))
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		c.t.Fatalf("%s: encoding structured content: %v", name, err)
	}
	var out T
	if err := json.Unmarshal(raw, &out); err != nil {
		c.t.Fatalf("%s: structured content %s does not decode into %T: %v", name, raw, out, err)
	}
	var fromText T
	if err := json.Unmarshal([]byte(resultText(res)), &fromText); err != nil {
		c.t.Fatalf("%s: the text content is not the result's JSON: %v", name, err)
	}
	return out
}

// callErr calls a tool that must fail and returns its error message, which
// must contain every one of wants.
func (c *client) callErr(name string, args any, wants ...string) string {
	c.t.Helper()
	res := c.call(name, args)
	msg := resultText(res)
	if !res.IsError {
		c.t.Fatalf("%s(%v) succeeded, want an error; result: %s", name, args, msg)
	}
	for _, w := range wants {
		if !strings.Contains(msg, w) {
			c.t.Errorf("%s(%v) error %q does not contain %q", name, args, msg, w)
		}
	}
	return msg
}

// wantGroups is the intended catalog: every tool and the one group it is
// in ("" for ungrouped).
var wantGroups = map[string]string{
	"about": "",

	"change_case": "text", "slugify": "text", "word_count": "text",
	"regex_find": "text", "regex_replace": "text", "text_diff": "text",

	"base64_encode": "text.encode", "base64_decode": "text.encode", "url_encode": "text.encode",
	"url_decode": "text.encode", "hex_encode": "text.encode", "hex_decode": "text.encode", "hash_text": "text.encode",

	"calculate": "math", "statistics": "math", "convert_units": "math", "convert_base": "math",

	"current_time": "time", "convert_time_zone": "time", "parse_time": "time",
	"format_time": "time", "add_duration": "time", "time_between": "time",

	"json_validate": "json", "json_format": "json", "json_query": "json", "json_diff": "json",

	"put_note": "notes", "get_note": "notes", "list_notes": "notes", "search_notes": "notes", "delete_note": "notes",

	"list_files": "files", "read_file": "files", "write_file": "files", "file_info": "files",
	"make_directory": "files", "move_file": "files", "delete_file": "files",

	"glob_files": "files.search", "grep_files": "files.search",
}

func TestCatalogShape(t *testing.T) {
	spec, err := libspec.Of(New(&Options{SandboxDir: t.TempDir()}))
	if err != nil {
		t.Fatal(err)
	}
	built, err := catalog.Build(spec)
	if err != nil {
		t.Fatalf("the demo catalog does not build: %v", err)
	}
	cat := built.Catalog
	if len(built.Warnings) > 0 {
		t.Errorf("catalog warnings: %v", built.Warnings)
	}
	if n := len(cat.Tools()); n < 30 {
		t.Errorf("%d tools, want at least 30", n)
	}
	if n := len(cat.Roots()); n < 6 {
		t.Errorf("%d top-level groups, want at least 6", n)
	}
	children := 0
	for _, g := range cat.Groups() {
		if g.Parent != nil {
			children++
		}
		if strings.TrimSpace(g.Description) == "" {
			t.Errorf("group %s has no description", g.ID)
		}
		if len(g.Tools) == 0 {
			t.Errorf("group %s has no tools", g.ID)
		}
	}
	if children == 0 {
		t.Error("no child group: the demo should show nesting")
	}

	var names []string
	for _, tl := range cat.Tools() {
		names = append(names, tl.Name)
		want, known := wantGroups[tl.Name]
		if !known {
			t.Errorf("tool %s is not in wantGroups: add it to the test with its group", tl.Name)
			continue
		}
		var got []string
		for _, g := range tl.Groups {
			got = append(got, string(g.ID))
		}
		if want == "" && len(got) != 0 || want != "" && !slices.Equal(got, []string{want}) {
			t.Errorf("tool %s is in groups %v, want [%s]", tl.Name, got, want)
		}
		checkToolDefinition(t, tl.Def)
	}
	for name := range wantGroups {
		if !slices.Contains(names, name) {
			t.Errorf("tool %s is missing from the catalog", name)
		}
	}
}

// checkToolDefinition holds every tool to the catalog's standards: a
// snake_case name, a description, annotations, a described parameter for
// every property and an output schema (so results carry structuredContent).
func checkToolDefinition(t *testing.T, def *mcp.Tool) {
	t.Helper()
	if !validSnake(def.Name) {
		t.Errorf("tool name %q is not snake_case", def.Name)
	}
	if len(def.Description) < 40 {
		t.Errorf("tool %s: description %q is too thin", def.Name, def.Description)
	}
	a := def.Annotations
	switch {
	case a == nil:
		t.Errorf("tool %s has no annotations", def.Name)
	case a.Title == "":
		t.Errorf("tool %s has no title", def.Name)
	case !a.ReadOnlyHint && a.DestructiveHint == nil:
		t.Errorf("tool %s changes state but does not say whether it is destructive", def.Name)
	}
	if strings.HasPrefix(def.Name, "delete_") && (a == nil || a.DestructiveHint == nil || !*a.DestructiveHint) {
		t.Errorf("tool %s deletes but is not marked destructive", def.Name)
	}
	in := schemaMap(t, def.InputSchema)
	props, _ := in["properties"].(map[string]any)
	for name, p := range props {
		if d, _ := p.(map[string]any)["description"].(string); strings.TrimSpace(d) == "" {
			t.Errorf("tool %s: parameter %s has no description", def.Name, name)
		}
		if !validSnake(name) {
			t.Errorf("tool %s: parameter %s is not snake_case", def.Name, name)
		}
	}
	if def.OutputSchema == nil {
		t.Errorf("tool %s has no output schema", def.Name)
	}
}

func validSnake(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

func schemaMap(t *testing.T, s any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestListedOverTheWire checks what a client sees in the flat mode: every
// tool, with read-only and destructive markers.
func TestListedOverTheWire(t *testing.T) {
	c := newClient(t)
	res, err := c.session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		listed[tl.Name] = tl
	}
	for name := range wantGroups {
		if listed[name] == nil {
			t.Errorf("%s is not listed in the flat mode", name)
		}
	}
	if d := listed["delete_file"].Description; !strings.HasPrefix(d, "[DESTRUCTIVE]") {
		t.Errorf("delete_file description %q lacks the destructive marker", d)
	}
	if d := listed["calculate"].Description; !strings.HasPrefix(d, "[READ-ONLY]") {
		t.Errorf("calculate description %q lacks the read-only marker", d)
	}
}

func TestAbout(t *testing.T) {
	c := newClient(t)
	out := callOK[aboutOutput](c, "about", map[string]any{})
	if out.ToolCount != len(wantGroups) {
		t.Errorf("about counts %d tools, want %d", out.ToolCount, len(wantGroups))
	}
	if !slices.Equal(out.Ungrouped, []string{"about"}) {
		t.Errorf("ungrouped = %v, want [about]", out.Ungrouped)
	}
	if out.SandboxDir != c.sandbox {
		t.Errorf("sandbox_dir = %q, want %q", out.SandboxDir, c.sandbox)
	}
	byName := map[string]aboutGroup{}
	for _, g := range out.Groups {
		byName[g.Name] = g
	}
	if g := byName["files.search"]; g.Parent != "files" || !slices.Equal(g.Tools, []string{"glob_files", "grep_files"}) {
		t.Errorf("files.search = %+v", g)
	}
	if g := byName["math"]; len(g.Tools) != 4 || g.Description == "" {
		t.Errorf("math = %+v", g)
	}
}

// TestReadOnlyServer checks that the demo honours the library's read-only
// switch: about then reports only read-only tools, and a destructive tool
// cannot be called.
func TestReadOnlyServer(t *testing.T) {
	srv := New(&Options{Server: toolfold.Options{Mode: toolfold.ModeFlat, ReadOnly: true}, SandboxDir: t.TempDir()})
	clientT, serverT := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), serverT, "test")
	if err != nil {
		t.Fatal(err)
	}
	session, err := mcp.NewClient(&mcp.Implementation{Name: "demo-test", Version: "0"}, nil).Connect(t.Context(), clientT, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { session.Close(); ss.Wait() }()
	c := &client{t: t, session: session}
	out := callOK[aboutOutput](c, "about", map[string]any{})
	for _, g := range out.Groups {
		for _, name := range g.Tools {
			if slices.Contains([]string{"write_file", "delete_file", "put_note", "delete_note", "move_file", "make_directory"}, name) {
				t.Errorf("read-only server lists %s", name)
			}
		}
	}
	c.callErr("delete_note", map[string]any{"key": "x"})
}

// TestFoldedModes serves the demo folded, as `toolfold serve` does, and
// reaches tools the folded ways: through a group's grouped tool with an
// action, and by enabling a group.
func TestFoldedModes(t *testing.T) {
	connect := func(mode toolfold.Mode) *client {
		srv := New(&Options{Server: toolfold.Options{Mode: mode}, SandboxDir: t.TempDir(), Clock: func() time.Time { return fixedNow }})
		clientT, serverT := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(t.Context(), serverT, "test")
		if err != nil {
			t.Fatal(err)
		}
		session, err := mcp.NewClient(&mcp.Implementation{Name: "demo-test", Version: "0"}, nil).Connect(t.Context(), clientT, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { session.Close(); ss.Wait() })
		return &client{t: t, session: session}
	}
	listed := func(c *client) []string {
		res, err := c.session.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		slices.Sort(names)
		return names
	}

	t.Run("grouped", func(t *testing.T) {
		c := connect(toolfold.ModeGrouped)
		want := []string{"about", "files", "json", "math", "notes", "text", "time"}
		if got := listed(c); !slices.Equal(got, want) {
			t.Fatalf("grouped mode lists %v, want %v", got, want)
		}
		sum := callOK[calculateOutput](c, "math", map[string]any{"action": "calculate", "expression": "6 * 7"})
		if sum.Value != 42 {
			t.Errorf("math calculate = %+v", sum)
		}
		h := callOK[hashOutput](c, "text", map[string]any{"action": "encode.hash_text", "text": "abc", "algorithm": "md5"})
		if h.Hex != "900150983cd24fb0d6963f7d28e17f72" {
			t.Errorf("text encode.hash_text = %+v", h)
		}
		callOK[writeFileOutput](c, "files", map[string]any{"action": "write_file", "path": "a.txt", "content": "hi"})
		g := callOK[globFilesOutput](c, "files", map[string]any{"action": "search.glob_files", "pattern": "*.txt"})
		if g.Count != 1 {
			t.Errorf("files search.glob_files = %+v", g)
		}
	})

	t.Run("groups", func(t *testing.T) {
		c := connect(toolfold.ModeGroups)
		before := listed(c)
		if slices.Contains(before, "calculate") || !slices.Contains(before, "about") {
			t.Fatalf("groups mode starts with %v", before)
		}
		c.callErr("calculate", map[string]any{"expression": "1+1"}, "enable_tools")
		// A meta-tool: its text is prose, its data structuredContent.
		if res := c.call("enable_tools", map[string]any{"groups": []string{"math"}}); res.IsError || res.StructuredContent == nil {
			t.Fatalf("enable_tools: %s", resultText(res))
		}
		if got := callOK[calculateOutput](c, "calculate", map[string]any{"expression": "1+1"}); got.Value != 2 {
			t.Errorf("calculate after enabling math = %+v", got)
		}
	})
}
