package gateway_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/logtest"
	"github.com/toolfold/toolfold/internal/view"
)

// TestPromptsAndResourcesAreAudited: a prompt got and a resource read are
// audit lines, as a tool call is, naming the caller, what was read, its
// source and the outcome; a name or URI no source serves is refused and
// logged as "(unknown)", so a client cannot write what it likes into the
// log. Each request is one line, in both protocol eras.
func TestPromptsAndResourcesAreAudited(t *testing.T) {
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(protocol, func(t *testing.T) {
			logs := &logtest.Buffer{}
			space, err := view.NewSpace(sourcedCatalog(t, false), nil)
			if err != nil {
				t.Fatal(err)
			}
			g, err := gateway.New(space, &gateway.Options{
				Extras: &sourcedExtras{sources: []string{"alpha", "beta"}},
				Logger: logs.Logger(slog.LevelInfo),
			})
			if err != nil {
				t.Fatal(err)
			}
			cs := connectAt(t, g, "plain", protocol, nil)
			ctx := context.Background()
			if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "alpha-p"}); err != nil {
				t.Fatal(err)
			}
			if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "res://beta"}); err != nil {
				t.Fatal(err)
			}
			if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "evil://made-up"}); err == nil {
				t.Fatal("a URI no source serves was read")
			}
			long := "res://alpha/" + strings.Repeat("é", 400) // 812 bytes
			if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: long}); err != nil {
				t.Fatal(err)
			}
			want := []string{
				`msg="prompt get" caller=anonymous prompt=alpha-p source=alpha outcome=ok`,
				`msg="resource read" caller=anonymous uri=res://beta source=beta outcome=ok`,
				`msg="resource read" caller=anonymous uri=(unknown) source="" outcome=refused`,
				// Cut to 512 bytes on a character's boundary: 12 + 250×2.
				`msg="resource read" caller=anonymous uri=` + long[:512] + `… source=alpha/`,
			}
			var got []string
			for _, l := range strings.Split(logs.String(), "\n") {
				if strings.Contains(l, `msg="prompt get"`) || strings.Contains(l, `msg="resource read"`) {
					got = append(got, l)
				}
			}
			if len(got) != len(want) {
				t.Fatalf("audit lines:\n%s\nwant %d", strings.Join(got, "\n"), len(want))
			}
			for i, w := range want {
				if !strings.Contains(got[i], w) {
					t.Errorf("line %d: %s\nwant it to contain %s", i, got[i], w)
				}
			}
			if strings.Contains(logs.String(), "made-up") {
				t.Errorf("a made-up URI reached the log:\n%s", logs.String())
			}
		})
	}
}
