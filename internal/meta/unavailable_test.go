package meta_test

import (
	"strings"
	"testing"
	"time"

	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/meta"
	"github.com/toolfold/toolfold/internal/view"
)

// enable_tools of a group whose server failed to start does not answer
// success with no tools and no error: it says the server failed, why,
// and when toolfold tries again; find_tools and guidance say so too.
func TestUnavailableServerIsExplained(t *testing.T) {
	why := `upstream "npx" exited at start (exit status 1): npm error code E404`
	cat := catalogtest.Build(t, catalog.Spec{
		Tools: []*catalog.Tool{catalogtest.Tool("a")},
		Groups: []catalog.GroupSpec{
			{ID: "npx", Description: "Package tools", Members: catalog.Members{Sources: []string{"npx"}}},
			{ID: "local", Description: "Local tools", Members: catalog.Members{Tools: []catalog.ToolID{"a"}}},
		},
		UnavailableSources: map[string]string{"npx": why},
		UnavailableRetry:   map[string]time.Time{"npx": time.Now().Add(time.Hour)},
	})
	space, err := view.NewSpace(cat, nil)
	if err != nil {
		t.Fatal(err)
	}
	e, err := expose.Build(space, &expose.Options{Mode: expose.Groups})
	if err != nil {
		t.Fatal(err)
	}
	note := `the MCP server "npx" failed to start: ` + why + "; toolfold tries to start it again in "

	res, _ := meta.DoEnable(meta.DefaultNames(), space.New(), e, meta.GroupsArgs{Groups: meta.StringList{"npx", "local"}})
	if len(res.Errors) != 1 || res.Errors[0].Group != "npx" || res.Errors[0].Reason != meta.SourceUnavailable || !strings.Contains(res.Errors[0].Message, note) {
		t.Errorf("enable_tools errors: %+v", res.Errors)
	}
	res, _ = meta.DoDescribeGroups(meta.DefaultNames(), space.New(), e, meta.GroupsArgs{Groups: meta.StringList{"npx"}})
	if len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Message, note) {
		t.Errorf("enable_tools without a view, errors: %+v", res.Errors)
	}

	d := meta.NewDiscovery(meta.DefaultNames(), e, nil)
	found, err := d.Find(meta.FindArgs{Query: "package"}, space.New().Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	if len(found.Unavailable) != 1 || !strings.HasPrefix(found.Unavailable[0], note) {
		t.Errorf("find_tools unavailable: %q", found.Unavailable)
	}
	if !strings.Contains(found.Text(), "Missing: "+note) {
		t.Errorf("find_tools' text does not say what is missing:\n%s", found.Text())
	}
	found, _ = d.Find(meta.FindArgs{Query: "package", Group: "local"}, space.New().Snapshot())
	if len(found.Unavailable) != 0 {
		t.Errorf("find_tools within a group that takes nothing of npx: %q", found.Unavailable)
	}
	g, err := d.Guidance(meta.GuidanceArgs{}, space.New().Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(g.Markdown, "## Missing tools\n\n- "+note) {
		t.Errorf("guidance overview:\n%s", g.Markdown)
	}
}
