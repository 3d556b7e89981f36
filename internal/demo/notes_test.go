package demo

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold"
)

func TestNotes(t *testing.T) {
	c := newClient(t)

	put := callOK[putNoteOutput](c, "put_note", map[string]any{"key": "todo", "text": "Buy milk and call the bank about the budget.", "tags": []string{"home", "urgent", "home"}})
	if !put.Created || put.Notes != 1 || !put.UpdatedAt.Equal(fixedNow) {
		t.Errorf("put_note = %+v", put)
	}
	callOK[putNoteOutput](c, "put_note", map[string]any{"key": "meeting/2024-05-01", "text": "Budget review: budget is fine.", "tags": []string{"work"}})
	callOK[putNoteOutput](c, "put_note", map[string]any{"key": "meeting/2024-05-08", "text": "Plan the offsite."})

	got := callOK[note](c, "get_note", map[string]any{"key": "todo"})
	if got.Text != "Buy milk and call the bank about the budget." || !slices.Equal(got.Tags, []string{"home", "urgent"}) || !got.CreatedAt.Equal(fixedNow) {
		t.Errorf("get_note = %+v", got)
	}

	replaced := callOK[putNoteOutput](c, "put_note", map[string]any{"key": "todo", "text": "Buy milk."})
	if replaced.Created || replaced.Notes != 3 {
		t.Errorf("replacing a note = %+v", replaced)
	}
	if got := callOK[note](c, "get_note", map[string]any{"key": "todo"}); got.Text != "Buy milk." || len(got.Tags) != 0 {
		t.Errorf("after replacing: %+v", got)
	}

	all := callOK[listNotesOutput](c, "list_notes", map[string]any{})
	var keys []string
	for _, n := range all.Notes {
		keys = append(keys, n.Key)
	}
	if !slices.Equal(keys, []string{"meeting/2024-05-01", "meeting/2024-05-08", "todo"}) || all.Total != 3 {
		t.Errorf("list_notes keys = %v (%+v)", keys, all)
	}
	if p := all.Notes[0]; p.Preview != "Budget review: budget is fine." || p.Bytes != 30 {
		t.Errorf("summary = %+v", p)
	}
	meetings := callOK[listNotesOutput](c, "list_notes", map[string]any{"prefix": "meeting/"})
	work := callOK[listNotesOutput](c, "list_notes", map[string]any{"tag": "work"})
	if meetings.Count != 2 || work.Count != 1 || work.Notes[0].Key != "meeting/2024-05-01" {
		t.Errorf("filtered lists: %+v / %+v", meetings, work)
	}

	found := callOK[searchNotesOutput](c, "search_notes", map[string]any{"query": "BUDGET"})
	if found.Count != 1 || found.Matches[0].Key != "meeting/2024-05-01" || found.Matches[0].Score != 2 ||
		found.Matches[0].Snippet != "Budget review: budget is fine." {
		t.Errorf("search_notes(budget) = %+v", found)
	}
	byKey := callOK[searchNotesOutput](c, "search_notes", map[string]any{"query": "meeting plan"})
	if byKey.Count != 1 || byKey.Matches[0].Key != "meeting/2024-05-08" {
		t.Errorf("search_notes(meeting plan) = %+v", byKey)
	}
	if none := callOK[searchNotesOutput](c, "search_notes", map[string]any{"query": "zebra"}); none.Count != 0 {
		t.Errorf("search_notes(zebra) = %+v", none)
	}

	del := callOK[deleteNoteOutput](c, "delete_note", map[string]any{"key": "todo"})
	if !del.Deleted || del.Notes != 2 {
		t.Errorf("delete_note = %+v", del)
	}
	c.callErr("get_note", map[string]any{"key": "todo"}, `there is no note "todo"`)
	c.callErr("get_note", map[string]any{"key": "meeting/2024-05-0"}, "did you mean")
	c.callErr("delete_note", map[string]any{"key": "todo"}, "there is no note")
	c.callErr("put_note", map[string]any{"key": "  ", "text": "x"}, "key is empty")
	c.callErr("put_note", map[string]any{"key": strings.Repeat("k", 201), "text": "x"}, "keep it to 200")
	c.callErr("search_notes", map[string]any{"query": " "}, "query is empty")
}

func TestSnippet(t *testing.T) {
	long := strings.Repeat("lorem ipsum ", 20) + "NEEDLE in the haystack " + strings.Repeat("dolor sit ", 20)
	s := snippet(long, []string{"needle"})
	if !strings.HasPrefix(s, "…") || !strings.HasSuffix(s, "…") || !strings.Contains(s, "NEEDLE in the haystack") {
		t.Errorf("snippet = %q", s)
	}
}

// TestNotesPerServer checks that notes belong to one server: two servers
// never share them, while two sessions of one server do.
func TestNotesPerServer(t *testing.T) {
	newServer := func() *toolfold.Server {
		return New(&Options{Server: toolfold.Options{Mode: toolfold.ModeFlat}, SandboxDir: t.TempDir(), Clock: func() time.Time { return fixedNow }})
	}
	connect := func(srv *toolfold.Server) *client {
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
	one := newServer()
	a, b := connect(one), connect(one)
	other := connect(newServer())

	callOK[putNoteOutput](a, "put_note", map[string]any{"key": "shared", "text": "hello"})
	if got := callOK[note](b, "get_note", map[string]any{"key": "shared"}); got.Text != "hello" {
		t.Errorf("a second session of the same server reads %q", got.Text)
	}
	other.callErr("get_note", map[string]any{"key": "shared"}, "notebook is empty")
}

// TestNotesConcurrent writes from many goroutines at once; run with -race.
func TestNotesConcurrent(t *testing.T) {
	c := newClient(t)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			// Not callOK: t.Fatal must not be called off the test goroutine.
			key := string(rune('a' + i))
			for _, call := range []struct {
				name string
				args map[string]any
			}{
				{"put_note", map[string]any{"key": key, "text": key}},
				{"list_notes", map[string]any{}},
				{"search_notes", map[string]any{"query": key}},
			} {
				res, err := c.session.CallTool(t.Context(), &mcp.CallToolParams{Name: call.name, Arguments: call.args})
				if err != nil || res.IsError {
					t.Errorf("%s(%v): %v %v", call.name, call.args, err, res)
				}
			}
		})
	}
	wg.Wait()
	if got := callOK[listNotesOutput](c, "list_notes", map[string]any{}); got.Total != 8 {
		t.Errorf("%d notes after 8 concurrent puts", got.Total)
	}
}
