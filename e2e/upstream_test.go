package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// nodeServer returns an npm MCP server's binary from e2e/node, or skips
// (fails where node is required).
func nodeServer(t *testing.T, name string) string {
	t.Helper()
	requireNode(t)
	bin, err := filepath.Abs(filepath.Join("node", "node_modules", ".bin", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("TOOLFOLD_REQUIRE_NODE") == "1" {
			t.Fatalf("%s is missing: run npm ci --prefix e2e/node", bin)
		}
		t.Skipf("skipping: %s is missing", bin)
	}
	return bin
}

// writeConfig writes a toolfold.json and returns its path.
func writeConfig(t *testing.T, cfg map[string]any) string {
	t.Helper()
	raw, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "toolfold.json")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// referenceServers configures the official reference servers from npm.
func referenceServers(t *testing.T) (cfg map[string]any, files string) {
	files = t.TempDir()
	return map[string]any{
		"mcpServers": map[string]any{
			"everything": map[string]any{"command": nodeServer(t, "mcp-server-everything")},
			"memory": map[string]any{"command": nodeServer(t, "mcp-server-memory"),
				"env": map[string]any{"MEMORY_FILE_PATH": filepath.Join(t.TempDir(), "memory.jsonl")}},
			"files": map[string]any{"command": nodeServer(t, "mcp-server-filesystem"), "args": []string{files}},
		},
		// A server of up to one and a half times the target size stays
		// whole; at 8, the filesystem server's 14 tools and everything's 15
		// are split into derived groups, which the tests reach.
		"disclosure": map[string]any{"autoGroups": map[string]any{"size": 8}},
	}, files
}

// TestReferenceServersThroughTheGateway replaces a client's mcpServers
// block with toolfold in front of the same servers: everything still works,
// folded.
func TestReferenceServersThroughTheGateway(t *testing.T) {
	cfg, files := referenceServers(t)
	path := writeConfig(t, cfg)
	s := stdioSessionEnv(t, "e2e-go", []string{"TOOLFOLD_CACHE_DIR=" + t.TempDir()}, "--config", path, "--mode", "groups")
	if got := s.names(); got != "call_tool,disable_tools,enable_tools,find_tools" {
		t.Fatalf("initial list = %q: nothing of the servers should be listed before it is enabled", got)
	}
	s.mustCall("enable_tools", map[string]any{"groups": []string{"everything", "memory", "files"}})
	// The filesystem server's 14 tools are more than a group holds at the
	// size referenceServers sets (disclosure.autoGroups): its file tools sit in the derived
	// group files.file, which exists once the server's tools are known.
	// Its arrival changes enable_tools' list of groups, so each try waits
	// for the next list_changed.
	for {
		isErr, text := s.callData("enable_tools", map[string]any{"groups": []string{"files.file"}})
		// Enabling files, a parent with no tools of its own, may have
		// unfolded files.file already.
		if (!isErr && strings.Contains(text, `"errors":[]`)) || strings.Contains(text, `"already_enabled"`) {
			break
		}
		if !strings.Contains(text, "unknown_group") {
			t.Fatalf("enable files.file: %s", text)
		}
		select {
		case <-s.changed:
		case <-time.After(30 * time.Second):
			t.Fatalf("files.file never appeared: %s", text)
		}
	}
	// The servers' tools join as each server finishes starting, each time
	// with a list_changed (the enabling's own came before enable_tools
	// returned). Re-read the list until every server's tools are there.
	wanted := []string{"everything__get-sum", "memory__create_entities", "files__write_file"}
	for {
		names := s.names()
		if !slices.ContainsFunc(wanted, func(w string) bool { return !strings.Contains(names, w) }) {
			break
		}
		select {
		case <-s.changed:
		case <-time.After(30 * time.Second):
			t.Fatalf("no list_changed brought every server's tools: %s", names)
		}
	}
	if text := s.mustCall("everything__get-sum", map[string]any{"a": 19, "b": 23}); !strings.Contains(text, "42") {
		t.Errorf("get-sum = %s", text)
	}
	s.mustCall("memory__create_entities", map[string]any{"entities": []any{map[string]any{"name": "Alice", "entityType": "person", "observations": []string{"works at Acme"}}}})
	if text := s.mustCall("memory__read_graph", map[string]any{}); !strings.Contains(text, "works at Acme") {
		t.Errorf("read_graph = %s", text)
	}
	target := filepath.Join(files, "note.txt")
	s.mustCall("files__write_file", map[string]any{"path": target, "content": "written through toolfold"})
	if text := s.mustCall("files__read_text_file", map[string]any{"path": target}); !strings.Contains(text, "written through toolfold") {
		t.Errorf("read_text_file = %s", text)
	}
	if raw, _ := os.ReadFile(target); string(raw) != "written through toolfold" {
		t.Errorf("the file on disk holds %q", raw)
	}
	// Bad arguments of a flat tool are refused by the server itself, in its
	// own words: toolfold does not check them a second time.
	if isErr, text := s.call("everything__get-sum", map[string]any{"a": "x"}); !isErr || !strings.Contains(text, "expected number, received string at a") {
		t.Errorf("bad arguments: isError=%v %s", isErr, text)
	}
}

// startEverythingHTTP runs server-everything as a remote streamable HTTP
// server.
func startEverythingHTTP(t *testing.T) string {
	t.Helper()
	bin := nodeServer(t, "mcp-server-everything")
	_, addr := startCmdOnFreeAddr(t, func(addr string) *exec.Cmd {
		_, port, _ := net.SplitHostPort(addr)
		cmd := exec.Command(bin, "streamableHttp")
		cmd.Env = append(os.Environ(), "PORT="+port)
		return cmd
	})
	return fmt.Sprintf("http://%s/mcp", addr)
}

func TestRemoteUpstreamOverHTTP(t *testing.T) {
	url := startEverythingHTTP(t)
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{"remote": map[string]any{"url": url}}})
	s := stdioSessionEnv(t, "e2e-go", []string{"TOOLFOLD_CACHE_DIR=" + t.TempDir()}, "--config", path, "--mode", "flat")
	if text := s.mustCall("remote__get-sum", map[string]any{"a": 1, "b": 2}); !strings.Contains(text, "3") {
		t.Errorf("remote get-sum = %s", text)
	}
}

