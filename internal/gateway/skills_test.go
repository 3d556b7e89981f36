package gateway_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
)

// The skills extension's shapes, as a client reads them.
type (
	skillListParams struct {
		mcp.ParamsBase
		Cursor string `json:"cursor,omitempty"`
	}
	skillEntry struct {
		URI         string         `json:"uri"`
		Frontmatter map[string]any `json:"frontmatter"`
		Resources   []struct {
			URI    string `json:"uri"`
			Digest string `json:"digest"`
			Size   int    `json:"size"`
		} `json:"resources"`
	}
	skillListResult struct {
		mcp.ResultBase
		Skills     []skillEntry `json:"skills"`
		NextCursor string       `json:"nextCursor,omitempty"`
		TTLMs      int          `json:"ttlMs"`
		CacheScope string       `json:"cacheScope"`
	}
	skillGetParams struct {
		mcp.ParamsBase
		URI string `json:"uri"`
	}
	skillGetResult struct {
		mcp.ResultBase
		Skill skillEntry `json:"skill"`
	}
)

// skillsClient connects a client that declares the given extensions.
func skillsClient(t *testing.T, g *gateway.Gateway, protocol string, extensions ...string) *client {
	t.Helper()
	caps := &mcp.ClientCapabilities{Extensions: map[string]any{}}
	grouping := false
	for _, e := range extensions {
		caps.Extensions[e] = map[string]any{}
		grouping = grouping || e == "io.modelcontextprotocol/grouping"
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "skills-client"}, &mcp.ClientOptions{Capabilities: caps})
	if err := mcp.AddSendingCustomMethod[*skillListParams, *skillListResult](c, "skills/list"); err != nil {
		t.Fatal(err)
	}
	if err := mcp.AddSendingCustomMethod[*skillGetParams, *skillGetResult](c, "skills/get"); err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := g.Connect(context.Background(), gateway.ClientInfo{Name: "skills-client", ProtocolVersion: protocol, Extension: grouping}, st)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := c.Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &client{ClientSession: cs}
}

// parseFrontmatter reads the frontmatter toolfold writes: "key: value" and
// one level of nesting, values double-quoted.
func parseFrontmatter(t *testing.T, text string) (map[string]any, string) {
	t.Helper()
	rest, ok := strings.CutPrefix(text, "---\n")
	front, body, ok2 := strings.Cut(rest, "\n---\n")
	if !ok || !ok2 {
		t.Fatalf("SKILL.md has no frontmatter:\n%s", text)
	}
	out := map[string]any{}
	var nested map[string]any
	for _, line := range strings.Split(front, "\n") {
		indented := strings.HasPrefix(line, "  ")
		k, v, _ := strings.Cut(strings.TrimSpace(line), ": ")
		k = strings.TrimSuffix(k, ":")
		if uq, err := strconv.Unquote(k); err == nil {
			k = uq
		}
		if v == "" {
			nested = map[string]any{}
			out[k] = nested
			continue
		}
		val, err := strconv.Unquote(v)
		if err != nil {
			t.Fatalf("frontmatter value %q: %v", v, err)
		}
		if indented {
			nested[k] = val
		} else {
			out[k] = val
		}
	}
	return out, body
}

// TestSkills: every described group is a skill; its SKILL.md matches its
// entry's digest, size and frontmatter; every tool its frontmatter names
// is in the caller's tools/list.
func TestSkills(t *testing.T) {
	for _, tc := range []struct {
		mode       expose.Mode
		protocol   string
		extensions []string
		scope      string
	}{
		{expose.Auto, "2026-07-28", []string{"io.modelcontextprotocol/grouping", "io.modelcontextprotocol/skills"}, "private"},
		{expose.Auto, "2025-11-25", []string{"io.modelcontextprotocol/grouping", "io.modelcontextprotocol/skills"}, "private"},
		{expose.Flat, "2026-07-28", []string{"io.modelcontextprotocol/skills"}, "public"},
		{expose.Auto, "2026-07-28", []string{"io.modelcontextprotocol/skills"}, "private"},
	} {
		t.Run(string(tc.mode)+"/"+tc.protocol+"/"+strings.Join(tc.extensions, "+"), func(t *testing.T) {
			g := newGateway(t, gateway.Options{Mode: tc.mode}, nil)
			c := skillsClient(t, g, tc.protocol, tc.extensions...)
			if c.InitializeResult().Capabilities.Extensions["io.modelcontextprotocol/skills"] == nil {
				t.Fatal("the server does not declare the skills extension")
			}
			list, err := mcp.CallCustomMethod[*skillListParams, *skillListResult](context.Background(), c.ClientSession, "skills/list", &skillListParams{})
			if err != nil {
				t.Fatal(err)
			}
			if list.TTLMs <= 0 || list.CacheScope != tc.scope {
				t.Errorf("skills/list carries ttlMs %d cacheScope %q, want %q", list.TTLMs, list.CacheScope, tc.scope)
			}
			var uris []string
			for _, sk := range list.Skills {
				uris = append(uris, sk.URI)
			}
			if got, want := strings.Join(uris, ","), "skill://code-repos-br/SKILL.md,skill://code-repos/SKILL.md,skill://code/SKILL.md,skill://docs/SKILL.md"; got != want {
				t.Errorf("skills = %q, want %q", got, want)
			}
			listed := map[string]bool{}
			tools, err := c.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range tools.Tools {
				listed[tool.Name] = true
			}
			resources, err := c.ListResources(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, sk := range list.Skills {
				read, err := c.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: sk.URI})
				if err != nil {
					t.Fatalf("resources/read %s: %v", sk.URI, err)
				}
				text := read.Contents[0].Text
				sum := sha256.Sum256([]byte(text))
				if len(sk.Resources) != 1 || sk.Resources[0].URI != sk.URI || sk.Resources[0].Size != len(text) || sk.Resources[0].Digest != "sha256:"+hex.EncodeToString(sum[:]) {
					t.Errorf("%s: the entry's resources %+v do not describe its SKILL.md", sk.URI, sk.Resources)
				}
				front, body := parseFrontmatter(t, text)
				a, _ := json.Marshal(front)
				b, _ := json.Marshal(sk.Frontmatter)
				if string(a) != string(b) {
					t.Errorf("%s: frontmatter %s, entry says %s", sk.URI, a, b)
				}
				if !strings.HasSuffix(strings.TrimSuffix(sk.URI, "/SKILL.md"), "/"+front["name"].(string)) {
					t.Errorf("%s: name %q is not the last segment", sk.URI, front["name"])
				}
				meta, _ := front["metadata"].(map[string]any)
				named, _ := meta["io.modelcontextprotocol/tools"].(string)
				for _, tool := range strings.Fields(named) {
					if !listed[tool] {
						t.Errorf("%s names tool %s, which the caller's tools/list lacks", sk.URI, tool)
					}
				}
				if slices.Contains(tc.extensions, "io.modelcontextprotocol/grouping") && named == "" {
					t.Errorf("%s names no tools for a client that lists them all", sk.URI)
				}
				if !strings.Contains(body, "## Tools\n\n- `") {
					t.Errorf("%s has no tool index:\n%s", sk.URI, body)
				}
				got, err := mcp.CallCustomMethod[*skillGetParams, *skillGetResult](context.Background(), c.ClientSession, "skills/get", &skillGetParams{URI: sk.URI})
				if err != nil || got.Skill.Resources[0].Digest != sk.Resources[0].Digest {
					t.Errorf("skills/get %s: %v %+v", sk.URI, err, got)
				}
				if !slices.ContainsFunc(resources.Resources, func(r *mcp.Resource) bool { return r.URI == sk.URI }) {
					t.Errorf("resources/list lacks %s", sk.URI)
				}
			}
			repos := readText(t, c, "skill://code-repos/SKILL.md")
			if !strings.Contains(repos, "Mind the default branch.") {
				t.Errorf("code-repos' skill lacks its instructions:\n%s", repos)
			}
			_, err = mcp.CallCustomMethod[*skillGetParams, *skillGetResult](context.Background(), c.ClientSession, "skills/get", &skillGetParams{URI: "skill://nope/SKILL.md"})
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
				t.Errorf("skills/get of an unknown skill: %v", err)
			}
		})
	}
}

