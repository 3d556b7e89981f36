package assemble

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/upstream/groupsfixture"
)

// A ${VAR} value an upstream quotes back in its tools (descriptions,
// titles, schemas), its groups' descriptions and its skills' bodies never
// reaches a client: the catalog's groups, tools/list, the meta-tools'
// answers and the skills' SKILL.md resources all show it masked.
func TestQuotedSecretsAreMaskedEverywhere(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an upstream process")
	}
	const secret = "tok-quoted-back-90210"
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	doc := map[string]any{
		"mcpServers": map[string]any{"fx": map[string]any{"command": self, "env": map[string]string{
			groupsFixtureEnv: "1", groupsfixture.ModeEnv: "grouping,skills",
			groupsfixture.QuoteEnv: "${FX_TOKEN}"}}},
	}
	raw, _ := json.Marshal(doc)
	cfg, diags := config.Parse("toolfold.json", raw, config.Options{LookupEnv: config.MapEnv(map[string]string{"FX_TOKEN": secret})})
	if diags.HasErrors() {
		t.Fatal(diags.String())
	}
	ctx := context.Background()
	p, err := FromConfig(ctx, cfg, Switches{}, Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Upstreams.Close()
	for name, err := range p.Upstreams.Discover(ctx, 0) {
		if err != nil {
			t.Fatalf("discovering %s: %v", name, err)
		}
	}
	b, err := p.Build()
	if err != nil {
		t.Fatal(err)
	}
	var seen []string // every text a client could read, by where it came from
	check := func(where string, v any) {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		if strings.Contains(text, secret) {
			t.Errorf("%s shows the secret: %s", where, text)
		}
		if strings.Contains(text, "***") {
			seen = append(seen, where)
		}
	}
	for _, g := range b.Catalog.Groups() {
		check("catalog group "+string(g.ID), map[string]string{"d": g.Description, "i": g.Instructions})
	}
	h, err := b.Gateway.LimitedHandler(nil, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "x"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		check("tools/list "+tool.Name, tool)
		// The meta-tools answer from the catalog; ask each about the
		// fixture's tools with what its schema names.
		if strings.Contains(tool.Name, "find") || strings.Contains(tool.Name, "describe") {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool.Name, Arguments: metaArgs(tool)})
			if err != nil {
				t.Fatal(err)
			}
			check(tool.Name, res)
		}
	}
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		check("resources/list "+r.URI, r)
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.URI})
		if err != nil {
			t.Fatal(err)
		}
		check(r.URI, res)
	}
	for _, want := range []string{"catalog group fx.issues", "skill://"} {
		if !slicesContainsPrefix(seen, want) {
			t.Errorf("no masked quote seen in %q: the test would prove nothing there (seen: %q)", want, seen)
		}
	}
}

// metaArgs fills a meta-tool's string and array properties with what
// finds or names the fixture's tools.
func metaArgs(tool *mcp.Tool) map[string]any {
	args := map[string]any{}
	var schema struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	data, _ := json.Marshal(tool.InputSchema)
	_ = json.Unmarshal(data, &schema)
	for name, p := range schema.Properties {
		switch p.Type {
		case "string":
			args[name] = "issue"
		case "array":
			args[name] = []string{"fx__create_issue", "fx__search"}
		}
	}
	return args
}

func slicesContainsPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}