// TestBrokenUpstreamsLeaveTheOthersServing: one server exits at start with
// a reason on stderr, one never answers; the third serves, and the reasons
// reach the user.
func TestBrokenUpstreamsLeaveTheOthersServing(t *testing.T) {
	cfg := map[string]any{"mcpServers": map[string]any{
		"memory": map[string]any{"command": nodeServer(t, "mcp-server-memory"),
			"env": map[string]any{"MEMORY_FILE_PATH": filepath.Join(t.TempDir(), "m.jsonl")}},
		"broken": map[string]any{"command": "sh", "args": []string{"-c", "echo 'GITHUB_TOKEN is not set' >&2; exit 3"}},
		// It never answers: its start fails after its startTimeout.
		"silent": map[string]any{"command": "sh", "args": []string{"-c", "sleep 600"}, "timeout": "2s", "startTimeout": "3s"},
	}}
	path := writeConfig(t, cfg)
	cmd := exec.Command(binary, "tools", "--config", path)
	cmd.Env = append(os.Environ(), "TOOLFOLD_CACHE_DIR="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("toolfold tools: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "memory__read_graph") {
		t.Errorf("the working server's tools are missing:\n%s", stdout.String())
	}
	if !strings.Contains(stderr.String(), "GITHUB_TOKEN is not set") || !strings.Contains(stderr.String(), `"broken"`) {
		t.Errorf("the broken server's reason is not shown:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), `"silent"`) {
		t.Errorf("the silent server is not reported:\n%s", stderr.String())
	}

	// Serving: the working server answers while the others are down.
	for _, protocol := range []string{statefulProtocol, "2026-07-28"} {
		s := stdioSessionAt(t, "e2e-go", protocol, []string{"TOOLFOLD_CACHE_DIR=" + t.TempDir()}, "--config", path, "--mode", "flat")
		if text := s.mustCall("memory__read_graph", map[string]any{}); !strings.Contains(text, "entities") {
			t.Errorf("%s: read_graph = %s", protocol, text)
		}
	}
}

// TestPromptsResourcesAndCompletionPassThrough uses server-everything's
// prompts, resources and completion through toolfold.
func TestPromptsResourcesAndCompletionPassThrough(t *testing.T) {
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": nodeServer(t, "mcp-server-everything")},
	}})
	s := stdioSessionEnv(t, "e2e-go", []string{"TOOLFOLD_CACHE_DIR=" + t.TempDir()}, "--config", path)
	ctx := context.Background()
	prompts, err := s.ListPrompts(ctx, nil)
	if err != nil || len(prompts.Prompts) == 0 {
		t.Fatalf("prompts/list: %v %+v", err, prompts)
	}
	name := prompts.Prompts[0].Name
	if !strings.HasPrefix(name, "everything__") {
		t.Errorf("prompt %q is not namespaced like the server's tools", name)
	}
	var args map[string]string
	for _, p := range prompts.Prompts {
		if len(p.Arguments) == 0 {
			name, args = p.Name, nil
			break
		}
	}
	got, err := s.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
	if err != nil || len(got.Messages) == 0 {
		t.Errorf("prompts/get %s: %v %+v", name, err, got)
	}
	resources, err := s.ListResources(ctx, nil)
	if err != nil || len(resources.Resources) == 0 {
		t.Fatalf("resources/list: %v %+v", err, resources)
	}
	uri := resources.Resources[0].URI
	read, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil || len(read.Contents) == 0 || read.Contents[0].URI != uri {
		t.Errorf("resources/read %s: %v %+v", uri, err, read)
	}
	templates, err := s.ListResourceTemplates(ctx, nil)
	if err != nil || len(templates.ResourceTemplates) == 0 {
		t.Errorf("resources/templates/list: %v %+v", err, templates)
	}
	if _, err := s.GetPrompt(ctx, &mcp.GetPromptParams{Name: "nope"}); err == nil || !strings.Contains(err.Error(), `there is no prompt "nope"`) {
		t.Errorf("unknown prompt: %v", err)
	}
}
