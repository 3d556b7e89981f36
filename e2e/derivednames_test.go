package e2e

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestConfigNamesDerivedGroups: the filesystem server's 14 tools split (at a
// group size of 8) into
// derived groups (files.directory, files.file), which a config names in
// initialGroups and in a token's groups without declaring them. Through
// the binary: check finds a misspelled one in the cached tool lists, and
// serve gives the token exactly its derived group, on /mcp and on
// /mcp/<group>.
func TestConfigNamesDerivedGroups(t *testing.T) {
	files := t.TempDir()
	t.Setenv("TOOLFOLD_CACHE_DIR", t.TempDir())
	config := func(tokenGroup string) string {
		return writeConfig(t, map[string]any{
			"mcpServers": map[string]any{"files": map[string]any{"command": nodeServer(t, "mcp-server-filesystem"), "args": []string{files}}},
			"disclosure": map[string]any{"initialGroups": []string{"files.file"}, "autoGroups": map[string]any{"size": 8}},
			"http": map[string]any{"auth": map[string]any{"tokens": []any{
				map[string]any{"token": "full-secret"},
				map[string]any{"token": "dir-secret", "groups": []string{tokenGroup}},
			}}},
		})
	}
	good, misspelled := config("files.directory"), config("files.directroy")
	run := func(args ...string) (code int, stdout, stderr string) {
		t.Helper()
		cmd := exec.Command(binary, args...)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("toolfold %v: %v", args, err)
		}
		return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
	}

	// Before the server's tools are known, no name under its group can be
	// told wrong: check says what it could not check.
	if code, out, errOut := run("check", "--config", misspelled); code != 0 || !strings.Contains(out, "not known yet") {
		t.Errorf("check before discovery: exit %d\n%s%s", code, out, errOut)
	}
	// toolfold tools starts the server and caches its list.
	if code, out, errOut := run("tools", "--config", good); code != 0 || !strings.Contains(out, "files__list_allowed_directories") {
		t.Fatalf("toolfold tools: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := run("check", "--config", good); code != 0 {
		t.Errorf("check of derived names that exist: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := run("check", "--config", misspelled)
	if code != 1 || !strings.Contains(out, `http.auth.tokens[1].groups[0]: group "files.directroy" does not exist`) || !strings.Contains(out, `did you mean "files.directory"?`) {
		t.Errorf("check of a misspelled derived name: exit %d, want 1 naming the nearest group\n%s%s", code, out, errOut)
	}
	// The commands that show the catalog show it, with the problem as a
	// warning, so the user sees the names to choose from.
	if code, out, errOut := run("groups", "--config", misspelled); code != 0 || !strings.Contains(out, "files.directory") || !strings.Contains(errOut, `did you mean "files.directory"?`) {
		t.Errorf("groups with a misspelled derived name: exit %d, want 0 with a warning\n%s%s", code, out, errOut)
	}
	// serve refuses it, with the same words.
	if code, _, errOut := run("serve", "--config", misspelled, "--http", freeAddr(t)); code != 1 || !strings.Contains(errOut, `did you mean "files.directory"?`) {
		t.Errorf("serve with a misspelled derived name: exit %d\n%s", code, errOut)
	}

	base := startHTTP(t, "--config", good, "--mode", "groups")
	connect := func(path, token string) *mcp.ClientSession {
		t.Helper()
		transport := &mcp.StreamableClientTransport{Endpoint: base + path, HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e"}, nil).Connect(context.Background(), transport, &mcp.ClientSessionOptions{ProtocolVersion: statefulProtocol})
		if err != nil {
			t.Fatalf("%s with %s: %v", path, token, err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	const meta = "call_tool,disable_tools,enable_tools,find_tools"
	const directory = "files__create_directory,files__directory_tree,files__list_allowed_directories,files__list_directory,files__list_directory_with_sizes"

	// The initial group is derived: a new view shows its tools only.
	full := toolNames(t, connect("/mcp", "full-secret"))
	if !strings.Contains(full, "files__read_text_file") || strings.Contains(full, "files__create_directory") {
		t.Errorf("a new view should show files.file's tools and not files.directory's: %s", full)
	}

	// The limited token reaches files.directory and nothing else.
	limited := connect("/mcp", "dir-secret")
	if got := toolNames(t, limited); got != meta {
		t.Errorf("the limited token's first list = %q, want the meta-tools (files.file is outside its reach)", got)
	}
	call := func(cs *mcp.ClientSession, name string, args map[string]any) (bool, string) {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res.IsError, resultData(res)
	}
	if _, text := call(limited, "enable_tools", map[string]any{"groups": []string{"files.file"}}); !strings.Contains(text, `"reason":"unknown_group"`) {
		t.Errorf("the limited token enabled files.file: %s", text)
	}
	if isErr, text := call(limited, "enable_tools", map[string]any{"groups": []string{"files.directory"}}); isErr || !strings.Contains(text, `"errors":[]`) {
		t.Fatalf("the limited token could not enable files.directory: %s", text)
	}
	if got := toolNames(t, limited); got != sortedJoin(directory, meta) {
		t.Errorf("after enabling files.directory the limited token lists %q", got)
	}
	if isErr, text := call(limited, "files__list_allowed_directories", map[string]any{}); isErr || !strings.Contains(text, files) {
		t.Errorf("list_allowed_directories through the limited token: %s", text)
	}
	if isErr, _ := call(limited, "files__read_text_file", map[string]any{"path": files}); !isErr {
		t.Error("the limited token called a tool of files.file")
	}

	// /mcp/<group>: its derived group, flat; not the other one.
	if got := toolNames(t, connect("/mcp/files.directory", "dir-secret")); got != directory {
		t.Errorf("/mcp/files.directory lists %q, want %q", got, directory)
	}
	if code, body := get(t, base+"/mcp/files.file", map[string]string{"Authorization": "Bearer dir-secret"}); code != http.StatusNotFound && code != http.StatusForbidden {
		t.Errorf("/mcp/files.file answered the limited token %d: %s", code, body)
	}
}

// sortedJoin joins comma lists into one sorted list.
func sortedJoin(lists ...string) string {
	var all []string
	for _, l := range lists {
		all = append(all, strings.Split(l, ",")...)
	}
	slices.Sort(all)
	return strings.Join(all, ",")
}
