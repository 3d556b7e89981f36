package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A client of the skills extension (SEP-2640), written from its text: it
// lists the skills, reads each SKILL.md, checks it against the entry's
// digest and size, and resolves every tool name the frontmatter's
// metadata["io.modelcontextprotocol/tools"] gives against its own
// tools/list.
type (
	sepListParams struct {
		mcp.ParamsBase
		Cursor string `json:"cursor,omitempty"`
	}
	sepSkill struct {
		URI         string         `json:"uri"`
		Frontmatter map[string]any `json:"frontmatter"`
		Resources   []struct {
			URI    string `json:"uri"`
			Digest string `json:"digest"`
			Size   int    `json:"size"`
		} `json:"resources"`
	}
	sepListResult struct {
		mcp.ResultBase
		Skills     []sepSkill `json:"skills"`
		NextCursor string     `json:"nextCursor,omitempty"`
		TTLMs      int        `json:"ttlMs"`
		CacheScope string     `json:"cacheScope"`
	}
)

// TestSkillsClientEndToEnd: over stdio and HTTP, on both protocols, a
// client that declares the grouping and skills extensions reads every
// skill of the demo, and every tool its frontmatter names is in its
// tools/list and callable.
func TestSkillsClientEndToEnd(t *testing.T) {
	base := startHTTP(t)
	for _, transport := range []string{"stdio", "http"} {
		for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
			t.Run(transport+"/"+protocol, func(t *testing.T) {
				caps := &mcp.ClientCapabilities{Extensions: map[string]any{
					"io.modelcontextprotocol/grouping": map[string]any{}, "io.modelcontextprotocol/skills": map[string]any{},
				}}
				c := mcp.NewClient(&mcp.Implementation{Name: "sep-2640-client", Version: "1.0.0"}, &mcp.ClientOptions{Capabilities: caps})
				if err := mcp.AddSendingCustomMethod[*sepListParams, *sepListResult](c, "skills/list"); err != nil {
					t.Fatal(err)
				}
				var tr mcp.Transport = &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}
				if transport == "stdio" {
					cmd := exec.Command(binary, serveArgs()...)
					cmd.Env = append(cmd.Environ(), "TOOLFOLD_DEMO_SANDBOX="+t.TempDir())
					tr = &mcp.CommandTransport{Command: cmd}
				}
				cs, err := c.Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				if cs.InitializeResult().Capabilities.Extensions["io.modelcontextprotocol/skills"] == nil {
					t.Fatal("the server does not declare the skills extension")
				}
				listed := map[string]bool{}
				for tool, err := range cs.Tools(context.Background(), nil) {
					if err != nil {
						t.Fatal(err)
					}
					listed[tool.Name] = true
				}
				var skills []sepSkill
				cursor := ""
				for {
					page, err := mcp.CallCustomMethod[*sepListParams, *sepListResult](context.Background(), cs, "skills/list", &sepListParams{Cursor: cursor})
					if err != nil {
						t.Fatalf("skills/list: %v", err)
					}
					if page.TTLMs <= 0 || page.CacheScope == "" {
						t.Errorf("skills/list carries no caching hints: %d %q", page.TTLMs, page.CacheScope)
					}
					skills = append(skills, page.Skills...)
					if cursor = page.NextCursor; cursor == "" {
						break
					}
				}
				if len(skills) != 8 {
					t.Errorf("%d skills, want one per demo group (8)", len(skills))
				}
				resolved := 0
				for _, sk := range skills {
					read, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: sk.URI})
					if err != nil || len(read.Contents) != 1 {
						t.Fatalf("resources/read %s: %v", sk.URI, err)
					}
					text := read.Contents[0].Text
					sum := sha256.Sum256([]byte(text))
					if len(sk.Resources) == 0 || sk.Resources[0].Digest != "sha256:"+hex.EncodeToString(sum[:]) || sk.Resources[0].Size != len(text) {
						t.Errorf("%s does not match its entry", sk.URI)
					}
					if name, _ := sk.Frontmatter["name"].(string); !strings.HasPrefix(text, "---\nname: \""+name+"\"\n") || !strings.HasSuffix(sk.URI, "/"+name+"/SKILL.md") {
						t.Errorf("%s: frontmatter name %q", sk.URI, name)
					}
					meta, _ := sk.Frontmatter["metadata"].(map[string]any)
					tools, _ := meta["io.modelcontextprotocol/tools"].(string)
					if tools == "" {
						t.Errorf("%s names no tools", sk.URI)
					}
					for _, name := range strings.Fields(tools) {
						if !listed[name] {
							t.Errorf("%s names %s, which tools/list lacks", sk.URI, name)
						}
						resolved++
					}
				}
				if resolved < len(listed)-1 { // every tool but the ungrouped one is in some skill
					t.Errorf("the skills name %d tools, tools/list has %d", resolved, len(listed))
				}
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "base64_encode", Arguments: map[string]any{"text": "hi"}})
				if err != nil || res.IsError {
					t.Errorf("calling a tool a skill names: %v %+v", err, res)
				}
			})
		}
	}
}
