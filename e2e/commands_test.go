package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// gitConfig declares git's everyday actions on one repository.
const gitConfig = `{
  "commands": {
    "git": {
      "command": "git",
      "description": "Version control of the project repository",
      "cwd": %q,
      "env": {"GIT_AUTHOR_NAME": "Agent", "GIT_AUTHOR_EMAIL": "agent@example.invalid",
              "GIT_COMMITTER_NAME": "Agent", "GIT_COMMITTER_EMAIL": "agent@example.invalid", "GIT_PAGER": "cat"},
      "timeout": "20s",
      "actions": {
        "init":   {"description": "Create the repository", "argv": ["init", "-q", "-b", "main"]},
        "add":    {"description": "Stage files", "argv": ["add"], "params": {"paths": {"type": "array", "items": {"type": "string"}, "positional": true}}, "required": ["paths"]},
        "commit": {"description": "Record staged changes", "argv": ["commit", "-q"], "params": {"message": {"type": "string", "flag": "--message"}}, "required": ["message"]},
        "log":    {"description": "Show recent commits", "argv": ["log", "--no-color"], "params": {"max_count": {"type": "integer", "flag": "--max-count"}, "oneline": {"type": "boolean", "flag": "--oneline"}}, "readOnly": true},
        "status": {"description": "Show the working tree status", "argv": ["status", "--short"], "readOnly": true},
        "diff":   {"description": "Show unstaged changes", "argv": ["diff", "--no-color"], "params": {"paths": {"type": "array", "items": {"type": "string"}, "positional": true}}, "readOnly": true}
      }
    }
  },
  "disclosure": {"mode": "groups"},
  "exposition": {"default": "grouped"}
}`

func requireGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("skipping: git is not installed")
	}
}

// TestGitThroughTheGateway drives git, folded into one grouped tool, with
// the Go SDK client through the built binary, on a fresh repository.
func TestGitThroughTheGateway(t *testing.T) {
	requireGit(t)
	repo := t.TempDir()
	cfgDir := t.TempDir()
	cfg := filepath.Join(cfgDir, "toolfold.json")
	if err := os.WriteFile(cfg, []byte(strings.Replace(gitConfig, "%q", strings.ReplaceAll(jsonString(repo), "%", "%%"), 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	s := stdioSession(t, "e2e-go", "--config", cfg)
	if got := s.names(); got != "call_tool,disable_tools,enable_tools,find_tools" {
		t.Fatalf("initial list = %q", got)
	}
	s.mustCall("enable_tools", map[string]any{"groups": []string{"git"}})
	s.waitChanged()
	if got := s.names(); got != "call_tool,disable_tools,enable_tools,find_tools,git" {
		t.Fatalf("git should be one grouped tool: %q", got)
	}
	git := func(action string, args map[string]any) string {
		t.Helper()
		if args == nil {
			args = map[string]any{}
		}
		args["action"] = action
		return s.mustCall("git", args)
	}
	git("init", nil)
	if err := os.WriteFile(filepath.Join(repo, "hello.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := git("status", nil); !strings.Contains(out, "?? hello.txt") {
		t.Errorf("status = %q", out)
	}
	git("add", map[string]any{"paths": []string{"hello.txt"}})
	git("commit", map[string]any{"message": "Say hello"})
	if out := git("log", map[string]any{"oneline": true, "max_count": 5}); !strings.Contains(out, "Say hello") {
		t.Errorf("log = %q", out)
	}
	if err := os.WriteFile(filepath.Join(repo, "hello.txt"), []byte("hello, world\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := git("diff", nil); !strings.Contains(out, "+hello, world") {
		t.Errorf("diff = %q", out)
	}

	// Hostile input: an option smuggled as a path stays a path, after "--".
	isErr, out := s.call("git", map[string]any{"action": "diff", "paths": []string{"--output=" + filepath.Join(repo, "pwned")}})
	if _, err := os.Stat(filepath.Join(repo, "pwned")); err == nil {
		t.Fatal("an option smuggled into a positional was obeyed")
	}
	t.Logf("smuggled option: isError=%v %s", isErr, out)
	// An unknown parameter never reaches the program.
	isErr, out = s.call("git", map[string]any{"action": "log", "upload-pack": "touch /tmp/x"})
	if !isErr || !strings.Contains(out, "upload-pack") {
		t.Errorf("unknown parameter: isError=%v %s", isErr, out)
	}
	// A failing run is a tool error with the exit code and stderr; the
	// gateway stays up for the next call.
	isErr, out = s.call("git", map[string]any{"action": "add", "paths": []string{"missing.txt"}})
	if !isErr || !strings.Contains(out, "exit") || !strings.Contains(out, "missing.txt") {
		t.Errorf("failing git add: isError=%v %s", isErr, out)
	}
	if out := git("status", nil); !strings.Contains(out, "M hello.txt") {
		t.Errorf("status after failures = %q", out)
	}
}

// TestGitDiscoveredFromHelp adds git with nothing but "discover": "help"
// and checks what the model would see and that a discovered action runs.
func TestGitDiscoveredFromHelp(t *testing.T) {
	requireGit(t)
	repo := t.TempDir()
	if out, err := exec.Command("git", "-C", repo, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	cfg := filepath.Join(t.TempDir(), "toolfold.json")
	os.WriteFile(cfg, []byte(`{"commands": {"git": {"command": "git", "discover": "help", "cwd": `+jsonString(repo)+`, "include": ["status", "log", "diff", "remote *"]}}}`), 0o644)
	cmd := exec.Command(binary, "tools", "--config", cfg, "--json")
	cmd.Env = append(os.Environ(), "TOOLFOLD_CACHE_DIR="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("toolfold tools: %v\n%s", err, out)
	}
	var rows []struct {
		Name   string   `json:"name"`
		Groups []string `json:"groups"`
	}
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	names := map[string]bool{}
	for _, r := range rows {
		names[r.Name] = true
	}
	for _, want := range []string{"git__status", "git__log", "git__diff", "git__remote_add"} {
		if !names[want] {
			t.Errorf("discovery lacks %s; got %v", want, names)
		}
	}
	if names["git__push"] || names["git__commit"] {
		t.Errorf("include globs were not applied: %v", names)
	}

	c := mcp.NewClient(&mcp.Implementation{Name: "e2e"}, nil)
	serve := exec.Command(binary, "serve", "--config", cfg, "--mode", "flat")
	serve.Env = cmd.Env
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: serve}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "git__status", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("git__status: %v %+v", err, res)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