// A client that did not declare the skills extension finds no skills in
// resources/list.
func TestSkillsStayOutOfOtherClientsResources(t *testing.T) {
	g := newGateway(t, gateway.Options{Mode: expose.Auto}, nil)
	c := skillsClient(t, g, "2026-07-28", "io.modelcontextprotocol/grouping")
	res, err := c.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Resources) != 0 {
		t.Errorf("resources/list = %+v", res.Resources)
	}
}

func readText(t *testing.T, c *client, uri string) string {
	t.Helper()
	read, err := c.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("resources/read %s: %v", uri, err)
	}
	return read.Contents[0].Text
}

// TestSkillsOfALimitedViewAreItsOwn: skills are served from the caller's
// own part of the catalog: a view limited to one group lists, gets and
// reads that group's skill alone, and another group's SKILL.md is not
// found there; the whole catalog serves both (the control).
func TestSkillsOfALimitedViewAreItsOwn(t *testing.T) {
	gh, mem := catalogtest.Tool("a"), catalogtest.Tool("b")
	gh.Source, mem.Source = "gh", "mem"
	g := specGateway(t, catalog.Spec{Tools: []*catalog.Tool{gh, mem}, Groups: []catalog.GroupSpec{
		{ID: "code", Description: "Code", Members: catalog.Members{Sources: []string{"gh"}}},
		{ID: "notes", Description: "Notes", Members: catalog.Members{Sources: []string{"mem"}}},
	}}, &gateway.Options{Mode: expose.Flat})
	limited, err := g.LimitedHandler([]string{"code"}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := g.HTTPHandler(nil)
	if err != nil {
		t.Fatal(err)
	}
	skillsOf := func(h http.Handler) (*mcp.ClientSession, []string) {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		c := mcp.NewClient(&mcp.Implementation{Name: "skills-client"}, &mcp.ClientOptions{
			Capabilities: &mcp.ClientCapabilities{Extensions: map[string]any{"io.modelcontextprotocol/skills": map[string]any{}}}})
		if err := mcp.AddSendingCustomMethod[*skillListParams, *skillListResult](c, "skills/list"); err != nil {
			t.Fatal(err)
		}
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		res, err := mcp.CallCustomMethod[*skillListParams, *skillListResult](context.Background(), cs, "skills/list", &skillListParams{})
		if err != nil {
			t.Fatal(err)
		}
		var uris []string
		for _, s := range res.Skills {
			uris = append(uris, s.URI)
		}
		slices.Sort(uris)
		return cs, uris
	}
	if _, all := skillsOf(whole); strings.Join(all, ",") != "skill://code/SKILL.md,skill://notes/SKILL.md" {
		t.Fatalf("the whole catalog's skills: %v", all)
	}
	cs, got := skillsOf(limited)
	if strings.Join(got, ",") != "skill://code/SKILL.md" {
		t.Errorf("a view limited to code lists skills %v, want code's alone", got)
	}
	if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "skill://notes/SKILL.md"}); err == nil {
		t.Error("a view limited to code read notes' SKILL.md")
	}
	if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "skill://code/SKILL.md"}); err != nil {
		t.Errorf("a view limited to code cannot read its own SKILL.md: %v", err)
	}
}
