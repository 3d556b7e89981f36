package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold"
	"github.com/toolfold/toolfold/internal/demo"
)

// goldenSandbox keeps the sandbox path, which the files group's
// instructions mention, the same on every machine.
const goldenSandbox = "/tmp/toolfold-golden-sandbox"

// inProcess serves the demo with opts to one in-memory client.
func inProcess(t *testing.T, opts toolfold.Options, clientName string) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	srv := demo.New(&demo.Options{Server: opts, SandboxDir: goldenSandbox})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, clientName)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: clientName}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func listJSON(t *testing.T, cs *mcp.ClientSession) []byte {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.MarshalIndent(res.Tools, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

// TestGoldenToolLists snapshots every exposed tools/list of the demo: each
// mode, and the groups mode before and after unfolding in both expositions.
func TestGoldenToolLists(t *testing.T) {
	roots := []string{"files", "json", "math", "notes", "text", "time"}
	tests := []struct {
		file   string
		opts   toolfold.Options
		enable []string
	}{
		{file: "flat.json", opts: toolfold.Options{Mode: toolfold.ModeFlat}},
		{file: "grouped.json", opts: toolfold.Options{Mode: toolfold.ModeGrouped}},
		{file: "search.json", opts: toolfold.Options{Mode: toolfold.ModeSearch}},
		{file: "groups-initial.json", opts: toolfold.Options{Mode: toolfold.ModeGroups}},
		{file: "groups-unfolded-flat.json", opts: toolfold.Options{Mode: toolfold.ModeGroups}, enable: append(roots, "files.search", "text.encode")},
		{file: "groups-unfolded-grouped.json", opts: toolfold.Options{Mode: toolfold.ModeGroups, Exposition: toolfold.ExpositionGrouped}, enable: append(roots, "files.search", "text.encode")},
		{file: "groups-maxtools.json", opts: toolfold.Options{Mode: toolfold.ModeGroups, MaxTools: 12, ResetTools: true}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			cs := inProcess(t, tt.opts, "golden")
			if len(tt.enable) > 0 {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "enable_tools", Arguments: map[string]any{"groups": tt.enable}})
				if err != nil || res.IsError {
					t.Fatalf("enable_tools: %v %v", err, res)
				}
			}
			golden(t, "tools/"+tt.file, listJSON(t, cs))
		})
	}
}

// TestGoldenGuidance snapshots what guidance tells a model, per topic.
func TestGoldenGuidance(t *testing.T) {
	cs := inProcess(t, toolfold.Options{Mode: toolfold.ModeSearch}, "golden")
	topics := []struct {
		file string
		args map[string]any
	}{
		{"overview.md", map[string]any{}},
		{"groups.md", map[string]any{"topic": "groups"}},
		{"group-files.md", map[string]any{"topic": "files"}},
		{"tool-put_note.md", map[string]any{"topic": "tool", "tool_name": "put_note"}},
	}
	for _, tt := range topics {
		t.Run(tt.file, func(t *testing.T) {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "guidance", Arguments: tt.args})
			if err != nil || res.IsError {
				t.Fatalf("guidance: %v %v", err, res)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			golden(t, "guidance/"+tt.file, []byte(fmt.Sprintln(text)))
		})
	}
}

// TestGoldenFindAnswers snapshots what find_tools tells a model when tools
// matched (a signature per tool), when nothing matched, when a call has no
// query and when it brings more phrasings than it ranks: each teaches the
// query that works.
func TestGoldenFindAnswers(t *testing.T) {
	cs := inProcess(t, toolfold.Options{Mode: toolfold.ModeSearch}, "golden")
	tests := []struct {
		file    string
		args    map[string]any
		isError bool
	}{
		{"find-nothing-matched.txt", map[string]any{"query": "zzzz qqqq"}, false},
		{"find-store-note.txt", map[string]any{"query": "store note", "queries": []string{"remember a fact"}}, false},
		{"find-convert-units.txt", map[string]any{"query": "convert miles to kilometres"}, false},
		{"find-no-query.txt", map[string]any{"query": " ", "queries": []string{""}}, true},
		{"find-too-many-phrasings.txt", map[string]any{"query": "store note", "queries": []string{"save note", "remember fact", "keep text"}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "find_tools", Arguments: tt.args})
			if err != nil || res.IsError != tt.isError {
				t.Fatalf("find_tools: %v %+v, want isError %v", err, res, tt.isError)
			}
			// The text block is what a model reads: prose, with each
			// tool's signature to call it by.
			text := res.Content[0].(*mcp.TextContent).Text
			golden(t, "find/"+tt.file, []byte(fmt.Sprintln(text)))
		})
	}
}
