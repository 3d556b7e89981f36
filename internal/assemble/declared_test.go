package assemble

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/trust/hostilefixture"
	"github.com/toolfold/toolfold/internal/upstream/groupsfixture"
)

// groupsFixtureEnv makes this test binary serve the groups fixture over
// stdio instead of running tests, so the tests below fold a real upstream
// process with no build step.
const groupsFixtureEnv = "TOOLFOLD_GROUPS_FIXTURE"

func TestMain(m *testing.M) {
	if os.Getenv(silentFixtureEnv) != "" {
		// A server that never answers its initialize: it stays starting
		// until its client closes its stdin.
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	if os.Getenv(hostileFixtureEnv) != "" {
		if err := hostilefixture.Main(); err != nil {
			fmt.Fprintln(os.Stderr, "hostile fixture:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if os.Getenv(groupsFixtureEnv) != "" {
		mode, err := groupsfixture.ParseMode(os.Getenv(groupsfixture.ModeEnv))
		if err != nil {
			fmt.Fprintln(os.Stderr, "groups fixture:", err)
			os.Exit(2)
		}
		o := groupsfixture.Options{Mode: mode, Instructions: os.Getenv(groupsfixture.InstructionsEnv), Quote: os.Getenv(groupsfixture.QuoteEnv)}
		if v := os.Getenv(groupsfixture.IntrudeEnv); v != "" {
			o.Intrude = strings.Split(v, ",")
		}
		s := groupsfixture.NewWith(o)
		if err := s.Run(context.Background(), s.Transport(&mcp.StdioTransport{})); err != nil {
			fmt.Fprintln(os.Stderr, "groups fixture:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// catalogOutline renders a catalog's groups, one per line, indented by
// depth: "id (declared by) [tools] instructions".
func catalogOutline(cat *catalog.Catalog) string {
	var b strings.Builder
	for _, g := range cat.Groups() {
		var tools []string
		for _, t := range g.Tools {
			tools = append(tools, string(t.ID))
		}
		fmt.Fprintf(&b, "%s%s %q by=%q [%s]", strings.Repeat("  ", g.Depth), g.ID, g.Description, g.DeclaredBy, strings.Join(tools, " "))
		if g.Instructions != "" {
			fmt.Fprintf(&b, " %q", g.Instructions)
		}
		if g.Default != catalog.Available {
			fmt.Fprintf(&b, " (%s)", g.Default)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestDeclaredGroupsBecomeChildGroups folds the fixture, which serves the
// groups extension, and checks where its groups land in the catalog.
func TestDeclaredGroupsBecomeChildGroups(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	server := map[string]any{"command": self, "env": map[string]string{groupsFixtureEnv: "1"}}
	for _, tc := range []struct {
		name     string
		server   map[string]any
		groups   map[string]any
		switches Switches
		want     string
	}{{
		name: "under the server's group",
		want: `fx "Tools of the fx MCP server" by="" [fx__echo fx__open_wiki fx__read_page]
  fx.issues "Issue tracking" by="fx" [fx__create_issue fx__list_issues fx__search]
    fx.issues.labels "Issue labels" by="fx" [fx__add_label]
  fx.repos "Repositories" by="fx" [fx__list_repos fx__search]
`,
	}, {
		name:   "the config's words win",
		groups: map[string]any{"fx.repos": map[string]any{"description": "Code repositories", "instructions": "Mind the default branch."}},
		want: `fx "Tools of the fx MCP server" by="" [fx__echo fx__open_wiki fx__read_page]
  fx.issues "Issue tracking" by="fx" [fx__create_issue fx__list_issues fx__search]
    fx.issues.labels "Issue labels" by="fx" [fx__add_label]
  fx.repos "Code repositories" by="fx" [fx__list_repos fx__search] "Mind the default branch."
`,
	}, {
		// Declared in the config ({} will do), a group of the upstream can
		// be named by switches, as a group of tools' _meta can.
		name:     "declared in the config to be switched",
		groups:   map[string]any{"fx.issues": map[string]any{}},
		switches: Switches{Enable: []string{"fx.issues"}},
		// Enabling a child enables its parent, as for any group.
		want: `fx "Tools of the fx MCP server" by="" [fx__echo fx__open_wiki fx__read_page] (enabled)
  fx.issues "Issue tracking" by="fx" [fx__create_issue fx__list_issues fx__search] (enabled)
    fx.issues.labels "Issue labels" by="fx" [fx__add_label]
  fx.repos "Repositories" by="fx" [fx__list_repos fx__search]
`,
	}, {
		name:   "a group that lists the server keeps all its tools",
		groups: map[string]any{"fx": map[string]any{"servers": []string{"fx"}}},
		want: `fx "Tools of the fx MCP server" by="" [fx__add_label fx__create_issue fx__echo fx__list_issues fx__list_repos fx__open_wiki fx__read_page fx__search]
  fx.issues "Issue tracking" by="fx" [fx__create_issue fx__list_issues fx__search]
    fx.issues.labels "Issue labels" by="fx" [fx__add_label]
  fx.repos "Repositories" by="fx" [fx__list_repos fx__search]
`,
	}, {
		// The server's initialize instructions are its group's, with the
		// secrets of its config masked; the config's own words would win.
		name: "the server's instructions are its group's",
		server: map[string]any{"env": map[string]string{
			groupsFixtureEnv:              "1",
			groupsfixture.InstructionsEnv: "Search before you create. Signed in with sup3r-s3cret-t0ken.",
			"FX_API_TOKEN":                "sup3r-s3cret-t0ken",
		}},
		want: `fx "Tools of the fx MCP server" by="" [fx__echo fx__open_wiki fx__read_page] "Search before you create. Signed in with ***."
  fx.issues "Issue tracking" by="fx" [fx__create_issue fx__list_issues fx__search]
    fx.issues.labels "Issue labels" by="fx" [fx__add_label]
  fx.repos "Repositories" by="fx" [fx__list_repos fx__search]
`,
	}, {
		name:   "the config's instructions win over the server's",
		server: map[string]any{"env": map[string]string{groupsFixtureEnv: "1", groupsfixture.InstructionsEnv: "Search before you create."}},
		groups: map[string]any{"fx": map[string]any{"instructions": "Ask before creating anything."}},
		want: `fx "Tools of the fx MCP server" by="" [fx__echo fx__open_wiki fx__read_page] "Ask before creating anything."
  fx.issues "Issue tracking" by="fx" [fx__create_issue fx__list_issues fx__search]
    fx.issues.labels "Issue labels" by="fx" [fx__add_label]
  fx.repos "Repositories" by="fx" [fx__list_repos fx__search]
`,
	}, {
		// A skill's tools, from its frontmatter, make a child group whose
		// instructions are the skill's body; one without tools is a group
		// with instructions only.
		name:   "skills become child groups",
		server: map[string]any{"env": map[string]string{groupsFixtureEnv: "1", groupsfixture.ModeEnv: "skills"}},
		want: `fx "Tools of the fx MCP server" by="" [fx__echo fx__open_wiki fx__read_page]
  fx.issues "Issue tracking" by="fx" [fx__create_issue fx__list_issues fx__search] "Search before creating an issue."
  fx.labels "Issue labels" by="fx" [fx__add_label] "A label must exist before it is added."
  fx.repos "Repositories" by="fx" [fx__list_repos fx__search] "Prefer the default branch."
  fx.writing "How to write issue text" by="fx" [] "Write short titles. See references/style.md.\n\nThe skill's other files can be read as resources: skill://writing/references/style.md"
`,
	}, {
		name:   "a skill of a group's name gives the group its instructions",
		server: map[string]any{"env": map[string]string{groupsFixtureEnv: "1", groupsfixture.ModeEnv: "grouping,skills"}},
		want: `fx "Tools of the fx MCP server" by="" [fx__echo fx__open_wiki fx__read_page]
  fx.issues "Issue tracking" by="fx" [fx__create_issue fx__list_issues fx__search] "Search before creating an issue."
    fx.issues.labels "Issue labels" by="fx" [fx__add_label] "A label must exist before it is added."
  fx.repos "Repositories" by="fx" [fx__list_repos fx__search] "Prefer the default branch."
  fx.writing "How to write issue text" by="fx" [] "Write short titles. See references/style.md.\n\nThe skill's other files can be read as resources: skill://writing/references/style.md"
`,
	}, {
		name:   "an ungrouped server's groups are top-level",
		server: map[string]any{"group": "", "prefix": ""},
		want: `issues "Issue tracking" by="fx" [create_issue list_issues search]
  issues.labels "Issue labels" by="fx" [add_label]
repos "Repositories" by="fx" [list_repos search]
`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			sc := map[string]any{}
			for k, v := range server {
				sc[k] = v
			}
			for k, v := range tc.server {
				sc[k] = v
			}
			doc := map[string]any{"mcpServers": map[string]any{"fx": sc}}
			if tc.groups != nil {
				doc["groups"] = tc.groups
			}
			raw, _ := json.Marshal(doc)
			cfg := load(t, string(raw))
			p, err := FromConfig(context.Background(), cfg, tc.switches, Options{CacheDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Upstreams.Close()
			for name, err := range p.Upstreams.Discover(context.Background(), 0) {
				if err != nil {
					t.Fatalf("discovering %s: %v", name, err)
				}
			}
			b, err := p.Build()
			if err != nil {
				t.Fatal(err)
			}
			if got := catalogOutline(b.Catalog); got != tc.want {
				t.Errorf("catalog groups:\n%s\nwant:\n%s", got, tc.want)
			}
			for _, w := range b.Warnings {
				t.Errorf("unexpected warning: %s", w)
			}
		})
	}
}
