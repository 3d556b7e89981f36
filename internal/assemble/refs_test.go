package assemble

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/view"
)

// enabledGroups names the groups a view has enabled, sorted.
func enabledGroups(space *view.Space, v *view.View) string {
	var out []string
	groups := space.Catalog().Groups()
	v.Snapshot().Enabled.Each(func(i int) { out = append(out, string(groups[i].ID)) })
	slices.Sort(out)
	return strings.Join(out, ",")
}

// visibleTools names the tools a view shows, sorted.
func visibleTools(space *view.Space, v *view.View) string {
	var out []string
	tools := space.Catalog().Tools()
	v.Snapshot().Tools.Each(func(i int) { out = append(out, string(tools[i].ID)) })
	slices.Sort(out)
	return strings.Join(out, ",")
}

// An initial group may be a derived one: every new view enables it (and
// the group it was derived from), and shows its tools only.
func TestInitialGroupsNameADerivedGroup(t *testing.T) {
	b := buildCatalog(t, bigCommand(`, "disclosure": {"initialGroups": ["vcs.tag"]}`), nil)
	for range 2 {
		v := b.Space.New()
		if got := enabledGroups(b.Space, v); got != "vcs,vcs.tag" {
			t.Errorf("a new view enables %q, want vcs,vcs.tag", got)
		}
		if got := visibleTools(b.Space, v); got != "vcs__create_tag,vcs__delete_tag,vcs__list_tag,vcs__rename_tag,vcs__show_tag" {
			t.Errorf("a new view shows %q, want the five tools of vcs.tag", got)
		}
	}
}

// A token limited to a derived group reaches exactly that group's tools.
func TestTokenLimitedToADerivedGroup(t *testing.T) {
	src := bigCommand(`, "disclosure": {"mode": "flat"}, "http": {"auth": {"tokens": [{"token": "t", "groups": ["vcs.remote"]}]}}`)
	b := buildCatalog(t, src, nil)
	h, err := b.Gateway.LimitedHandler([]string{"vcs.remote"}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "x"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if got := strings.Join(names, ","); got != "vcs__create_remote,vcs__delete_remote,vcs__list_remote,vcs__rename_remote,vcs__show_remote" {
		t.Errorf("the token lists %q, want the five tools of vcs.remote", got)
	}
}

// A name nothing derives is refused when the catalog is complete, located
// in the config and with the nearest group that exists.
func TestMisnamedDerivedGroupsAreRefused(t *testing.T) {
	tests := []struct {
		name, extra string
		env         map[string]string
		want        []string
	}{
		{name: "initial group", extra: `, "disclosure": {"initialGroups": ["vcs", "vcs.tags"]}`,
			want: []string{`toolfold.json:1: disclosure.initialGroups[1]: group "vcs.tags" does not exist: no group of that name was derived from the tools of "vcs"`, `did you mean "vcs.tag"?`}},
		{name: "token", extra: `, "http": {"auth": {"tokens": [{"token": "t", "groups": ["vcs.branhc"]}]}}`,
			want: []string{`http.auth.tokens[0].groups[0]: group "vcs.branhc" does not exist`, `did you mean "vcs.branch"?`}},
		{name: "under a derived group", extra: `, "http": {"auth": {"tokens": [{"token": "t", "groups": ["vcs.tag.x"]}]}}`,
			want: []string{`group "vcs.tag.x" does not exist: no group of that name was derived from the tools of "vcs.tag"`}},
		{name: "excluded", extra: `, "disclosure": {"initialGroups": ["vcs.stash"]}`, env: map[string]string{"MCP_GROUP_VCS_STASH": "false"},
			want: []string{`disclosure.initialGroups[0]: group "vcs.stash" is not served: it is excluded`, "new views cannot enable it"}},
		{name: "under an excluded group", extra: `, "http": {"auth": {"tokens": [{"token": "t", "groups": ["vcs.tag"]}]}}`, env: map[string]string{"MCP_GROUP_VCS": "false"},
			want: []string{`group "vcs.tag" is not served: its group "vcs" is excluded`, "a token limited to it would reach none of its tools"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := FromConfig(context.Background(), load(t, bigCommand(tt.extra)), Switches{}, Options{LookupEnv: config.MapEnv(tt.env)})
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Build()
			var cerr *config.Error
			if !errors.As(err, &cerr) || len(cerr.Problems) != 1 {
				t.Fatalf("want one config problem, got %v", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the problem does not say %q:\n%v", w, err)
				}
			}
		})
	}
}

// lines is a log handler that hands every message to a channel.
type lines struct {
	mu  sync.Mutex
	out chan string
	all bytes.Buffer
}

func (l *lines) Enabled(context.Context, slog.Level) bool { return true }
func (l *lines) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *lines) WithGroup(string) slog.Handler            { return l }
func (l *lines) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.all.WriteString(r.Message + "\n")
	l.mu.Unlock()
	select {
	case l.out <- r.Message:
	default:
	}
	return nil
}

// Groups an upstream declares are named like derived ones: while the
// server starts, names under its group wait for its tools; when they
// arrive, a name it does not declare is a warning with the nearest group,
// and the initial group it does declare is enabled in new views.
func TestNamesUnderAStartingServerAreCheckedWhenItsToolsArrive(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	quoted, _ := json.Marshal(self)
	src := `{"mcpServers": {"fx": {"command": ` + string(quoted) + `, "env": {"` + groupsFixtureEnv + `": "1"}}},
		"disclosure": {"initialGroups": ["fx.issues"]},
		"http": {"auth": {"tokens": [{"token": "t", "groups": ["fx.issuez"]}]}}}`
	log := &lines{out: make(chan string, 64)}
	p, err := FromConfig(context.Background(), load(t, src), Switches{}, Options{CacheDir: t.TempDir(), Logger: slog.New(log)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Upstreams.Close()
	b, err := p.Build()
	if err != nil {
		t.Fatalf("names under a server still starting must wait for its tools: %v", err)
	}
	if got := enabledGroups(b.Space, b.Space.New()); got != "" {
		t.Errorf("before fx's tools are known a new view enables %q", got)
	}
	p.Follow(b) // starts fx; its tools trigger a rebuild
	deadline := time.After(30 * time.Second)
	for {
		var msg string
		select {
		case msg = <-log.out:
		case <-deadline:
			log.mu.Lock()
			defer log.mu.Unlock()
			t.Fatalf("no warning about fx.issuez came; the log:\n%s", log.all.String())
		}
		if strings.Contains(msg, `"fx.issuez"`) {
			for _, w := range []string{"http.auth.tokens[0].groups[0]", `did you mean "fx.issues"?`} {
				if !strings.Contains(msg, w) {
					t.Errorf("the warning does not say %q: %s", w, msg)
				}
			}
			break
		}
	}
	space, _, warnings, err := p.space(false)
	if err != nil {
		t.Fatal(err)
	}
	if got := enabledGroups(space, space.New()); got != "fx,fx.issues" {
		t.Errorf("once fx's tools are known a new view enables %q, want fx,fx.issues", got)
	}
	if !slices.ContainsFunc(warnings, func(w string) bool { return strings.Contains(w, `"fx.issuez"`) }) {
		t.Errorf("every rebuild finds the misnamed group again (Follow tells it once): %v", warnings)
	}
	if _, ok := space.Catalog().Group(catalog.GroupID("fx.issues")); !ok {
		t.Error("fx.issues is missing")
	}
}
