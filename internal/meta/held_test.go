package meta_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/meta"
	"github.com/toolfold/toolfold/internal/view"
)

// A search for a tool toolfold holds says it is held and how an operator
// approves it, so that an agent does not tell its user no such tool
// exists; a search that does not name it, or one within a group, does not
// mention it. Found in a blind evaluation: with slack_post_message held,
// the agent told its user Slack had no tool to post a message.
func TestFindToolsNamesHeldTools(t *testing.T) {
	const note = "toolfold holds tool \"slack_post_message\" of server \"slack\": its description changed since it was pinned. An operator reviews it with `toolfold pins` and approves it with `toolfold pins approve slack slack_post_message`."
	cat := catalogtest.Build(t, catalog.Spec{
		Tools:  []*catalog.Tool{catalogtest.Tool("slack__slack_add_reaction")},
		Groups: []catalog.GroupSpec{{ID: "slack", Members: catalog.Members{Tools: []catalog.ToolID{"slack__slack_add_reaction"}}}},
		Held:   map[catalog.ToolID]string{"slack__slack_post_message": note},
	})
	space, err := view.NewSpace(cat, nil)
	if err != nil {
		t.Fatal(err)
	}
	e, err := expose.Build(space, &expose.Options{Mode: expose.Search})
	if err != nil {
		t.Fatal(err)
	}
	d := meta.NewDiscovery(meta.DefaultNames(), e, nil)
	for _, c := range []struct {
		args meta.FindArgs
		want []string
	}{
		{meta.FindArgs{Query: "post message slack channel"}, []string{note}},
		{meta.FindArgs{Query: "send a chat", Queries: []string{"post message"}}, []string{note}},
		{meta.FindArgs{Query: "add reaction"}, nil},
		{meta.FindArgs{Query: "slack"}, []string{note}},
		{meta.FindArgs{Query: "post message slack", Group: "slack"}, nil},
	} {
		res, err := d.Find(c.args, space.New().Snapshot())
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.Held, c.want) {
			t.Errorf("%+v: held %q, want %q", c.args, res.Held, c.want)
		}
		if text := res.Text(); (len(c.want) > 0) != strings.Contains(text, "Held: "+note) {
			t.Errorf("%+v: the text a model reads:\n%s", c.args, text)
		}
	}
}
