package meta_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/meta"
	"github.com/toolfold/toolfold/internal/search"
	"github.com/toolfold/toolfold/internal/view"
)

func setup(t *testing.T, mode expose.Mode) (*expose.Exposure, *view.View) {
	t.Helper()
	space, err := view.NewSpace(catalogtest.Tree(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	e, err := expose.Build(space, &expose.Options{Mode: mode})
	if err != nil {
		t.Fatal(err)
	}
	return e, space.New()
}

func TestHiddenToolMessage(t *testing.T) {
	e, v := setup(t, expose.Groups)
	n := meta.DefaultNames()
	w, _ := e.Route("a") // in code and docs
	msg := meta.HiddenToolMessage(n, w, v.Snapshot())
	for _, want := range []string{`a is in the groups "code", "docs", which is not enabled`, `Call enable_tools with {"groups":["code"]}`, `call_tool with {"name": "a"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	renamed := n
	renamed.Enable, renamed.Call = "unfold", "invoke"
	if msg := meta.HiddenToolMessage(renamed, w, v.Snapshot()); !strings.Contains(msg, "Call unfold with") || !strings.Contains(msg, "through invoke") {
		t.Errorf("renamed meta-tools are not used in the hint:\n%s", msg)
	}
}

func TestUnknownToolMessage(t *testing.T) {
	e, _ := setup(t, expose.Flat)
	if msg := meta.UnknownToolMessage(meta.DefaultNames(), e, "bb", nil); !strings.Contains(msg, `"b"`) || strings.Contains(msg, "find_tools") {
		t.Errorf("flat mode: %s (no find_tools to suggest there)", msg)
	}
	g, _ := setup(t, expose.Search)
	if msg := meta.UnknownToolMessage(meta.DefaultNames(), g, "zzzzzz", nil); !strings.Contains(msg, "find_tools searches every tool") {
		t.Errorf("search mode: %s", msg)
	}
}

func TestEnableWithoutGroupsExplainsTheCall(t *testing.T) {
	e, v := setup(t, expose.Groups)
	res, ch := meta.DoEnable(meta.DefaultNames(), v, e, meta.GroupsArgs{})
	if ch.Changed() || !strings.Contains(res.Note, `{"groups": ["<name>"]}`) || len(res.AvailableGroups) != 2 {
		t.Errorf("result = %+v", res)
	}
}

// TestResultTextIsReadOnce: a result with its own text carries that text
// for the model and the data as structuredContent, never the JSON twice;
// one without keeps its JSON as text.
func TestResultTextIsReadOnce(t *testing.T) {
	r := meta.Result(map[string]int{"x": 1}, false)
	text := r.Content[0].(*mcp.TextContent).Text
	structured, ok := r.StructuredContent.(json.RawMessage)
	if !ok || string(structured) != `{"x":1}` || text != string(structured) || r.IsError {
		t.Errorf("text %q, structured %v", text, r.StructuredContent)
	}
	e, v := setup(t, expose.Groups)
	res, _ := meta.DoEnable(meta.DefaultNames(), v, e, meta.GroupsArgs{Groups: []string{"code.repos", "code"}})
	r = meta.Result(res, false)
	text = r.Content[0].(*mcp.TextContent).Text
	if json.Valid([]byte(text)) || strings.Contains(text, `"inputSchema"`) {
		t.Errorf("the text is JSON again:\n%s", text)
	}
	for _, want := range []string{"Enabled: code.", "Error: ", "- a(x?: string): Tool a", "tools in your list now", "code.repos (3)"} {
		if !strings.Contains(text, want) {
			t.Errorf("the text lacks %q:\n%s", want, text)
		}
	}
	var data meta.EnableResult
	if err := json.Unmarshal(r.StructuredContent.(json.RawMessage), &data); err != nil || len(data.Tools) != 2 || data.Tools[0].Call != "a(x?: string)" {
		t.Errorf("structuredContent = %s (%v)", r.StructuredContent, err)
	}
}

// TestSignature checks the call signatures find_tools gives: required
// parameters first and always, optional ones marked, types as code, and a
// count of the optional ones a long signature leaves out.
func TestSignature(t *testing.T) {
	tool := func(schema string) *catalog.Tool {
		tl := catalogtest.Tool("send")
		tl.Def.InputSchema = json.RawMessage(schema)
		return tl
	}
	long := `{"type":"object","properties":{`
	for i := range 30 {
		long += fmt.Sprintf(`"OptionalParameterNumber%02d":{"type":"string"},`, i)
	}
	long += `"To":{"type":"string"}},"required":["To"]}`
	tests := []struct{ schema, want string }{
		{`{"type":"object","properties":{"Body":{"type":"string"},"To":{"type":"string"},"MediaUrl":{"type":"array","items":{"type":"string"}}},"required":["To"]}`,
			"send(To: string, Body?: string, MediaUrl?: string[])"},
		{`{"type":"object","properties":{"order":{"type":"string","enum":["asc","desc"]},"n":{"type":["integer","null"]}}}`, `send(order?: "asc"|"desc", n?: integer)`},
		{`{"type":"object"}`, "send()"},
		{long, "send(To: string, OptionalParameterNumber00?: string, "},
	}
	for _, tt := range tests {
		cat := catalogtest.Build(t, catalog.Spec{Tools: []*catalog.Tool{tool(tt.schema)}})
		space, err := view.NewSpace(cat, nil)
		if err != nil {
			t.Fatal(err)
		}
		e, err := expose.Build(space, &expose.Options{Mode: expose.Search})
		if err != nil {
			t.Fatal(err)
		}
		w, _ := e.Route("send")
		got := meta.Signature(w)
		if !strings.HasPrefix(got, tt.want) {
			t.Errorf("Signature = %q, want it to start %q", got, tt.want)
		}
		if tt.schema == long && (!strings.HasSuffix(got, " optional)") || len(got) > 200) {
			t.Errorf("a long signature is %d bytes and does not count what it left out: %q", len(got), got)
		}
	}
}

// TestFindScoresOnOneScale: one phrasing or several, every score runs from
// 0 to 1, so that a model can compare them across calls.
func TestFindScoresOnOneScale(t *testing.T) {
	d, v := phrasingsCatalog(t)
	for _, args := range []meta.FindArgs{{Query: "merge pull request"}, {Query: "merge pull request", Queries: []string{"land PR"}}} {
		res, err := d.Find(args, v.Snapshot())
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Tools) == 0 {
			t.Fatalf("%+v found nothing", args)
		}
		for _, f := range res.Tools {
			if f.Score < 0 || f.Score > 1 {
				t.Errorf("%+v: %s scores %v", args, f.Name, f.Score)
			}
		}
		for _, g := range res.Groups {
			if g.Score < 0 || g.Score > 1 {
				t.Errorf("%+v: group %s scores %v", args, g.Name, g.Score)
			}
		}
		if res.Tools[0].Call == "" {
			t.Errorf("%+v: no call signature", args)
		}
	}
}

// TestFindListsNoEmptyGroups: a group with no tools of its own (a parent
// split into children) is never a hit: its children are.
func TestFindListsNoEmptyGroups(t *testing.T) {
	tool := func(id, desc string) *catalog.Tool {
		tl := catalogtest.Tool(id)
		tl.Def.Description = desc
		return tl
	}
	cat := catalogtest.Build(t, catalog.Spec{
		Tools: []*catalog.Tool{tool("send_sms", "Send an SMS message"), tool("list_sms", "List SMS messages")},
		Groups: []catalog.GroupSpec{
			{ID: "sms", Description: "SMS messages"},
			{ID: "sms.message", Parent: "sms", Description: "SMS messages: send and list", Members: catalog.Members{Tools: []catalog.ToolID{"send_sms", "list_sms"}}},
		},
	})
	space, err := view.NewSpace(cat, nil)
	if err != nil {
		t.Fatal(err)
	}
	e, err := expose.Build(space, &expose.Options{Mode: expose.Search})
	if err != nil {
		t.Fatal(err)
	}
	res, err := meta.NewDiscovery(meta.DefaultNames(), e, nil).Find(meta.FindArgs{Query: "sms messages"}, space.New().Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range res.Groups {
		names = append(names, g.Name)
	}
	if !slices.Contains(names, "sms.message") || slices.Contains(names, "sms") {
		t.Errorf("groups found = %v, want sms.message and not its empty parent", names)
	}
}

// TestMetaWordsMatchTheMode: what call_tool and find_tools say names only
// meta-tools the client's mode offers.
func TestMetaWordsMatchTheMode(t *testing.T) {
	n := meta.DefaultNames()
	search := meta.CallToolFor(n, expose.Search)
	schema, _ := json.Marshal(search.InputSchema)
	if strings.Contains(search.Description+string(schema), n.Enable) {
		t.Errorf("call_tool in the search mode mentions %s: %s %s", n.Enable, search.Description, schema)
	}
	groups := meta.CallToolFor(n, expose.Groups)
	if schema, _ := json.Marshal(groups.InputSchema); !strings.Contains(string(schema), n.Enable) || strings.Contains(groups.Description, n.Describe) {
		t.Errorf("call_tool in the groups mode: %s %s", groups.Description, schema)
	}
	if d := meta.FindTool(n).Description; strings.Contains(d, n.Describe) || strings.Contains(d, n.Enable) {
		t.Errorf("find_tools, offered in both modes, names a meta-tool one of them lacks: %s", d)
	}
	e, v := setup(t, expose.Groups)
	res, err := meta.NewDiscovery(n, e, nil).Find(meta.FindArgs{Query: "Branches"}, v.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Next, n.Describe) || strings.Contains(res.Next, n.Guidance) || !strings.Contains(res.Next, n.Enable) {
		t.Errorf("find_tools' next step in the groups mode: %s", res.Next)
	}
}

// TestFindNextStep checks that find_tools always tells the model how to go
// on: how to call a hit, and how to recover when no hit fits (the ranking
// matches words, the model can match meaning by browsing groups).
func TestFindNextStep(t *testing.T) {
	e, v := setup(t, expose.Search)
	d := meta.NewDiscovery(meta.DefaultNames(), e, nil)
	tests := []struct {
		query string
		want  []string
	}{
		{"Branches", []string{`describe_tools {"names": [...]}`, `call_tool {"name"`, `"group": ...`, `guidance {"topic": "groups"}`}},
		{"zzzz qqqq", []string{"Nothing matched", "as a tool would be named", `"merge pull request github"`, `"queries"`, `guidance {"topic": "groups"}`}},
	}
	for _, tt := range tests {
		res, err := d.Find(meta.FindArgs{Query: tt.query}, v.Snapshot())
		if err != nil {
			t.Fatalf("%q: %v", tt.query, err)
		}
		if (len(res.Tools) == 0) != strings.Contains(tt.query, "zzzz") {
			t.Errorf("%q found %d tools", tt.query, len(res.Tools))
		}
		for _, w := range tt.want {
			if !strings.Contains(res.Next, w) {
				t.Errorf("%q: next lacks %q:\n%s", tt.query, w, res.Next)
			}
		}
	}
}

// phrasingsCatalog has realistic descriptions and a child group whose name
// is not dotted under its parent (as derived sub-groups may be named).
func phrasingsCatalog(t *testing.T) (*meta.Discovery, *view.View) {
	t.Helper()
	tool := func(id, desc string) *catalog.Tool {
		tl := catalogtest.Tool(id)
		tl.Def.Description = desc
		return tl
	}
	cat := catalogtest.Build(t, catalog.Spec{
		Tools: []*catalog.Tool{
			tool("merge_pull_request", "Merge a pull request"),
			tool("create_issue", "Create a new issue in a repository"),
			tool("list_issues", "List the issues of a repository"),
			tool("delete_file", "Delete a file"),
			tool("read_file", "Read the contents of a file"),
		},
		Groups: []catalog.GroupSpec{
			{ID: "github", Description: "GitHub", Members: catalog.Members{Tools: []catalog.ToolID{"merge_pull_request"}}},
			{ID: "tracker", Parent: "github", Description: "Issue tracking", Members: catalog.Members{Tools: []catalog.ToolID{"create_issue", "list_issues"}}},
			{ID: "files", Description: "Local files", Members: catalog.Members{Tools: []catalog.ToolID{"delete_file", "read_file"}}},
		},
	})
	space, err := view.NewSpace(cat, nil)
	if err != nil {
		t.Fatal(err)
	}
	e, err := expose.Build(space, &expose.Options{Mode: expose.Search})
	if err != nil {
		t.Fatal(err)
	}
	return meta.NewDiscovery(meta.DefaultNames(), e, nil), space.New()
}

// TestFindSeveralPhrasings checks find_tools' queries: ranked with query in
// one call, alone when query is blank, within a group and its children,
// and refused beyond three phrasings with the fix.
func TestFindSeveralPhrasings(t *testing.T) {
	d, v := phrasingsCatalog(t)
	tests := []struct {
		name  string
		args  meta.FindArgs
		first string
		want  []string // found among the tools
		only  []string // when set, every tool found is one of these
		err   string
	}{
		{name: "the second phrasing finds what the first misses", args: meta.FindArgs{Query: "merge pull request", Queries: []string{"remove file"}},
			first: "merge_pull_request", want: []string{"delete_file"}},
		{name: "queries alone", args: meta.FindArgs{Queries: []string{"delete file", "erase a file"}}, first: "delete_file"},
		{name: "repeated phrasings count once", args: meta.FindArgs{Query: "read file", Queries: []string{"Read File", " read file ", "", "read file"}}, first: "read_file"},
		{name: "within a group and its child", args: meta.FindArgs{Query: "create issue", Queries: []string{"delete file", "merge pull request"}, Group: "github"},
			first: "create_issue", want: []string{"merge_pull_request"}, only: []string{"merge_pull_request", "create_issue", "list_issues"}},
		{name: "within the child", args: meta.FindArgs{Query: "merge pull request", Queries: []string{"list issues"}, Group: "tracker"},
			first: "list_issues", only: []string{"create_issue", "list_issues"}},
		{name: "four phrasings", args: meta.FindArgs{Query: "a", Queries: []string{"b", "c", "d"}}, err: "find_tools ranks up to 3 phrasings of one need; this call has 4"},
		{name: "nothing to search", args: meta.FindArgs{Query: " ", Queries: []string{""}}, err: "find_tools needs a query"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := d.Find(tt.args, v.Snapshot())
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, f := range res.Tools {
				names = append(names, f.Name)
				if tt.only != nil && !slices.Contains(tt.only, f.Name) {
					t.Errorf("%s is outside the group", f.Name)
				}
			}
			if len(names) == 0 || names[0] != tt.first {
				t.Errorf("found %v, want %s first", names, tt.first)
			}
			for _, w := range tt.want {
				if !slices.Contains(names, w) {
					t.Errorf("found %v, want %s among them", names, w)
				}
			}
		})
	}
	// One phrasing given twice ranks as that phrasing alone: same tools, same scores.
	alone, err := d.Find(meta.FindArgs{Query: "read file"}, v.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	twice, err := d.Find(meta.FindArgs{Query: "read file", Queries: []string{"read file"}}, v.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	if a, b := fmt.Sprint(alone.Tools), fmt.Sprint(twice.Tools); a != b {
		t.Errorf("a repeated phrasing changed the result:\n%s\n%s", a, b)
	}
}

// TestFindSchemaAdmitsWhatFindAccepts keeps find_tools' schema and Find in
// step: every call the schema admits (query plus the most queries) is
// ranked, and the description says how many queries it takes.
func TestFindSchemaAdmitsWhatFindAccepts(t *testing.T) {
	var schema struct {
		Properties struct {
			Queries struct {
				MaxItems    int    `json:"maxItems"`
				Description string `json:"description"`
			} `json:"queries"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(meta.FindTool(meta.DefaultNames()).InputSchema.(json.RawMessage), &schema); err != nil {
		t.Fatal(err)
	}
	q := schema.Properties.Queries
	if q.MaxItems+1 != search.MaxPhrasings {
		t.Errorf("queries admits %d items beside query, but find_tools ranks %d phrasings in all", q.MaxItems, search.MaxPhrasings)
	}
	if !strings.Contains(q.Description, fmt.Sprint(q.MaxItems)) {
		t.Errorf("queries' description %q does not say it takes up to %d", q.Description, q.MaxItems)
	}
	d, v := phrasingsCatalog(t)
	queries := []string{"delete file", "list issues", "create issue", "read file"}[:q.MaxItems]
	if _, err := d.Find(meta.FindArgs{Query: "merge pull request", Queries: queries}, v.Snapshot()); err != nil {
		t.Errorf("a call the schema admits is refused: %v", err)
	}
}

// TestFindCallsAreTheSignatures: the call signatures find_tools caches are
// those of the wires the hits route to, in every mode, the first time and
// again, and in a Discovery made Over another mode's exposure that shares
// the cache.
func TestFindCallsAreTheSignatures(t *testing.T) {
	space, err := view.NewSpace(catalogtest.Shared(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	search, err := expose.Build(space, &expose.Options{Mode: expose.Search})
	if err != nil {
		t.Fatal(err)
	}
	first := meta.NewDiscovery(meta.DefaultNames(), search, nil)
	for _, mode := range []expose.Mode{expose.Search, expose.Groups, expose.Flat, expose.Grouped} {
		t.Run(string(mode), func(t *testing.T) {
			e, err := expose.Build(space, &expose.Options{Mode: mode, Share: search})
			if err != nil {
				t.Fatal(err)
			}
			d := first.Over(e, nil)
			for round := range 2 {
				for _, q := range []string{"create issue github", "read a file", "list directory", "send a slack message", "query the database"} {
					res, err := d.Find(meta.FindArgs{Query: q, Limit: 10}, space.New().Snapshot())
					if err != nil {
						t.Fatal(err)
					}
					if len(res.Tools) == 0 {
						t.Fatalf("%q found nothing", q)
					}
					for _, f := range res.Tools {
						w, ok := e.Route(f.Name)
						if !ok {
							t.Fatalf("%q: %s routes nowhere", q, f.Name)
						}
						if want := meta.Signature(w); f.Call != want {
							t.Errorf("round %d, %q: %s's call is %q, want %q", round, q, f.Name, f.Call, want)
						}
					}
				}
			}
		})
	}
}
